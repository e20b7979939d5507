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
	"sort"

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

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/conditions"
)

const ns = "e2e-podset"

// runningPods are the names of the sample's pods that are Running and not
// being deleted, sorted.
func runningPods(g Gomega) []string {
	pods := &corev1.PodList{}
	g.Expect(k8sClient.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{appsv1alpha1.PodSetNameLabel: "web"})).To(Succeed())
	var names []string
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			names = append(names, p.Name)
		}
	}
	sort.Strings(names)
	return names
}

func podSet(g Gomega) *appsv1alpha1.PodSet {
	ps := &appsv1alpha1.PodSet{}
	g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "web"}, ps)).To(Succeed())
	return ps
}

// converged checks that the PodSet runs n Running pods, lists exactly those
// in status, and is Ready.
func converged(n int) func(g Gomega) {
	return func(g Gomega) {
		names := runningPods(g)
		g.Expect(names).To(HaveLen(n))
		ps := podSet(g)
		g.Expect(ps.Status.PodNames).To(Equal(names))
		g.Expect(ps.Status.ReadyReplicas).To(Equal(int32(n)))
		g.Expect(ps.Status.ObservedGeneration).To(Equal(ps.Generation))
		g.Expect(meta.IsStatusConditionTrue(ps.Status.Conditions, conditions.Ready)).To(BeTrue())
	}
}

var _ = Describe("PodSet", Ordered, Label("podset"), func() {
	BeforeAll(func() {
		kubectlEventually("create", "namespace", ns)
	})

	It("should reject bad input through the webhooks, called over HTTPS", func() {
		bad := `{"apiVersion":"apps.kubeforge.io/v1alpha1","kind":"PodSet","metadata":{"name":"bad","namespace":"` + ns + `"},` +
			`"spec":{"template":{"spec":{"containers":[{"name":"Bad_Name","image":"nginx"}]}}}}`
		_, err := kubectlStdin(bad, "apply", "-f", "-")
		// The CRD schema does not check container names; only our validating
		// webhook does, so this error proves the API server reached it.
		Expect(err).To(MatchError(ContainSubstring(`spec.template.spec.containers[0].name: Invalid value: "Bad_Name"`)))
		Expect(err).To(MatchError(ContainSubstring("RFC 1123 label")))
	})

	It("should run the sample's pods and list their names in status", func() {
		_, err := kubectl("apply", "-n", ns, "-f", "config/samples/apps_v1alpha1_podset.yaml")
		Expect(err).NotTo(HaveOccurred())
		Eventually(converged(3)).Should(Succeed())

		out, err := kubectl("get", "pset", "-n", ns, "web", "--no-headers")
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(MatchRegexp(`^web\s+3\s+3\s+`))
		out, err = kubectl("get", "kubeforge", "-n", ns, "-o", "name")
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(ContainSubstring("podset.apps.kubeforge.io/web"))
	})

	It("should scale with kubectl scale, up and down", func() {
		_, err := kubectl("scale", "-n", ns, "pset/web", "--replicas", "5")
		Expect(err).NotTo(HaveOccurred())
		Eventually(converged(5)).Should(Succeed())

		_, err = kubectl("scale", "-n", ns, "pset/web", "--replicas", "2")
		Expect(err).NotTo(HaveOccurred())
		Eventually(converged(2)).Should(Succeed())
	})

	It("should undo a hand edit of its Deployment", func() {
		_, err := kubectl("scale", "-n", ns, "deployment/web", "--replicas", "1")
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) int32 {
			d := &appsv1.Deployment{}
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "web"}, d)).To(Succeed())
			return *d.Spec.Replicas
		}).Should(Equal(int32(2)))
		Eventually(converged(2)).Should(Succeed())
	})

	It("should be scaled by a HorizontalPodAutoscaler through the scale subresource", func() {
		// Below minReplicas the HPA controller scales up without needing metrics.
		hpa := &autoscalingv2.HorizontalPodAutoscaler{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{
					APIVersion: "apps.kubeforge.io/v1alpha1", Kind: "PodSet", Name: "web",
				},
				MinReplicas: new(int32(4)),
				MaxReplicas: 6,
			},
		}
		Expect(k8sClient.Create(ctx, hpa)).To(Succeed())
		Eventually(converged(4)).Should(Succeed())
		Eventually(func(g Gomega) int32 { return *podSet(g).Spec.Replicas }).Should(Equal(int32(4)))
		Expect(k8sClient.Delete(ctx, hpa)).To(Succeed())
	})

	It("should garbage-collect the Deployment and its pods when the PodSet is deleted", func() {
		_, err := kubectl("delete", "-n", ns, "pset/web", "--wait=true")
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() bool {
			err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "web"}, &appsv1.Deployment{})
			return apierrors.IsNotFound(err)
		}).Should(BeTrue())
		Eventually(func(g Gomega) {
			pods := &corev1.PodList{}
			g.Expect(k8sClient.List(ctx, pods, client.InNamespace(ns))).To(Succeed())
			g.Expect(pods.Items).To(BeEmpty())
		}).Should(Succeed())
	})
})
