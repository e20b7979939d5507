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

package balancer_test

import (
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/kubeforge/kubeforge/api/networking/v1alpha1"
	"github.com/kubeforge/kubeforge/controllers/balancer"
	"github.com/kubeforge/kubeforge/internal/conditions"
	"github.com/kubeforge/kubeforge/internal/test/testenv"
	"github.com/kubeforge/kubeforge/internal/workload"
)

func newBalancer(name string, weights ...int32) *networkingv1alpha1.Balancer {
	b := &networkingv1alpha1.Balancer{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: networkingv1alpha1.BalancerSpec{
			Selector: map[string]string{"app": name},
			Ports: []networkingv1alpha1.BalancerPort{
				{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: new(intstr.FromInt32(8080))},
				{Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53, TargetPort: new(intstr.FromInt32(5353))},
			},
		},
	}
	for i, w := range weights {
		v := fmt.Sprintf("v%d", i+1)
		b.Spec.Backends = append(b.Spec.Backends, networkingv1alpha1.BalancerBackend{
			Name: v, Weight: ptr.To(w), Selector: map[string]string{"version": v},
		})
	}
	return b
}

func key(name string) types.NamespacedName {
	return types.NamespacedName{Namespace: "default", Name: name}
}

func getBalancer(name string) func(g Gomega) *networkingv1alpha1.Balancer {
	return func(g Gomega) *networkingv1alpha1.Balancer {
		b := &networkingv1alpha1.Balancer{}
		g.Expect(suite.Client.Get(suite.Ctx, key(name), b)).To(Succeed())
		return b
	}
}

func condition(name, condType string) func(g Gomega) *metav1.Condition {
	return func(g Gomega) *metav1.Condition {
		b := getBalancer(name)(g)
		c := meta.FindStatusCondition(b.Status.Conditions, condType)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.ObservedGeneration).To(Equal(b.Generation))
		return c
	}
}

// settled waits until the controller has nothing left to do: the proxy
// exists, the status describes the current generation and no write follows.
func settled(name string) {
	Eventually(condition(name, conditions.Ready)).Should(Not(BeNil()))
	Eventually(func() error { return suite.Client.Get(suite.Ctx, key(name+"-proxy"), &appsv1.Deployment{}) }).Should(Succeed())
	Eventually(func() []string {
		before := suite.Counting.Writes()
		time.Sleep(300 * time.Millisecond)
		return suite.Counting.Writes()[len(before):]
	}).Should(BeEmpty())
}

// endpointSlice makes the EndpointSlice that the EndpointSlice controller
// would make for a backend Service: the Service's labels copied, plus the
// service-name label, and the Service as its controller; one endpoint per
// readiness given.
func endpointSlice(svc *corev1.Service, ready ...bool) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: svc.Name + "-abcde", Namespace: svc.Namespace, Labels: map[string]string{},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: svc.Name, UID: svc.UID, Controller: ptr.To(true)}}},
		AddressType: discoveryv1.AddressTypeIPv4,
	}
	for k, v := range svc.Labels {
		s.Labels[k] = v
	}
	s.Labels[discoveryv1.LabelServiceName] = svc.Name
	s.Labels[discoveryv1.LabelManagedBy] = workload.EndpointSliceControllerName
	for i, r := range ready {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{
			Addresses:  []string{fmt.Sprintf("10.1.0.%d", i+1)},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(r)},
		})
	}
	return s
}

// makeProxyAvailable plays the Deployment controller for the proxy.
func makeProxyAvailable(name string, replicas int32) {
	d := &appsv1.Deployment{}
	Eventually(func(g Gomega) {
		g.Expect(suite.Client.Get(suite.Ctx, key(name+"-proxy"), d)).To(Succeed())
		g.Expect(testenv.Sealed(d)).To(BeTrue())
	}).Should(Succeed())
	d.Status = appsv1.DeploymentStatus{
		ObservedGeneration: d.Generation,
		Replicas:           replicas, UpdatedReplicas: replicas, ReadyReplicas: replicas, AvailableReplicas: replicas,
		Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"}},
	}
	Expect(suite.Client.Status().Update(suite.Ctx, d)).To(Succeed())
}

// zeroWrites reconciles a settled Balancer three times and checks that
// nothing was written.
func zeroWrites(name string) {
	GinkgoHelper()
	suite.Counting.Reset()
	for range 3 {
		res, err := suite.Reconciler.Reconcile(suite.Ctx, ctrl.Request{NamespacedName: key(name)})
		Expect(err).NotTo(HaveOccurred())
		Expect(res).To(Equal(ctrl.Result{}))
	}
	Expect(suite.Counting.Writes()).To(BeEmpty())
	Consistently(suite.Counting.Writes, "2s").Should(BeEmpty())
}

var _ = Describe("Balancer Controller", func() {
	It("should create every owned object with the owner reference and the common labels", func() {
		b := newBalancer("owned", 90, 10)
		Expect(suite.Client.Create(suite.Ctx, b)).To(Succeed())
		settled("owned")

		objects := map[string]client.Object{
			"owned":       &corev1.Service{},
			"owned-v1":    &corev1.Service{},
			"owned-v2":    &corev1.Service{},
			"owned-proxy": &corev1.ConfigMap{},
		}
		for name, obj := range objects {
			Expect(suite.Client.Get(suite.Ctx, key(name), obj)).To(Succeed(), name)
			ref := metav1.GetControllerOf(obj)
			Expect(ref).NotTo(BeNil(), name)
			Expect(ref.Kind).To(Equal("Balancer"))
			Expect(ref.UID).To(Equal(b.UID))
			Expect(obj.GetLabels()).To(HaveKeyWithValue("app.kubernetes.io/managed-by", "kubeforge"), name)
			Expect(obj.GetLabels()).To(HaveKeyWithValue("app.kubernetes.io/instance", "owned"), name)
		}
		v2 := objects["owned-v2"].(*corev1.Service)
		Expect(v2.Spec.Selector).To(Equal(map[string]string{"app": "owned", "version": "v2"}))
		Expect(v2.Spec.Ports).To(HaveLen(2))
		Expect(v2.Spec.Ports[1].TargetPort.IntVal).To(Equal(int32(5353)))
		Expect(v2.Labels).To(HaveKeyWithValue(networkingv1alpha1.BalancerLabel, "owned"))

		front := objects["owned"].(*corev1.Service)
		Expect(front.Spec.Selector).To(Equal(map[string]string{networkingv1alpha1.BalancerProxyLabel: "owned"}))

		conf := objects["owned-proxy"].(*corev1.ConfigMap).Data["nginx.conf"]
		Expect(conf).To(ContainSubstring("server owned-v1.default.svc.cluster.local:80 weight=90 max_fails=3 fail_timeout=10s;"))
		// Port 53 is the front-end's; the proxy serves it on an
		// unprivileged port, which the front-end Service forwards to.
		Expect(conf).To(ContainSubstring(fmt.Sprintf("listen %d udp;", balancer.ProxyPortBase+1)))
		Expect(front.Spec.Ports[1].Port).To(Equal(int32(53)))
		Expect(front.Spec.Ports[1].TargetPort.IntVal).To(Equal(balancer.ProxyPortBase + 1))

		d := &appsv1.Deployment{}
		Expect(suite.Client.Get(suite.Ctx, key("owned-proxy"), d)).To(Succeed())
		Expect(metav1.GetControllerOf(d).UID).To(Equal(b.UID))
		Expect(d.Labels).To(HaveKeyWithValue("app.kubernetes.io/component", "proxy"))
		got := getBalancer("owned")(Default)
		Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue(networkingv1alpha1.ConfigHashAnnotation, got.Status.ConfigHash))
		Expect(got.Status.ConfigHash).To(Equal(balancer.ConfigHash(conf)))
		Expect(got.Status.Selector).To(Equal("networking.kubeforge.io/balancer-proxy=owned"))
		managers := map[string]bool{}
		for _, mf := range d.ManagedFields {
			managers[mf.Manager] = true
		}
		Expect(managers).To(HaveKey("kubeforge"))
	})

	It("should make zero API writes when nothing changed", func() {
		Expect(suite.Client.Create(suite.Ctx, newBalancer("quiet", 50, 50))).To(Succeed())
		settled("quiet")
		zeroWrites("quiet")
	})

	It("should make zero API writes at rest with a named target port, backend selectors only, passive health and ClientIP affinity", func() {
		b := newBalancer("quiet-all", 70, 30)
		b.Spec.Selector = nil
		b.Spec.Backends[0].Selector = map[string]string{"app": "shop", "track": "stable"}
		b.Spec.Backends[1].Selector = map[string]string{"app": "shop-canary"}
		b.Spec.Ports[0].TargetPort = new(intstr.FromString("web"))
		b.Spec.PassiveHealth = &networkingv1alpha1.BalancerPassiveHealth{MaxFails: ptr.To[int32](2), FailTimeout: &metav1.Duration{Duration: 5 * time.Second}}
		b.Spec.SessionAffinity = networkingv1alpha1.SessionAffinityClientIP
		Expect(suite.Client.Create(suite.Ctx, b)).To(Succeed())
		settled("quiet-all")

		stable, canary := &corev1.Service{}, &corev1.Service{}
		Expect(suite.Client.Get(suite.Ctx, key("quiet-all-v1"), stable)).To(Succeed())
		Expect(suite.Client.Get(suite.Ctx, key("quiet-all-v2"), canary)).To(Succeed())
		Expect(stable.Spec.Selector).To(Equal(map[string]string{"app": "shop", "track": "stable"}))
		Expect(canary.Spec.Selector).To(Equal(map[string]string{"app": "shop-canary"}))
		Expect(canary.Spec.Ports[0].TargetPort).To(Equal(intstr.FromString("web")))
		Expect(canary.Spec.Ports[1].TargetPort).To(Equal(intstr.FromInt32(5353)))
		cm := &corev1.ConfigMap{}
		Expect(suite.Client.Get(suite.Ctx, key("quiet-all-proxy"), cm)).To(Succeed())
		Expect(cm.Data["nginx.conf"]).To(ContainSubstring("hash $remote_addr consistent;"))
		Expect(cm.Data["nginx.conf"]).To(ContainSubstring("weight=70 max_fails=2 fail_timeout=5s;"))
		zeroWrites("quiet-all")
	})

	It("should prune the Service of a removed backend and roll the proxy with the new config", func() {
		Expect(suite.Client.Create(suite.Ctx, newBalancer("prune", 40, 20, 40))).To(Succeed())
		settled("prune")
		Expect(suite.Client.Get(suite.Ctx, key("prune-v3"), &corev1.Service{})).To(Succeed())
		oldHash := getBalancer("prune")(Default).Status.ConfigHash

		Expect(suite.Client.Patch(suite.Ctx, getBalancer("prune")(Default), client.RawPatch(types.JSONPatchType,
			[]byte(`[{"op":"remove","path":"/spec/backends/2"}]`)))).To(Succeed())

		Eventually(func() bool {
			return apierrors.IsNotFound(suite.Client.Get(suite.Ctx, key("prune-v3"), &corev1.Service{}))
		}).Should(BeTrue())
		Expect(suite.Client.Get(suite.Ctx, key("prune-v1"), &corev1.Service{})).To(Succeed())
		Eventually(func(g Gomega) string {
			d := &appsv1.Deployment{}
			g.Expect(suite.Client.Get(suite.Ctx, key("prune-proxy"), d)).To(Succeed())
			return d.Spec.Template.Annotations[networkingv1alpha1.ConfigHashAnnotation]
		}).ShouldNot(Equal(oldHash))
		cm := &corev1.ConfigMap{}
		Expect(suite.Client.Get(suite.Ctx, key("prune-proxy"), cm)).To(Succeed())
		Expect(cm.Data["nginx.conf"]).NotTo(ContainSubstring("prune-v3"))
	})

	It("should keep the proxy on its own nginx.conf, and keep rolling it, when someone rewrites its ConfigMap and strips the seal", func() {
		Expect(suite.Client.Create(suite.Ctx, newBalancer("tamper", 50, 50))).To(Succeed())
		settled("tamper")

		By("someone who may write ConfigMaps rewrites nginx.conf and removes the seal in the same write")
		cm := &corev1.ConfigMap{}
		Expect(suite.Client.Get(suite.Ctx, key("tamper-proxy"), cm)).To(Succeed())
		cm.Annotations = nil
		cm.Data["nginx.conf"] = "stream { server { listen 10000; proxy_pass elsewhere.example:80; } }"
		Expect(suite.Client.Update(suite.Ctx, cm)).To(Succeed())
		Eventually(condition("tamper", conditions.Degraded)).Should(And(
			HaveField("Status", metav1.ConditionTrue),
			HaveField("Reason", conditions.ReasonNameConflict),
			HaveField("Message", ContainSubstring("ConfigMap/tamper-proxy")),
		))

		By("a new spec still reaches the proxy, whose pods read nginx.conf from their own template, not from the ConfigMap")
		b := getBalancer("tamper")(Default)
		b.Spec.Backends[0].Weight = ptr.To[int32](90)
		b.Spec.Backends[1].Weight = ptr.To[int32](10)
		Expect(suite.Client.Update(suite.Ctx, b)).To(Succeed())
		Eventually(func(g Gomega) {
			d := &appsv1.Deployment{}
			g.Expect(suite.Client.Get(suite.Ctx, key("tamper-proxy"), d)).To(Succeed())
			v := d.Spec.Template.Spec.Volumes[0]
			g.Expect(v.ConfigMap).To(BeNil())
			g.Expect(v.DownwardAPI).NotTo(BeNil())
			g.Expect(v.DownwardAPI.Items).To(HaveLen(1))
			conf := d.Spec.Template.Annotations[strings.TrimSuffix(strings.TrimPrefix(v.DownwardAPI.Items[0].FieldRef.FieldPath, "metadata.annotations['"), "']")]
			g.Expect(conf).To(ContainSubstring("weight=90"))
			g.Expect(conf).NotTo(ContainSubstring("elsewhere.example"))
		}).Should(Succeed())
		Expect(suite.Client.Get(suite.Ctx, key("tamper-proxy"), cm)).To(Succeed())
		Expect(cm.Data["nginx.conf"]).To(ContainSubstring("elsewhere.example"), "not someone else's to overwrite once unsealed")
	})

	It("should report backends from their Services' own EndpointSlices, not slices planted with their labels: active, obsolete and Degraded", func() {
		Expect(suite.Client.Create(suite.Ctx, newBalancer("eps", 90, 10))).To(Succeed())
		settled("eps")
		Expect(condition("eps", conditions.Ready)(Default).Reason).To(Equal(balancer.ReasonProxyUnavailable))

		for _, name := range []string{"eps-v1", "eps-v2"} {
			svc := &corev1.Service{}
			Expect(suite.Client.Get(suite.Ctx, key(name), svc)).To(Succeed())
			Expect(suite.Client.Create(suite.Ctx, endpointSlice(svc, true, true, false))).To(Succeed())
			// Planted beside it with the same labels and three ready
			// endpoints of their own: one with no controller, one that
			// claims the Service without the EndpointSlice controller's
			// label (which the controller would never correct). Never
			// counted.
			for j, claims := range []bool{false, true} {
				planted := endpointSlice(svc, true, true, true)
				planted.Name = fmt.Sprintf("%s-planted-%d", name, j)
				if claims {
					delete(planted.Labels, discoveryv1.LabelManagedBy)
				} else {
					planted.OwnerReferences = nil
				}
				for i := range planted.Endpoints {
					planted.Endpoints[i].Addresses = []string{fmt.Sprintf("10.9.%d.%d", j, i+1)}
				}
				Expect(suite.Client.Create(suite.Ctx, planted)).To(Succeed())
			}
		}
		makeProxyAvailable("eps", 1)
		Eventually(func(g Gomega) {
			b := getBalancer("eps")(g)
			g.Expect(b.Status.ActiveBackends).To(Equal(int32(2)))
			g.Expect(b.Status.ObsoleteBackends).To(Equal(int32(0)))
			g.Expect(b.Status.Backends).To(ConsistOf(
				networkingv1alpha1.BalancerBackendStatus{Name: "v1", Weight: 90, ReadyEndpoints: 2},
				networkingv1alpha1.BalancerBackendStatus{Name: "v2", Weight: 10, ReadyEndpoints: 2},
			))
			g.Expect(b.Status.ReadyReplicas).To(Equal(int32(1)))
		}).Should(Succeed())
		Eventually(condition("eps", conditions.Ready)).Should(HaveField("Status", metav1.ConditionTrue))
		Expect(condition("eps", conditions.Degraded)(Default).Status).To(Equal(metav1.ConditionFalse))

		// The canary's pods go away: it serves nothing.
		s := &discoveryv1.EndpointSlice{}
		Expect(suite.Client.Get(suite.Ctx, key("eps-v2-abcde"), s)).To(Succeed())
		s.Endpoints = nil
		Expect(suite.Client.Update(suite.Ctx, s)).To(Succeed())
		Eventually(func(g Gomega) {
			b := getBalancer("eps")(g)
			g.Expect(b.Status.ActiveBackends).To(Equal(int32(1)))
			g.Expect(b.Status.ObsoleteBackends).To(Equal(int32(1)))
		}).Should(Succeed())
		Eventually(condition("eps", conditions.Degraded)).Should(And(
			HaveField("Status", metav1.ConditionTrue),
			HaveField("Reason", balancer.ReasonBackendsUnready),
			HaveField("Message", ContainSubstring("v2")),
		))
		Expect(condition("eps", conditions.Ready)(Default).Status).To(Equal(metav1.ConditionTrue))
	})

	It("should scale the proxy through the scale subresource", func() {
		Expect(suite.Client.Create(suite.Ctx, newBalancer("scaled", 1))).To(Succeed())
		settled("scaled")
		scale := &autoscalingv1.Scale{}
		b := getBalancer("scaled")(Default)
		Expect(suite.Client.SubResource("scale").Get(suite.Ctx, b, scale)).To(Succeed())
		Expect(scale.Status.Selector).To(Equal("networking.kubeforge.io/balancer-proxy=scaled"))
		scale.Spec.Replicas = 3
		Expect(suite.Client.SubResource("scale").Update(suite.Ctx, b, client.WithSubResourceBody(scale))).To(Succeed())
		Eventually(func(g Gomega) int32 {
			d := &appsv1.Deployment{}
			g.Expect(suite.Client.Get(suite.Ctx, key("scaled-proxy"), d)).To(Succeed())
			return *d.Spec.Replicas
		}).Should(Equal(int32(3)))
	})

	It("should report a spec the CRD admits but the rules refuse, with a Warning event, and create nothing", func() {
		b := newBalancer("invalid", 1)
		b.Spec.Backends[0].Selector = map[string]string{"version": "not a label value"}
		Expect(suite.Client.Create(suite.Ctx, b)).To(Succeed())
		Eventually(condition("invalid", conditions.Degraded)).Should(And(
			HaveField("Status", metav1.ConditionTrue),
			HaveField("Reason", conditions.ReasonInvalidSpec),
			HaveField("Message", ContainSubstring("spec.backends[0].selector")),
		))
		Eventually(func(g Gomega) []string {
			reasons, err := testenv.WarningReasons(suite.Ctx, suite.Client, "default", "invalid")
			g.Expect(err).NotTo(HaveOccurred())
			return reasons
		}).Should(ContainElement(conditions.ReasonInvalidSpec))
		Expect(apierrors.IsNotFound(suite.Client.Get(suite.Ctx, key("invalid-proxy"), &appsv1.Deployment{}))).To(BeTrue())
	})

	It("should leave a ConfigMap the user made under the proxy's name as it was, and report the conflict", func() {
		// The user's own ConfigMap, made before the Balancer: no labels, no owner.
		mine := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "lb-proxy", Namespace: "default"}, Data: map[string]string{"keep": "me"}}
		Expect(suite.Client.Create(suite.Ctx, mine)).To(Succeed())
		before := &corev1.ConfigMap{}
		Expect(suite.Client.Get(suite.Ctx, key("lb-proxy"), before)).To(Succeed())

		Expect(suite.Client.Create(suite.Ctx, newBalancer("lb", 1))).To(Succeed())
		Eventually(condition("lb", conditions.Degraded)).Should(And(
			HaveField("Status", metav1.ConditionTrue),
			HaveField("Reason", conditions.ReasonNameConflict),
			HaveField("Message", ContainSubstring("ConfigMap/lb-proxy exists and was not created by this Balancer")),
		))
		Eventually(func(g Gomega) []string {
			reasons, err := testenv.WarningReasons(suite.Ctx, suite.Client, "default", "lb")
			g.Expect(err).NotTo(HaveOccurred())
			return reasons
		}).Should(ContainElement(conditions.ReasonNameConflict))
		// It goes on with what it can: the backend Service is there.
		Eventually(func() error { return suite.Client.Get(suite.Ctx, key("lb-v1"), &corev1.Service{}) }).Should(Succeed())

		after := &corev1.ConfigMap{}
		Expect(suite.Client.Get(suite.Ctx, key("lb-proxy"), after)).To(Succeed())
		Expect(after).To(Equal(before), "not changed, not labelled, not owned")

		Expect(suite.Client.Delete(suite.Ctx, getBalancer("lb")(Default))).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(suite.Client.Get(suite.Ctx, key("lb"), &networkingv1alpha1.Balancer{}))
		}).Should(BeTrue())
		Expect(suite.Client.Get(suite.Ctx, key("lb-proxy"), after)).To(Succeed())
		Expect(after).To(Equal(before), "still there after the Balancer went")
	})
})
