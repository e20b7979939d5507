// Copyright 2026 The kubeforge Authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

// Package podset reconciles PodSets: a scalable set of identical pods run
// by a Deployment, with the pods' names in status.
package podset

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/admit"
	"github.com/kubeforge/kubeforge/internal/engine"
	"github.com/kubeforge/kubeforge/internal/workload"
)

// Types are the objects a PodSet's controller owns and reads: its
// Deployment, and the Deployment's ReplicaSets (their metadata) and their
// pods (mapped back by label; counted as the PodSet's by their
// controllers' UIDs, workload.DeploymentPods).
var Types = engine.Types{
	Owned: []client.Object{&appsv1.Deployment{}},
	// The status lists the Pods' names: a Pod's or a ReplicaSet's status
	// changes nothing in it.
	Read: []engine.Read{
		{Object: &corev1.Pod{}, OwnerLabel: appsv1alpha1.PodSetNameLabel, Concerns: engine.MembershipChanged, Keep: workload.PodFields},
		{Object: &appsv1.ReplicaSet{}, OwnerLabel: appsv1alpha1.PodSetNameLabel, Concerns: engine.MembershipChanged, Metadata: true},
	},
}

// Reconciler reconciles PodSets.
type Reconciler struct {
	Client client.Client
	Engine *engine.Engine
}

// +kubebuilder:rbac:groups=apps.kubeforge.io,resources=podsets,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps.kubeforge.io,resources=podsets/status,verbs=get;update;patch
// Owner references with blockOwnerDeletion need update on the finalizers subresource.
// +kubebuilder:rbac:groups=apps.kubeforge.io,resources=podsets/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=apps,resources=replicasets,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile brings one PodSet's Deployment to its spec and reports status.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ps := &appsv1alpha1.PodSet{}
	if err := r.Client.Get(ctx, req.NamespacedName, ps); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !ps.DeletionTimestamp.IsZero() {
		// The Deployment is owned: the garbage collector removes it.
		return ctrl.Result{}, nil
	}
	// The webhook's rules run here too, so a PodSet admitted without the
	// webhook still gets a clear condition instead of a broken Deployment.
	// Builders and status read the defaulted copy; only status is written.
	ps, invalid := admit.Prepare(admit.PodSet, r.Engine.Proof, ps)
	before := ps.DeepCopy()

	o, reconcileErr := r.reconcile(ctx, ps, invalid)
	computeStatus(ps, o)
	// While Pods come and go, their names and counts are written about
	// once a second; every change of a condition at once.
	wait, err := r.Engine.Progress.Patch(ctx, r.Client, before, ps, func(before, obj client.Object) bool {
		return progressOnly(before.(*appsv1alpha1.PodSet), obj.(*appsv1alpha1.PodSet))
	})
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("reporting PodSet status: %w", err)
	}
	if reconcileErr != nil {
		// Retried with controller-runtime's back-off, which writes what
		// was held back when it comes.
		return ctrl.Result{}, reconcileErr
	}
	return ctrl.Result{RequeueAfter: wait}, nil
}

// reconcile applies the desired objects and observes the children. The
// error it returns is for controller-runtime to back off on; the observed
// errors go into status.
func (r *Reconciler) reconcile(ctx context.Context, ps *appsv1alpha1.PodSet, invalid error) (observed, error) {
	var o observed
	if invalid != nil {
		o.invalid = invalid
		r.Engine.Invalid(ctx, ps, invalid)
		return o, nil
	}

	res, err := r.Engine.Apply(ctx, ps, DesiredObjects(ps), Types.Owned...)
	if err != nil {
		o.applyErr = err
		return o, fmt.Errorf("applying PodSet objects: %w", err)
	}

	// The Deployment as Apply left it: just created, the cache would not
	// have it yet, and the status would say so for one extra write.
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ps.Namespace, Name: ps.Name}}
	if res.LiveObject(r.Engine.Scheme, dep) {
		o.deployment = dep
	}

	// The pods are the Deployment's by their controllers' UIDs: its
	// labels are anyone's to put on a pod of their own.
	sets, pods := &metav1.PartialObjectMetadataList{}, &corev1.PodList{}
	sets.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("ReplicaSetList"))
	if err := r.Client.List(ctx, sets, client.InNamespace(ps.Namespace), client.MatchingLabels(SelectorLabels(ps))); err != nil {
		o.podsUnknown = true
		return o, fmt.Errorf("listing ReplicaSets: %w", err)
	}
	if err := r.Client.List(ctx, pods, client.InNamespace(ps.Namespace), client.MatchingLabels(SelectorLabels(ps))); err != nil {
		o.podsUnknown = true
		return o, fmt.Errorf("listing pods: %w", err)
	}
	o.pods = workload.DeploymentPods(pods.Items, sets.Items, o.deployment)
	return o, nil
}

// SetupWithManager registers the controller: PodSets and their Types.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return Types.Controller(mgr, r.Engine.Proof, "podset", &appsv1alpha1.PodSet{}).Complete(engine.Waits(r))
}
