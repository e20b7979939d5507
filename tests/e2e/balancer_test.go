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

package e2e

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/kubeforge/kubeforge/api/networking/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/conditions"
)

const balancerNS = "e2e-balancer"

func shop(g Gomega) *networkingv1alpha1.Balancer {
	b := &networkingv1alpha1.Balancer{}
	g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: balancerNS, Name: "shop"}, b)).To(Succeed())
	g.Expect(b.Status.ObservedGeneration).To(Equal(b.Generation))
	return b
}

// proxyReplicaSets are the ReplicaSets of the proxy Deployment, by the
// config hash in their pod template.
func proxyReplicaSets(g Gomega) map[string]bool {
	list := &appsv1.ReplicaSetList{}
	g.Expect(k8sClient.List(ctx, list, client.InNamespace(balancerNS),
		client.MatchingLabels{networkingv1alpha1.BalancerProxyLabel: "shop"})).To(Succeed())
	hashes := map[string]bool{}
	for _, rs := range list.Items {
		hashes[rs.Spec.Template.Annotations[networkingv1alpha1.ConfigHashAnnotation]] = true
	}
	return hashes
}

var _ = Describe("Balancer", Ordered, Label("balancer"), func() {
	BeforeAll(func() {
		kubectlEventually("create", "namespace", balancerNS)
	})

	It("should reject bad input through the webhook", func() {
		bad := `{"apiVersion":"networking.kubeforge.io/v1alpha1","kind":"Balancer","metadata":{"name":"bad","namespace":"` + balancerNS + `"},` +
			`"spec":{"selector":{"app":"shop"},"backends":[{"name":"v1","selector":{"version":"not valid"}}],"ports":[{"name":"http","port":80}]}}`
		_, err := kubectlStdin(bad, "apply", "-f", "-")
		// Label values are checked by our validating webhook alone.
		Expect(err).To(MatchError(ContainSubstring(`spec.backends[0].selector: Invalid value: "not valid"`)))
	})

	It("should count the sample's backend pods as active backends and turn Ready", func() {
		_, err := kubectl("apply", "-n", balancerNS, "-f", "config/samples/networking_v1alpha1_balancer.yaml")
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			b := shop(g)
			g.Expect(b.Status.ActiveBackends).To(Equal(int32(2)))
			g.Expect(b.Status.ObsoleteBackends).To(Equal(int32(0)))
			g.Expect(b.Status.Backends).To(ConsistOf(
				networkingv1alpha1.BalancerBackendStatus{Name: "stable", Weight: 90, ReadyEndpoints: 3},
				networkingv1alpha1.BalancerBackendStatus{Name: "canary", Weight: 10, ReadyEndpoints: 1},
			))
			g.Expect(b.Status.ReadyReplicas).To(Equal(int32(2)))
			g.Expect(meta.IsStatusConditionTrue(b.Status.Conditions, conditions.Ready)).To(BeTrue())
		}).Should(Succeed())

		out, err := kubectl("get", "bal", "-n", balancerNS, "shop", "--no-headers")
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(MatchRegexp(`^shop\s+2\s+0\s+2\s+`))
	})

	It("should move a backend whose pods are gone to obsolete and set Degraded", func() {
		_, err := kubectl("delete", "-n", balancerNS, "pset/shop-v2", "--wait=true")
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			b := shop(g)
			g.Expect(b.Status.ActiveBackends).To(Equal(int32(1)))
			g.Expect(b.Status.ObsoleteBackends).To(Equal(int32(1)))
			d := meta.FindStatusCondition(b.Status.Conditions, conditions.Degraded)
			g.Expect(d).NotTo(BeNil())
			g.Expect(d.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(d.Message).To(ContainSubstring("canary"))
		}).Should(Succeed())
		out, err := kubectl("get", "bal", "-n", balancerNS, "shop", "--no-headers")
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(MatchRegexp(`^shop\s+1\s+1\s+`))
	})

	It("should roll the proxy when a weight changes", func() {
		before := shop(Default).Status.ConfigHash
		Expect(before).NotTo(BeEmpty())
		Eventually(proxyReplicaSets).Should(Equal(map[string]bool{before: true}))

		_, err := kubectl("patch", "-n", balancerNS, "bal/shop", "--type", "json",
			"-p", `[{"op":"replace","path":"/spec/backends/1/weight","value":0}]`)
		Expect(err).NotTo(HaveOccurred())
		var after string
		Eventually(func(g Gomega) {
			after = shop(g).Status.ConfigHash
			g.Expect(after).NotTo(Equal(before))
		}).Should(Succeed())
		// A new ReplicaSet for the new configuration appears next to the old one.
		Eventually(proxyReplicaSets).Should(HaveKey(after))
		Expect(proxyReplicaSets(Default)).To(HaveKey(before))
		cm := &corev1.ConfigMap{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: balancerNS, Name: "shop-proxy"}, cm)).To(Succeed())
		Expect(cm.Data["nginx.conf"]).To(ContainSubstring("backend canary drained"))
		Expect(strings.Count(cm.Data["nginx.conf"], "weight=")).To(Equal(1))
		// The drained canary no longer counts as a weighted backend without endpoints.
		Eventually(func(g Gomega) {
			g.Expect(meta.IsStatusConditionFalse(shop(g).Status.Conditions, conditions.Degraded)).To(BeTrue())
			g.Expect(meta.IsStatusConditionTrue(shop(g).Status.Conditions, conditions.Ready)).To(BeTrue())
		}).Should(Succeed())
	})

	It("should scale the proxy with kubectl scale", func() {
		_, err := kubectl("scale", "-n", balancerNS, "bal/shop", "--replicas", "3")
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			d := &appsv1.Deployment{}
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: balancerNS, Name: "shop-proxy"}, d)).To(Succeed())
			g.Expect(*d.Spec.Replicas).To(Equal(int32(3)))
			g.Expect(shop(g).Status.ReadyReplicas).To(Equal(int32(3)))
		}).Should(Succeed())
	})

	It("should be scaled by a HorizontalPodAutoscaler through the scale subresource", func() {
		// Below minReplicas the HPA controller scales up without needing metrics.
		hpa := &autoscalingv2.HorizontalPodAutoscaler{
			ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: balancerNS},
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{
					APIVersion: "networking.kubeforge.io/v1alpha1", Kind: "Balancer", Name: "shop",
				},
				MinReplicas: new(int32(4)),
				MaxReplicas: 6,
			},
		}
		Expect(k8sClient.Create(ctx, hpa)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(*shop(g).Spec.Replicas).To(Equal(int32(4)))
			d := &appsv1.Deployment{}
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: balancerNS, Name: "shop-proxy"}, d)).To(Succeed())
			g.Expect(*d.Spec.Replicas).To(Equal(int32(4)))
			g.Expect(shop(g).Status.ReadyReplicas).To(Equal(int32(4)))
		}).Should(Succeed())
		Expect(k8sClient.Delete(ctx, hpa)).To(Succeed())
	})

	It("should garbage-collect everything when the Balancer is deleted", func() {
		_, err := kubectl("delete", "-n", balancerNS, "bal/shop", "--wait=true")
		Expect(err).NotTo(HaveOccurred())
		for name, obj := range map[string]client.Object{
			"shop": &corev1.Service{}, "shop-stable": &corev1.Service{}, "shop-canary": &corev1.Service{},
			"shop-proxy": &appsv1.Deployment{},
		} {
			Eventually(func() bool {
				return apierrors.IsNotFound(k8sClient.Get(ctx, types.NamespacedName{Namespace: balancerNS, Name: name}, obj))
			}).Should(BeTrue(), name)
		}
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, types.NamespacedName{Namespace: balancerNS, Name: "shop-proxy"}, &corev1.ConfigMap{}))
		}).Should(BeTrue())
		Eventually(func(g Gomega) {
			pods := &corev1.PodList{}
			g.Expect(k8sClient.List(ctx, pods, client.InNamespace(balancerNS),
				client.MatchingLabels{networkingv1alpha1.BalancerProxyLabel: "shop"})).To(Succeed())
			g.Expect(pods.Items).To(BeEmpty())
		}).Should(Succeed())
	})
})
