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
	"fmt"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
)

// badPodSet is refused by the validating webhook alone (the CRD's schema
// accepts it): its container's name is not a DNS label.
func badPodSet(name string) *appsv1alpha1.PodSet {
	return &appsv1alpha1.PodSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: appsv1alpha1.PodSetSpec{
			Replicas: ptr.To(int32(1)),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "Bad_Name", Image: echoImage}}},
			},
		},
	}
}

const badPodSetError = `spec.template.spec.containers[0].name: Invalid value: "Bad_Name"`

// leaderPod is the Pod named by the leader-election Lease.
func leaderPod(g Gomega) string {
	lease := &coordinationv1.Lease{}
	g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: managerNS, Name: leaseName}, lease)).To(Succeed())
	g.Expect(lease.Spec.HolderIdentity).NotTo(BeNil())
	holder, _, _ := strings.Cut(*lease.Spec.HolderIdentity, "_")
	g.Expect(holder).NotTo(BeEmpty())
	return holder
}

var _ = Describe("Admission through the webhook Service", Ordered, Label("real"), func() {
	It("runs the manager as two Pods of its image on the real node, with certificates from cert-manager", func() {
		pods := &corev1.PodList{}
		Expect(k8sClient.List(ctx, pods, client.InNamespace(managerNS), client.MatchingLabels{"control-plane": "controller-manager"})).To(Succeed())
		Expect(pods.Items).To(HaveLen(2))
		for _, p := range pods.Items {
			Expect(p.Spec.Containers[0].Image).To(Equal("ghcr.io/kubeforge/kubeforge:v0.1.0"))
			Expect(p.Status.ContainerStatuses[0].Ready).To(BeTrue())
			node := &corev1.Node{}
			Expect(k8sClient.Get(ctx, client.ObjectKey{Name: p.Spec.NodeName}, node)).To(Succeed())
			Expect(node.Labels).To(HaveKeyWithValue(realNodeLabel, "real"), "the manager must run on the real node")
		}
		out, err := kubectl("get", "validatingwebhookconfiguration", "kubeforge-validating-webhook-configuration",
			"-o", "jsonpath={.webhooks[0].clientConfig.service.name} {.webhooks[0].clientConfig.caBundle}")
		Expect(err).NotTo(HaveOccurred())
		svc, bundle, _ := strings.Cut(out, " ")
		Expect(svc).To(Equal("kubeforge-webhook-service"))
		Expect(bundle).NotTo(BeEmpty(), "cert-manager's CA injector fills in the CA bundle")
	})

	It("refuses a bad PodSet with the field error", func() {
		err := k8sClient.Create(ctx, badPodSet("bad"))
		Expect(err).To(MatchError(ContainSubstring(badPodSetError)))
	})

	It("moves leadership when the leader Pod is deleted, and admission answers throughout", func() {
		var old string
		Eventually(func(g Gomega) { old = leaderPod(g) }).Should(Succeed())

		// Admission requests every 200 ms (server-side dry runs: the
		// webhooks run, nothing is stored) from before the deletion until
		// leadership has moved and the Deployment has its two Pods back;
		// bounded at 3 minutes.
		var (
			mu       sync.Mutex
			answered int
			failures []string
		)
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer GinkgoRecover()
			defer close(done)
			deadline := time.Now().Add(3 * time.Minute)
			for i := 0; time.Now().Before(deadline); i++ {
				select {
				case <-stop:
					return
				case <-time.After(200 * time.Millisecond):
				}
				err := k8sClient.Create(ctx, badPodSet(fmt.Sprintf("bad-%d", i)), client.DryRunAll)
				mu.Lock()
				if err != nil && strings.Contains(err.Error(), badPodSetError) {
					answered++
				} else {
					failures = append(failures, fmt.Sprintf("%s: %v", time.Now().Format(time.StampMilli), err))
				}
				mu.Unlock()
			}
		}()

		t0 := time.Now()
		_, err := kubectl("-n", managerNS, "delete", "pod", old, "--wait=false")
		Expect(err).NotTo(HaveOccurred())
		var leader string
		Eventually(func(g Gomega) {
			leader = leaderPod(g)
			g.Expect(leader).NotTo(Equal(old))
		}, "90s", "250ms").Should(Succeed())
		moved := time.Since(t0)
		Eventually(func(g Gomega) {
			pods := &corev1.PodList{}
			g.Expect(k8sClient.List(ctx, pods, client.InNamespace(managerNS), client.MatchingLabels{"control-plane": "controller-manager"})).To(Succeed())
			ready := 0
			for _, p := range pods.Items {
				if p.Name == old {
					continue
				}
				for _, c := range p.Status.Conditions {
					if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
						ready++
					}
				}
			}
			g.Expect(ready).To(Equal(2))
		}, "3m", "1s").Should(Succeed())
		close(stop)
		<-done
		appendArtifact("figures.txt", fmt.Sprintf("leadership moved from %s to %s in %.1fs after the leader Pod was deleted; %d admission answers, %d failures\n",
			old, leader, moved.Seconds(), answered, len(failures)))
		mu.Lock()
		defer mu.Unlock()
		Expect(failures).To(BeEmpty(), "admission requests that got no field error")
		Expect(answered).To(BeNumerically(">", 10))
	})
})
