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

// Package balancer reconciles Balancers: an nginx proxy Deployment, its
// configuration, a front-end Service, and one Service per weighted backend.
package balancer

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	networkingv1alpha1 "github.com/kubeforge/kubeforge/api/networking/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/admit"
	"github.com/kubeforge/kubeforge/internal/conditions"
	"github.com/kubeforge/kubeforge/internal/engine"
	webhooks "github.com/kubeforge/kubeforge/webhooks/networking/v1alpha1"
)

// DefaultClusterDomain is the DNS domain of the cluster's Services.
const DefaultClusterDomain = "cluster.local"

// Reconciler reconciles Balancers.
type Reconciler struct {
	Client client.Client
	Engine *engine.Engine
	// ClusterDomain is the cluster's DNS domain; the proxy reaches the
	// backend Services by <service>.<namespace>.svc.<ClusterDomain>.
	ClusterDomain string
}

// +kubebuilder:rbac:groups=networking.kubeforge.io,resources=balancers,verbs=get;list;watch
// +kubebuilder:rbac:groups=networking.kubeforge.io,resources=balancers/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=networking.kubeforge.io,resources=balancers/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=services;configmaps,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=discovery.k8s.io,resources=endpointslices,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile brings one Balancer's proxy and Services to its spec and
// reports what the backends serve.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	b := &networkingv1alpha1.Balancer{}
	if err := r.Client.Get(ctx, req.NamespacedName, b); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !b.DeletionTimestamp.IsZero() {
		// Everything is owned: the garbage collector removes it.
		return ctrl.Result{}, nil
	}
	before := b.DeepCopy()

	o, reconcileErr := r.reconcile(ctx, b)
	computeStatus(b, o)
	if _, err := engine.PatchStatus(ctx, r.Client, before, b); err != nil {
		return ctrl.Result{}, fmt.Errorf("reporting Balancer status: %w", err)
	}
	return ctrl.Result{}, reconcileErr
}

func (r *Reconciler) renderOptions() RenderOptions {
	domain := r.ClusterDomain
	if domain == "" {
		domain = DefaultClusterDomain
	}
	return RenderOptions{Resolve: ClusterDNS(domain)}
}

func (r *Reconciler) reconcile(ctx context.Context, b *networkingv1alpha1.Balancer) (observed, error) {
	var o observed

	// The webhook's rules run here too, so a Balancer admitted without the
	// webhook gets a clear condition instead of a proxy that cannot start.
	spec := b.DeepCopy()
	webhooks.DefaultBalancer(spec)
	if errs := webhooks.ValidateBalancer(spec); len(errs) > 0 {
		o.invalid = admit.Invalid(networkingv1alpha1.GroupVersion.WithKind("Balancer").GroupKind(), b, errs)
		logf.FromContext(ctx).Info("Balancer spec is invalid; waiting for a change", "error", o.invalid.Error())
		r.Engine.Warn(b, conditions.ReasonInvalidSpec, "Validate", "%s", o.invalid.Error())
		return o, nil
	}

	conf := NginxConf(spec, r.renderOptions())
	o.configHash = ConfigHash(conf)
	res, err := r.Engine.Apply(ctx, b, DesiredObjects(spec, conf),
		&corev1.ServiceList{}, &corev1.ConfigMapList{}, &appsv1.DeploymentList{})
	if err != nil {
		o.applyErr = err
		r.Engine.Warn(b, conditions.ReasonApplyFailed, "Apply", "%s", err.Error())
		return o, fmt.Errorf("applying Balancer objects: %w", err)
	}

	// The proxy as Apply left it, not a cache that may not have it yet.
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: b.Namespace, Name: ProxyName(b)}}
	if res.LiveObject(r.Engine.Scheme, dep) {
		o.proxy = dep
	}

	slices := &discoveryv1.EndpointSliceList{}
	if err := r.Client.List(ctx, slices, client.InNamespace(b.Namespace),
		client.MatchingLabels{networkingv1alpha1.BalancerLabel: b.Name}); err != nil {
		return o, fmt.Errorf("listing EndpointSlices: %w", err)
	}
	o.slices = map[string][]discoveryv1.EndpointSlice{}
	for _, s := range slices.Items {
		svc := s.Labels[discoveryv1.LabelServiceName]
		o.slices[svc] = append(o.slices[svc], s)
	}
	return o, nil
}

// SetupWithManager registers the controller: Balancers, their owned
// objects, and the EndpointSlices of their backend Services (which the
// EndpointSlice controller owns; they carry the Service's labels).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("balancer").
		// Every change, status included: a status write decided against a
		// cache that lagged behind our previous write is corrected when the
		// cache catches up. A reconcile with nothing to do writes nothing.
		For(&networkingv1alpha1.Balancer{}).
		Owns(&appsv1.Deployment{}).
		Owns(&corev1.Service{}).
		Owns(&corev1.ConfigMap{}).
		Watches(&discoveryv1.EndpointSlice{}, handler.EnqueueRequestsFromMapFunc(sliceToBalancer)).
		Complete(r)
}

func sliceToBalancer(_ context.Context, obj client.Object) []reconcile.Request {
	name, ok := obj.GetLabels()[networkingv1alpha1.BalancerLabel]
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}}}
}
