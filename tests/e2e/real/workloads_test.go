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

package real

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
)

const workloadsNS = "real-workloads"

// echoPodSet runs the echoserver with a readiness probe on path.
func echoPodSet(name, probePath string) *appsv1alpha1.PodSet {
	ps := &appsv1alpha1.PodSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: workloadsNS, Name: name},
		Spec: appsv1alpha1.PodSetSpec{
			Replicas: ptr.To(int32(2)),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: ptr.To(int64(1)),
					Containers: []corev1.Container{{
						Name:  "echo",
						Image: echoImage,
						Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
						ReadinessProbe: &corev1.Probe{
							ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: probePath, Port: intstr.FromString("http")}},
							PeriodSeconds: 1,
						},
					}},
				},
			},
		},
	}
	restricted(&ps.Spec.Template.Spec)
	return ps
}

func podsOf(g Gomega, app string) []corev1.Pod {
	pods := &corev1.PodList{}
	g.Expect(k8sClient.List(ctx, pods, client.InNamespace(workloadsNS), client.MatchingLabels{"app": app})).To(Succeed())
	return pods.Items
}

func podReady(p corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

var _ = Describe("Workloads on the real node", Ordered, Label("real"), func() {
	BeforeAll(func() {
		restrictedNamespace(workloadsNS)
	})

	It("runs a PodSet's containers, Ready by their readiness probe, with logs and exec", func() {
		Expect(k8sClient.Create(ctx, echoPodSet("echo", "/healthz"))).To(Succeed())
		Eventually(func(g Gomega) {
			ps := &appsv1alpha1.PodSet{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: workloadsNS, Name: "echo"}, ps)).To(Succeed())
			g.Expect(ps.Status.ReadyReplicas).To(Equal(int32(2)))
		}).Should(Succeed())
		var pods []corev1.Pod
		Eventually(func(g Gomega) { pods = podsOf(g, "echo") }).Should(Succeed())
		for _, p := range pods {
			node := &corev1.Node{}
			Expect(k8sClient.Get(ctx, client.ObjectKey{Name: p.Spec.NodeName}, node)).To(Succeed())
			Expect(node.Labels).To(HaveKeyWithValue(realNodeLabel, "real"))
			Expect(p.Status.ContainerStatuses[0].State.Running).NotTo(BeNil())
			Expect(p.Status.PodIP).To(HavePrefix("10.244."))
		}
		name := pods[0].Name

		By("kubectl logs: what the container printed")
		Eventually(func(g Gomega) {
			out, err := kubectl("-n", workloadsNS, "logs", name)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(out).To(ContainSubstring(`echoserver "` + name + `" listening on :8080`))
		}, "30s").Should(Succeed())

		By("kubectl exec: cluster DNS and a Service from inside the pod")
		out, err := kubectl("-n", workloadsNS, "exec", name, "--", "/echoserver", "lookup", "kubernetes.default.svc.cluster.local")
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.TrimSpace(out)).To(Equal("10.96.0.1"))
		out, err = kubectl("-n", workloadsNS, "exec", name, "--", "/echoserver", "get", "-n", "4", "http://"+pods[1].Status.PodIP+":8080/")
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(ContainSubstring("4 " + pods[1].Name))
		Expect(out).To(ContainSubstring("errors 0"))
	})

	It("keeps a PodSet whose readiness probe fails not Ready", func() {
		Expect(k8sClient.Create(ctx, echoPodSet("unready", "/status/503"))).To(Succeed())
		Eventually(func(g Gomega) {
			pods := podsOf(g, "unready")
			g.Expect(pods).To(HaveLen(2))
			for _, p := range pods {
				g.Expect(p.Status.ContainerStatuses).NotTo(BeEmpty())
				g.Expect(p.Status.ContainerStatuses[0].State.Running).NotTo(BeNil())
			}
		}).Should(Succeed())
		// The probe runs every second: ten seconds of Running is ten failed probes.
		Consistently(func(g Gomega) {
			ps := &appsv1alpha1.PodSet{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: workloadsNS, Name: "unready"}, ps)).To(Succeed())
			g.Expect(ps.Status.ReadyReplicas).To(BeZero())
			for _, p := range podsOf(g, "unready") {
				g.Expect(podReady(p)).To(BeFalse())
			}
		}, "10s", "1s").Should(Succeed())
	})

	It("holds a Platform's dependents back while a component's readiness probe fails, and lets them go when it passes", func() {
		probe := func(path string) *corev1.Probe {
			return &corev1.Probe{
				ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromString("http")}},
				PeriodSeconds: 1,
			}
		}
		component := func(name string, p *corev1.Probe, deps ...string) appsv1alpha1.PlatformComponent {
			return appsv1alpha1.PlatformComponent{
				Name: name, Image: echoImage, DependsOn: deps, ReadinessProbe: p,
				Ports: []appsv1alpha1.ComponentPort{{Name: "http", Port: 8080}},
			}
		}
		p := &appsv1alpha1.Platform{
			ObjectMeta: metav1.ObjectMeta{Namespace: workloadsNS, Name: "shop"},
			Spec: appsv1alpha1.PlatformSpec{
				ImageRepository: "kubeforge.test",
				Version:         "1.0.0",
				Components: []appsv1alpha1.PlatformComponent{
					component("api", probe("/status/503")),
					component("web", probe("/healthz"), "api"),
				},
			},
		}
		Expect(k8sClient.Create(ctx, p)).To(Succeed())
		phases := func(g Gomega) map[string]appsv1alpha1.ComponentStatus {
			got := &appsv1alpha1.Platform{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(p), got)).To(Succeed())
			out := map[string]appsv1alpha1.ComponentStatus{}
			for _, c := range got.Status.Components {
				out[c.Name] = c
			}
			return out
		}
		By("api runs but its probe fails: api is not Ready, web waits and has no workload")
		Eventually(func(g Gomega) {
			s := phases(g)
			g.Expect(s["api"].Replicas).To(BeNumerically(">", 0))
			g.Expect(s["api"].Phase).To(Equal(appsv1alpha1.ComponentDeploying))
			g.Expect(s["web"].Phase).To(Equal(appsv1alpha1.ComponentWaiting))
			for _, pod := range podsOfComponent(g, "api") {
				g.Expect(pod.Status.ContainerStatuses).NotTo(BeEmpty())
				g.Expect(pod.Status.ContainerStatuses[0].State.Running).NotTo(BeNil())
			}
		}).Should(Succeed())
		Consistently(func(g Gomega) {
			s := phases(g)
			g.Expect(s["api"].ReadyReplicas).To(BeZero())
			g.Expect(s["web"].Phase).To(Equal(appsv1alpha1.ComponentWaiting))
			err := k8sClient.Get(ctx, client.ObjectKey{Namespace: workloadsNS, Name: "shop-web"}, &appsv1.Deployment{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "web must not be deployed before api is Ready: %v", err)
		}, "8s", "1s").Should(Succeed())

		By("api's probe passes: api turns Ready, then web is deployed and turns Ready")
		Eventually(func() error {
			got := &appsv1alpha1.Platform{}
			if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(p), got); err != nil {
				return err
			}
			got.Spec.Components[0].ReadinessProbe = probe("/healthz")
			return k8sClient.Update(ctx, got)
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			s := phases(g)
			g.Expect(s["api"].Phase).To(Equal(appsv1alpha1.ComponentReady))
			g.Expect(s["web"].Phase).To(Equal(appsv1alpha1.ComponentReady))
		}, "2m", time.Second).Should(Succeed())
	})
})

// podsOfComponent lists the pods of a component of the Platform "shop".
func podsOfComponent(g Gomega, component string) []corev1.Pod {
	pods := &corev1.PodList{}
	g.Expect(k8sClient.List(ctx, pods, client.InNamespace(workloadsNS),
		client.MatchingLabels{appsv1alpha1.PlatformLabel: "shop", appsv1alpha1.PlatformComponentLabel: component})).To(Succeed())
	g.Expect(pods.Items).NotTo(BeEmpty())
	return pods.Items
}
