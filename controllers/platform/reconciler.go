/*
Copyright 2026 The kubeforge Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package platform reconciles Platforms: a list of components, each run
// as a Deployment, StatefulSet, DaemonSet or CronJob with its Service,
// config and storage, created and upgraded in dependency order.
package platform

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/admit"
	"github.com/kubeforge/kubeforge/internal/conditions"
	"github.com/kubeforge/kubeforge/internal/engine"
	webhooks "github.com/kubeforge/kubeforge/webhooks/apps/v1alpha1"
)

// Reconciler reconciles Platforms.
type Reconciler struct {
	Client client.Client
	Engine *engine.Engine
}

// +kubebuilder:rbac:groups=apps.kubeforge.io,resources=platforms,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps.kubeforge.io,resources=platforms/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=apps.kubeforge.io,resources=platforms/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=deployments;statefulsets;daemonsets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=batch,resources=cronjobs,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=services;configmaps;persistentvolumeclaims,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// ownedLists are the kinds a Platform owns, for pruning.
var ownedLists = []client.ObjectList{
	&appsv1.DeploymentList{}, &appsv1.StatefulSetList{}, &appsv1.DaemonSetList{}, &batchv1.CronJobList{},
	&corev1.ServiceList{}, &corev1.ConfigMapList{}, &corev1.PersistentVolumeClaimList{},
}

// Reconcile brings one Platform's components to its spec, in dependency
// order, and reports each component.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	p := &appsv1alpha1.Platform{}
	if err := r.Client.Get(ctx, req.NamespacedName, p); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !p.DeletionTimestamp.IsZero() {
		// Everything is owned (but retained volumes): the garbage collector removes it.
		return ctrl.Result{}, nil
	}
	before := p.DeepCopy()
	o, reconcileErr := r.reconcile(ctx, p)
	computeStatus(p, o)
	if _, err := engine.PatchStatus(ctx, r.Client, before, p); err != nil {
		return ctrl.Result{}, fmt.Errorf("reporting Platform status: %w", err)
	}
	return ctrl.Result{}, reconcileErr
}

func (r *Reconciler) reconcile(ctx context.Context, p *appsv1alpha1.Platform) (observed, error) {
	log := logf.FromContext(ctx)
	var o observed
	spec := p.DeepCopy()
	webhooks.DefaultPlatform(spec)
	if errs := webhooks.ValidatePlatform(spec); len(errs) > 0 {
		o.invalid = admit.Invalid(appsv1alpha1.GroupVersion.WithKind("Platform").GroupKind(), p, errs)
		log.Info("Platform spec is invalid; waiting for a change", "error", o.invalid.Error())
		r.Engine.Warn(p, conditions.ReasonInvalidSpec, "Validate", "%s", o.invalid.Error())
		return o, nil
	}

	o.live = map[string]Live{}
	for i := range spec.Spec.Components {
		c := &spec.Spec.Components[i]
		obj, err := r.workload(ctx, spec, c)
		if err != nil {
			return o, err
		}
		o.live[c.Name] = LiveOf(obj)
	}
	steps, err := Plan(spec, o.live)
	if err != nil {
		o.invalid = err
		return o, nil
	}
	o.steps = steps

	var desired []client.Object
	for i, s := range steps {
		if !s.Deploy {
			continue
		}
		c := &spec.Spec.Components[i]
		if s.Upgrade {
			log.Info("Moving component to a new image", "component", c.Name, "image", s.Image)
			r.Engine.Event(p, "ComponentUpgrading", "Upgrade", "Moving %s from %s to %s", c.Name, o.live[c.Name].Image, s.Image)
		}
		desired = append(desired, ComponentObjects(spec, c, s.Image)...)
	}
	if _, err := r.Engine.Apply(ctx, p, desired, ownedLists...); err != nil {
		o.apply = err
		r.Engine.Warn(p, conditions.ReasonApplyFailed, "Apply", "%s", err.Error())
		return o, fmt.Errorf("applying Platform objects: %w", err)
	}
	return o, nil
}

// workload reads a component's workload from the cache; nil when it does
// not exist or is not this Platform's.
func (r *Reconciler) workload(ctx context.Context, p *appsv1alpha1.Platform, c *appsv1alpha1.PlatformComponent) (client.Object, error) {
	var obj client.Object
	switch workloadOf(c) {
	case appsv1alpha1.WorkloadStatefulSet:
		obj = &appsv1.StatefulSet{}
	case appsv1alpha1.WorkloadDaemonSet:
		obj = &appsv1.DaemonSet{}
	case appsv1alpha1.WorkloadCronJob:
		obj = &batchv1.CronJob{}
	default:
		obj = &appsv1.Deployment{}
	}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: p.Namespace, Name: ObjectName(p, c)}, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading the workload of %s: %w", c.Name, err)
	}
	if !metav1.IsControlledBy(obj, p) {
		return nil, nil // the engine refuses to take it over and says so
	}
	return obj, nil
}

// SetupWithManager registers the controller: Platforms and what they own.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("platform").
		// Every change, status included: a status write decided against a
		// cache that lagged behind our previous write is corrected when the
		// cache catches up. A reconcile with nothing to do writes nothing.
		For(&appsv1alpha1.Platform{}).
		Owns(&appsv1.Deployment{}).
		Owns(&appsv1.StatefulSet{}).
		Owns(&appsv1.DaemonSet{}).
		Owns(&batchv1.CronJob{}).
		Owns(&corev1.Service{}).
		Owns(&corev1.ConfigMap{}).
		Owns(&corev1.PersistentVolumeClaim{}).
		Complete(r)
}
