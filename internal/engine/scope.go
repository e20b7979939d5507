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

package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Scope is the set of namespaces one kubeforge serves
// (--watch-namespaces; under OLM, the OperatorGroup's target namespaces).
// The zero Scope serves every namespace.
//
// A scoped manager's cache and informers hold only its namespaces, its
// Roles are granted only there, and its clients (Client, Reader) refuse
// any namespaced read or write outside them before a request leaves the
// process: the RBAC an installer grants is the first fence, this is the
// second, and it holds however generously the operator was bound.
// Cluster-scoped requests (an empty namespace) pass; the cluster-scoped
// resources the manager needs at all are listed, with the reason, in
// ClusterScopedAccess.
type Scope struct {
	namespaces []string
	// own is the operator's own namespace: its clients reach it (the
	// ownership key, its certificates, leader election), its cache does
	// not hold it unless it is served.
	own string
}

// NewScope is the Scope of the named namespaces; none means every
// namespace. Each name must be a namespace name.
func NewScope(namespaces []string) (Scope, error) {
	var s Scope
	for _, ns := range namespaces {
		if msgs := utilvalidation.IsDNS1123Label(ns); len(msgs) > 0 {
			return Scope{}, fmt.Errorf("%q is not a namespace name: %s", ns, strings.Join(msgs, "; "))
		}
		if !slices.Contains(s.namespaces, ns) {
			s.namespaces = append(s.namespaces, ns)
		}
	}
	slices.Sort(s.namespaces)
	return s, nil
}

// WithOwn is s whose clients also reach the operator's own namespace ns.
func (s Scope) WithOwn(ns string) Scope {
	s.own = ns
	return s
}

// All reports whether the Scope serves every namespace.
func (s Scope) All() bool { return len(s.namespaces) == 0 }

// Namespaces are the namespaces served, sorted; nil for every namespace.
func (s Scope) Namespaces() []string { return slices.Clone(s.namespaces) }

// Serves reports whether namespace ns is served. The empty namespace (a
// cluster-scoped object, or a list across the cache) is.
func (s Scope) Serves(ns string) bool {
	return ns == "" || s.All() || slices.Contains(s.namespaces, ns)
}

func (s Scope) String() string {
	if s.All() {
		return "all namespaces"
	}
	return strings.Join(s.namespaces, ",")
}

// CacheNamespaces is the manager cache's DefaultNamespaces: nil (every
// namespace) or one entry per namespace served.
func (s Scope) CacheNamespaces() map[string]cache.Config {
	if s.All() {
		return nil
	}
	m := make(map[string]cache.Config, len(s.namespaces))
	for _, ns := range s.namespaces {
		m[ns] = cache.Config{}
	}
	return m
}

// NotServed is the error of a request for a namespace the Scope does not
// serve: Forbidden, as the API server would answer a manager that holds
// no Role there, with a message that says why.
func (s Scope) NotServed(gr schema.GroupResource, ns, name string) error {
	return apierrors.NewForbidden(gr, name, fmt.Errorf("namespace %q is not one this kubeforge serves (--watch-namespaces=%s)", ns, s))
}

func (s Scope) check(c client.Client, obj runtime.Object, ns, name string) error {
	if s.Serves(ns) || ns == s.own && s.own != "" {
		return nil
	}
	gr := schema.GroupResource{Resource: fmt.Sprintf("%T", obj)}
	if gvk, err := c.GroupVersionKindFor(obj); err == nil {
		gr = schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}
	}
	return s.NotServed(gr, ns, name)
}

// Client is c, refusing namespaced requests outside the Scope.
func (s Scope) Client(c client.Client) client.Client {
	if s.All() {
		return c
	}
	return scopedClient{Client: c, s: s}
}

// Reader is r (the manager's API reader), refusing reads outside the
// Scope; c names the kinds in its errors.
func (s Scope) Reader(r client.Reader, c client.Client) client.Reader {
	if s.All() {
		return r
	}
	return scopedReader{Reader: r, c: c, s: s}
}

type scopedReader struct {
	client.Reader
	c client.Client
	s Scope
}

func (r scopedReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := r.s.check(r.c, obj, key.Namespace, key.Name); err != nil {
		return err
	}
	return r.Reader.Get(ctx, key, obj, opts...)
}

func (r scopedReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	// The API reader has no cache: a list without a namespace would be
	// one across every namespace.
	if err := r.s.checkList(r.c, list, listNamespace(opts), true); err != nil {
		return err
	}
	return r.Reader.List(ctx, list, opts...)
}

// checkList checks a list in namespace ns. A list without a namespace
// is refused for namespaced kinds when it would reach the API server
// (uncached: the API reader, or ContentKinds, which are read past the
// cache); from the cache it holds only the served namespaces.
func (s Scope) checkList(c client.Client, list client.ObjectList, ns string, uncached bool) error {
	if ns != "" || s.All() {
		return s.check(c, list, ns, "")
	}
	gvk, err := c.GroupVersionKindFor(list)
	if err != nil {
		return fmt.Errorf("listing %T: %w", list, err)
	}
	gk := schema.GroupKind{Group: gvk.Group, Kind: strings.TrimSuffix(gvk.Kind, "List")}
	if _, metadata := list.(*metav1.PartialObjectMetadataList); !uncached && (!IsContentKind(gk) || metadata) {
		return nil // from the cache (ContentKinds' metadata is cached)
	}
	if m, err := c.RESTMapper().RESTMapping(gk, gvk.Version); err == nil && m.Scope.Name() == meta.RESTScopeNameRoot {
		return nil
	}
	return apierrors.NewForbidden(schema.GroupResource{Group: gk.Group, Resource: gk.Kind}, "",
		fmt.Errorf("a list across every namespace, and this kubeforge serves only --watch-namespaces=%s: name the namespace", s))
}

func listNamespace(opts []client.ListOption) string {
	lo := &client.ListOptions{}
	lo.ApplyOptions(opts)
	return lo.Namespace
}

type scopedClient struct {
	client.Client
	s Scope
}

func (c scopedClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := c.s.check(c.Client, obj, key.Namespace, key.Name); err != nil {
		return err
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

func (c scopedClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := c.s.checkList(c.Client, list, listNamespace(opts), false); err != nil {
		return err
	}
	return c.Client.List(ctx, list, opts...)
}

func (c scopedClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if err := c.s.check(c.Client, obj, obj.GetNamespace(), obj.GetName()); err != nil {
		return err
	}
	return c.Client.Create(ctx, obj, opts...)
}

func (c scopedClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	if err := c.s.check(c.Client, obj, obj.GetNamespace(), obj.GetName()); err != nil {
		return err
	}
	return c.Client.Update(ctx, obj, opts...)
}

func (c scopedClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	if err := c.s.check(c.Client, obj, obj.GetNamespace(), obj.GetName()); err != nil {
		return err
	}
	return c.Client.Patch(ctx, obj, patch, opts...)
}

func (c scopedClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	if err := c.s.check(c.Client, obj, obj.GetNamespace(), obj.GetName()); err != nil {
		return err
	}
	return c.Client.Delete(ctx, obj, opts...)
}

func (c scopedClient) DeleteAllOf(ctx context.Context, obj client.Object, opts ...client.DeleteAllOfOption) error {
	o := &client.DeleteAllOfOptions{}
	o.ApplyOptions(opts)
	if err := c.s.check(c.Client, obj, o.Namespace, ""); err != nil {
		return err
	}
	return c.Client.DeleteAllOf(ctx, obj, opts...)
}

// applyNamespace is the namespace of an apply configuration: generated
// ones have a *string, an unstructured one a string. ok is false when it
// cannot be told, and such an apply is refused.
func applyNamespace(obj runtime.ApplyConfiguration) (ns string, ok bool) {
	switch o := obj.(type) {
	case interface{ GetNamespace() string }:
		return o.GetNamespace(), true
	case interface{ GetNamespace() *string }:
		if p := o.GetNamespace(); p != nil {
			return *p, true
		}
		return "", true
	}
	return "", false
}

func (c scopedClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	ns, ok := applyNamespace(obj)
	if !ok {
		return fmt.Errorf("applying %T: its namespace cannot be told, and this kubeforge serves only %s", obj, c.s)
	}
	if err := c.s.check(c.Client, &runtime.Unknown{}, ns, ""); err != nil {
		return err
	}
	return c.Client.Apply(ctx, obj, opts...)
}

func (c scopedClient) Status() client.SubResourceWriter {
	return scopedSubResource{SubResourceClient: c.Client.SubResource("status"), c: c.Client, s: c.s}
}

func (c scopedClient) SubResource(name string) client.SubResourceClient {
	return scopedSubResource{SubResourceClient: c.Client.SubResource(name), c: c.Client, s: c.s}
}

type scopedSubResource struct {
	client.SubResourceClient
	c client.Client
	s Scope
}

func (r scopedSubResource) Get(ctx context.Context, obj, sub client.Object, opts ...client.SubResourceGetOption) error {
	if err := r.s.check(r.c, obj, obj.GetNamespace(), obj.GetName()); err != nil {
		return err
	}
	return r.SubResourceClient.Get(ctx, obj, sub, opts...)
}

func (r scopedSubResource) Create(ctx context.Context, obj, sub client.Object, opts ...client.SubResourceCreateOption) error {
	if err := r.s.check(r.c, obj, obj.GetNamespace(), obj.GetName()); err != nil {
		return err
	}
	return r.SubResourceClient.Create(ctx, obj, sub, opts...)
}

func (r scopedSubResource) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	if err := r.s.check(r.c, obj, obj.GetNamespace(), obj.GetName()); err != nil {
		return err
	}
	return r.SubResourceClient.Update(ctx, obj, opts...)
}

func (r scopedSubResource) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	if err := r.s.check(r.c, obj, obj.GetNamespace(), obj.GetName()); err != nil {
		return err
	}
	return r.SubResourceClient.Patch(ctx, obj, patch, opts...)
}

func (r scopedSubResource) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
	ns, ok := applyNamespace(obj)
	if !ok {
		return fmt.Errorf("applying %T: its namespace cannot be told, and this kubeforge serves only %s", obj, r.s)
	}
	if err := r.s.check(r.c, &runtime.Unknown{}, ns, ""); err != nil {
		return err
	}
	return r.SubResourceClient.Apply(ctx, obj, opts...)
}

// ClusterScopedAccess is every cluster-scoped resource the manager's
// RBAC names, and why: in a namespace-scoped install these are the only
// grants outside the served namespaces (docs/install.md). `make
// manifests` (hack/rbacsplit, SplitRules) moves exactly these rules of
// the role generated from the code's markers into the cluster role; a
// test holds both roles to the API server's discovery, so a rule for a
// cluster-scoped resource missing here fails it. A cluster-scoped kind
// kubeforge adds later joins the list here.
var ClusterScopedAccess = []ClusterAccess{
	{Group: "", Resource: "namespaces", Why: "get kube-system only: its UID is the cluster's identity in database owner records"},
	{Group: "authentication.k8s.io", Resource: "tokenreviews", Why: "authenticate the callers of the API and of the metrics endpoint"},
	{Group: "authorization.k8s.io", Resource: "subjectaccessreviews", Why: "ask whether a requester may do what an object or an API call asks (webhooks, API, metrics)"},
	{Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicies", Why: "apply kubeforge's own policies under OLM (--ensure-admission-policy)"},
	{Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicybindings", Why: "bind those policies"},
	{Group: "storage.k8s.io", Resource: "storageclasses", Why: "find the default class before writing a claim that names none (UnclassedClaims)"},
	// (impersonate:serviceaccount on authentication.k8s.io serviceaccounts
	// is checked in the ServiceAccount's namespace: it is a namespaced
	// rule, so a namespace-scoped kubeforge acts only as the
	// ServiceAccounts of the namespaces it serves.)
	{Group: "authentication.k8s.io", Resource: "users", Why: "constrained impersonation of the API's caller (impersonate:user-info); what it may do is bounded per namespace by impersonate-on verbs"},
	{Group: "authentication.k8s.io", Resource: "groups", Why: "the caller's groups, for the same impersonation"},
	{Group: "authentication.k8s.io", Resource: "uids", Why: "the caller's UID, for the same impersonation"},
}

// ClusterAccess is one cluster-scoped resource of ClusterScopedAccess.
type ClusterAccess struct{ Group, Resource, Why string }

func clusterScoped(group, resource string) bool {
	return slices.ContainsFunc(ClusterScopedAccess, func(a ClusterAccess) bool { return a.Group == group && a.Resource == resource })
}

// SplitRules splits RBAC rules into those for namespaced resources
// (granted in each served namespace) and those for ClusterScopedAccess
// and non-resource URLs (granted cluster-wide). A rule naming both kinds
// of resource becomes one rule of each; a rule naming several API groups
// is split per group first.
func SplitRules(rules []rbacv1.PolicyRule) (namespaced, cluster []rbacv1.PolicyRule) {
	for _, r := range rules {
		if len(r.NonResourceURLs) > 0 {
			cluster = append(cluster, r)
			continue
		}
		for _, g := range r.APIGroups {
			var ns, cl []string
			for _, res := range r.Resources {
				if clusterScoped(g, res) {
					cl = append(cl, res)
				} else {
					ns = append(ns, res)
				}
			}
			part := func(resources []string) rbacv1.PolicyRule {
				p := *r.DeepCopy()
				p.APIGroups, p.Resources = []string{g}, resources
				return p
			}
			if len(ns) > 0 {
				namespaced = append(namespaced, part(ns))
			}
			if len(cl) > 0 {
				cluster = append(cluster, part(cl))
			}
		}
	}
	return namespaced, cluster
}
