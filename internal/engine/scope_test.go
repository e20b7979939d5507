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

package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kubeforge/kubeforge/internal/engine"
	"github.com/kubeforge/kubeforge/internal/test/testenv"
)

var _ = Describe("A namespace-scoped manager (engine.Scope)", func() {
	It("refuses a name that is not a namespace's, and serves every namespace when none is named", func() {
		_, err := engine.NewScope([]string{"team-a", "Team_B"})
		Expect(err).To(MatchError(ContainSubstring(`"Team_B" is not a namespace name`)))
		all, err := engine.NewScope(nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(all.All()).To(BeTrue())
		Expect(all.Serves("anything")).To(BeTrue())
		Expect(all.CacheNamespaces()).To(BeNil())
	})

	It("caches, reads and writes only in its namespaces, and refuses the rest before a request leaves", func() {
		for _, ns := range []string{"scope-in", "scope-out"} {
			Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))).To(Succeed())
			Expect(env.Client.Create(ctx, &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "svc", Labels: map[string]string{engine.LabelManagedBy: engine.ManagedByValue}},
				Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
			})).To(Succeed())
		}
		scope, err := engine.NewScope([]string{"scope-in"})
		Expect(err).NotTo(HaveOccurred())

		By("the cache holds only the served namespace's objects")
		opts := engine.CacheOptions(engine.CacheSettings{Scope: scope}, &corev1.Service{})
		opts.Scheme = env.Scheme
		c, err := cache.New(env.Config, opts)
		Expect(err).NotTo(HaveOccurred())
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go func() { defer GinkgoRecover(); Expect(c.Start(cctx)).To(Succeed()) }()
		Expect(c.WaitForCacheSync(cctx)).To(BeTrue())
		Eventually(func(g Gomega) {
			list := &corev1.ServiceList{}
			g.Expect(c.List(ctx, list)).To(Succeed())
			var seen []string
			for _, s := range list.Items {
				seen = append(seen, s.Namespace+"/"+s.Name)
			}
			g.Expect(seen).To(ConsistOf("scope-in/svc"))
		}).Should(Succeed())

		By("the client and the API reader refuse every request outside it, with Forbidden naming the namespace")
		copts := engine.ClientOptions()
		copts.Scheme, copts.Cache.Reader = env.Scheme, c
		base, err := client.New(env.Config, copts)
		Expect(err).NotTo(HaveOccurred())
		scoped := scope.Client(base)
		reader := scope.Reader(env.Client, scoped)
		out := types.NamespacedName{Namespace: "scope-out", Name: "svc"}
		notServed := func(err error) {
			GinkgoHelper()
			Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
			Expect(err).To(MatchError(ContainSubstring(`namespace "scope-out" is not one this kubeforge serves (--watch-namespaces=scope-in)`)))
		}
		notServed(scoped.Get(ctx, out, &corev1.Service{}))
		notServed(reader.Get(ctx, out, &corev1.Secret{}))
		notServed(reader.List(ctx, &corev1.SecretList{}, client.InNamespace("scope-out")))
		notServed(scoped.List(ctx, &corev1.ServiceList{}, client.InNamespace("scope-out")))
		By("a list across every namespace that would reach the API server is refused too; from the cache it holds only the served")
		across := func(err error) {
			GinkgoHelper()
			Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
			Expect(err).To(MatchError(ContainSubstring("a list across every namespace")))
		}
		across(reader.List(ctx, &corev1.SecretList{}))
		across(reader.List(ctx, &corev1.ServiceList{}))
		across(scoped.List(ctx, &corev1.SecretList{})) // read past the cache
		Expect(reader.List(ctx, &corev1.NamespaceList{})).To(Succeed(), "cluster-scoped")
		services := &corev1.ServiceList{}
		Expect(scoped.List(ctx, services)).To(Succeed())
		Expect(services.Items).To(HaveLen(1))
		Expect(services.Items[0].Namespace).To(Equal("scope-in"))
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "scope-out", Name: "planted"}}
		notServed(scoped.Create(ctx, cm))
		svc := &corev1.Service{}
		Expect(env.Client.Get(ctx, out, svc)).To(Succeed())
		notServed(scoped.Patch(ctx, svc.DeepCopy(), client.MergeFrom(svc)))
		notServed(scoped.Update(ctx, svc.DeepCopy()))
		notServed(scoped.Status().Update(ctx, svc.DeepCopy()))
		notServed(scoped.Delete(ctx, svc.DeepCopy()))
		notServed(scoped.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace("scope-out")))
		notServed(scoped.Apply(ctx, corev1ac.ConfigMap("planted", "scope-out"), client.FieldOwner("test")))
		Expect(apierrors.IsNotFound(env.Client.Get(ctx, types.NamespacedName{Namespace: "scope-out", Name: "planted"}, &corev1.ConfigMap{}))).To(BeTrue(),
			"nothing was written outside the scope")
		Expect(env.Client.Get(ctx, out, svc)).To(Succeed(), "nothing was deleted outside the scope")

		By("the operator's own namespace is reached by the client (its key, its certificates), never cached")
		Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "scope-own"}}))).To(Succeed())
		own := scope.WithOwn("scope-own").Client(base)
		Expect(own.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "scope-own", Name: "ca"}})).To(Succeed())
		notServed(own.Get(ctx, out, &corev1.Service{}))
		Expect(scope.WithOwn("scope-own").CacheNamespaces()).To(HaveLen(1))
		Expect(scope.WithOwn("scope-own").Serves("scope-own")).To(BeFalse(), "not served: the API and the reconcilers do not act there")

		By("inside it, and for cluster-scoped objects, it is the client it wraps")
		Expect(scoped.Get(ctx, types.NamespacedName{Namespace: "scope-in", Name: "svc"}, &corev1.Service{})).To(Succeed())
		Expect(scoped.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "scope-in", Name: "made"}})).To(Succeed())
		Expect(reader.Get(ctx, types.NamespacedName{Name: "scope-out"}, &corev1.Namespace{})).To(Succeed())
	})

	It("grants namespaced resources only in the role bound per namespace, cluster-scoped ones only in the cluster role, as the API server's discovery says", func() {
		_, lists, err := discovery.NewDiscoveryClientForConfigOrDie(env.Config).ServerGroupsAndResources()
		Expect(err).NotTo(HaveOccurred())
		scoped := map[schema.GroupResource]bool{} // true: namespaced
		for _, l := range lists {
			gv, err := schema.ParseGroupVersion(l.GroupVersion)
			Expect(err).NotTo(HaveOccurred())
			for _, r := range l.APIResources {
				scoped[schema.GroupResource{Group: gv.Group, Resource: r.Name}] = r.Namespaced
			}
		}
		// Constrained impersonation's resources are checked by the
		// authorizer but not served, so discovery does not list them.
		virtual := map[schema.GroupResource]bool{}
		for _, r := range []string{"users", "groups", "uids"} {
			virtual[schema.GroupResource{Group: "authentication.k8s.io", Resource: r}] = true
		}
		// impersonate:serviceaccount is checked in the ServiceAccount's
		// namespace.
		virtualNamespaced := schema.GroupResource{Group: "authentication.k8s.io", Resource: "serviceaccounts"}
		clusterScoped := func(gr schema.GroupResource) bool {
			namespaced, known := scoped[gr]
			return virtual[gr] || known && !namespaced
		}
		for _, a := range engine.ClusterScopedAccess {
			Expect(clusterScoped(schema.GroupResource{Group: a.Group, Resource: a.Resource})).To(BeTrue(), "%s/%s", a.Group, a.Resource)
		}
		for file, wantNamespaced := range map[string]bool{"role.yaml": true, "cluster_role.yaml": false} {
			b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "rbac", file))
			Expect(err).NotTo(HaveOccurred())
			role := &rbacv1.ClusterRole{}
			Expect(yaml.Unmarshal(b, role)).To(Succeed())
			Expect(role.Rules).NotTo(BeEmpty(), file)
			for _, r := range role.Rules {
				for _, g := range r.APIGroups {
					for _, res := range r.Resources {
						// A subresource (pods/log, */finalizers) has its
						// resource's scope; discovery does not list them all.
						gr := schema.GroupResource{Group: g, Resource: strings.SplitN(res, "/", 2)[0]}
						if wantNamespaced {
							namespaced, known := scoped[gr]
							Expect(known && namespaced || gr == virtualNamespaced).To(BeTrue(), "%s grants %s, which is not a namespaced resource: add it to engine.ClusterScopedAccess", file, gr)
						} else {
							Expect(clusterScoped(gr)).To(BeTrue(), "%s grants %s, which is namespaced", file, gr)
						}
					}
				}
			}
		}
	})
})
