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
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/kubeforge/kubeforge/api/networking/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/admit"
	"github.com/kubeforge/kubeforge/internal/engine"
	"github.com/kubeforge/kubeforge/internal/workload"
)

// DefaultClusterDomain is the DNS domain of the cluster's Services.
const DefaultClusterDomain = "cluster.local"

// Types are the objects a Balancer's controller owns and reads: the
// backend and front-end Services, the proxy's ConfigMap and Deployment,
// and the EndpointSlices of its backend Services (owned by the
// EndpointSlice controller; they carry the Service's labels).
var Types = engine.Types{
	Owned: []client.Object{&corev1.Service{}, &corev1.ConfigMap{}, &appsv1.Deployment{}},
	Read:  []engine.Read{{Object: &discoveryv1.EndpointSlice{}, OwnerLabel: networkingv1alpha1.BalancerLabel, Keep: workload.EndpointSliceFields}},
}

// Reconciler reconciles Balancers.
type Reconciler struct {
	Client client.Client
	Engine *engine.Engine
	// ClusterDomain is the cluster's DNS domain; the proxy reaches the
	// backend Services by <service>.<namespace>.svc.<ClusterDomain>.
	ClusterDomain string
	// ClusterDNS is the cluster DNS server the proxies ask again for the
	// backend Services' addresses while they run; empty: they resolve them
	// once, at start.
	ClusterDNS string
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
	// The webhook's rules run here too, so a Balancer admitted without the
	// webhook gets a clear condition instead of a proxy that cannot start.
	// Builders and status read the defaulted copy; only status is written.
	b, invalid := admit.Prepare(admit.Balancer, r.Engine.Proof, b)
	before := b.DeepCopy()

	o, reconcileErr := r.reconcile(ctx, b, invalid)
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
	return RenderOptions{Resolve: ClusterDNS(domain), DNSServer: r.ClusterDNS}
}

func (r *Reconciler) reconcile(ctx context.Context, b *networkingv1alpha1.Balancer, invalid error) (observed, error) {
	var o observed
	if invalid != nil {
		o.invalid = invalid
		r.Engine.Invalid(ctx, b, invalid)
		return o, nil
	}

	conf := NginxConf(b, r.renderOptions())
	o.configHash = ConfigHash(conf)
	desired, err := DesiredObjects(b, conf)
	if err != nil {
		// Admission keeps ports × backends within what a template carries.
		o.invalid = err
		r.Engine.Invalid(ctx, b, err)
		return o, nil
	}
	res, err := r.Engine.Apply(ctx, b, desired, Types.Owned...)
	if err != nil {
		o.applyErr = err
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
	// Each backend Service's slices are those its EndpointSlice controller
	// made and keeps (workload.ServiceSlices): their controller is the
	// Service (its UID, as Apply left it). The labels are anyone's to put
	// on a slice of their own.
	o.slices = map[string][]discoveryv1.EndpointSlice{}
	for _, be := range b.Spec.Backends {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: b.Namespace, Name: networkingv1alpha1.BackendServiceName(b, be)}}
		if res.LiveObject(r.Engine.Scheme, svc) {
			o.slices[svc.Name] = workload.ServiceSlices(slices.Items, svc)
		}
	}
	return o, nil
}

// SetupWithManager registers the controller: Balancers and their Types.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return Types.Controller(mgr, r.Engine.Proof, "balancer", &networkingv1alpha1.Balancer{}).Complete(engine.Waits(r))
}
