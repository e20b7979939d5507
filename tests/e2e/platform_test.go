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
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
)

const platformNS = "e2e-platform"

func acme(g Gomega) *appsv1alpha1.Platform {
	p := &appsv1alpha1.Platform{}
	g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: platformNS, Name: "acme"}, p)).To(Succeed())
	g.Expect(p.Status.ObservedGeneration).To(Equal(p.Generation))
	return p
}

// componentPods are the Running, not deleted pods of each component, by component.
func componentPods(g Gomega) map[string][]corev1.Pod {
	pods := &corev1.PodList{}
	g.Expect(k8sClient.List(ctx, pods, client.InNamespace(platformNS), client.MatchingLabels{appsv1alpha1.PlatformLabel: "acme"})).To(Succeed())
	by := map[string][]corev1.Pod{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning {
			c := p.Labels[appsv1alpha1.PlatformComponentLabel]
			by[c] = append(by[c], p)
		}
	}
	return by
}

var _ = Describe("Platform", Ordered, Label("platform"), func() {
	BeforeAll(func() {
		kubectlEventually("create", "namespace", platformNS)
	})

	It("should bring the five-component sample to Running with its pods Running", func() {
		_, err := kubectl("apply", "-n", platformNS, "-f", "config/samples/apps_v1alpha1_platform.yaml")
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			p := acme(g)
			g.Expect(p.Status.Phase).To(Equal(appsv1alpha1.PlatformRunning))
			g.Expect(p.Status.Version).To(Equal("1.0.0"))
			g.Expect(p.Status.Ready).To(Equal("5/5"))
		}, "3m").Should(Succeed())
		pods := componentPods(Default)
		Expect(pods["db"]).To(HaveLen(1))
		Expect(pods["identity"]).To(HaveLen(1))
		Expect(pods["api"]).To(HaveLen(2))
		Expect(pods["agent"]).To(HaveLen(3), "one per kwok node")
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: platformNS, Name: "acme-report"}, &batchv1.CronJob{})).To(Succeed())

		out, err := kubectl("get", "plat", "-n", platformNS, "acme", "--no-headers")
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(MatchRegexp(`^acme\s+1\.0\.0\s+Running\s+5/5\s+`))
	})

	It("should roll a version bump through the components in dependency order", func() {
		const newTag = ":1.1.0"
		// Watch pods and CronJobs and number the events: the first event
		// in which a component runs the new image gives its place in the
		// rollout. Within the pod stream the order is the API server's.
		pods := &corev1.PodList{}
		podWatch, err := watchClient.Watch(ctx, pods, client.InNamespace(platformNS), client.MatchingLabels{appsv1alpha1.PlatformLabel: "acme"})
		Expect(err).NotTo(HaveOccurred())
		defer podWatch.Stop()
		cronWatch, err := watchClient.Watch(ctx, &batchv1.CronJobList{}, client.InNamespace(platformNS))
		Expect(err).NotTo(HaveOccurred())
		defer cronWatch.Stop()

		type moved struct {
			seq int
			at  time.Duration
		}
		var mu sync.Mutex
		changed := map[string]moved{}
		stop, done := make(chan struct{}), make(chan struct{})
		start := time.Now()
		go func() {
			defer GinkgoRecover()
			defer close(done)
			seq := 0
			note := func(component, image string) {
				seq++
				if _, seen := changed[component]; !seen && strings.HasSuffix(image, newTag) {
					changed[component] = moved{seq, time.Since(start).Round(10 * time.Millisecond)}
				}
			}
			for {
				select {
				case <-stop:
					return
				case ev := <-podWatch.ResultChan():
					if p, ok := ev.Object.(*corev1.Pod); ok && len(p.Spec.Containers) > 0 {
						mu.Lock()
						note(p.Labels[appsv1alpha1.PlatformComponentLabel], p.Spec.Containers[0].Image)
						mu.Unlock()
					}
				case ev := <-cronWatch.ResultChan():
					// A CronJob has no pods until it fires: its template changes.
					if cj, ok := ev.Object.(*batchv1.CronJob); ok && cj.Name == "acme-report" {
						mu.Lock()
						note("report", cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image)
						mu.Unlock()
					}
				}
			}
		}()

		_, err = kubectl("patch", "-n", platformNS, "plat/acme", "--type", "merge", "-p", `{"spec":{"version":"1.1.0"}}`)
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			p := acme(g)
			g.Expect(p.Status.Version).To(Equal("1.1.0"))
			g.Expect(p.Status.Phase).To(Equal(appsv1alpha1.PlatformRunning))
		}, "3m").Should(Succeed())
		close(stop)
		<-done

		// Every pod runs the new tag.
		for c, pods := range componentPods(Default) {
			for _, p := range pods {
				Expect(p.Spec.Containers[0].Image).To(HaveSuffix(newTag), "%s pod %s", c, p.Name)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		names := make([]string, 0, len(changed))
		for c := range changed {
			names = append(names, c)
		}
		sort.Slice(names, func(i, j int) bool { return changed[names[i]].seq < changed[names[j]].seq })
		var report []string
		for _, c := range names {
			report = append(report, fmt.Sprintf("%s (event %d, +%s)", c, changed[c].seq, changed[c].at))
		}
		AddReportEntry("rollout order", strings.Join(report, ", "))
		GinkgoWriter.Printf("rollout order, first event on the new image after the patch: %s\n", strings.Join(report, ", "))
		Expect(changed).To(HaveLen(5))
		// dependsOn: identity → db; api → db, identity; report → api.
		Expect(changed["db"].seq).To(BeNumerically("<", changed["identity"].seq))
		Expect(changed["identity"].seq).To(BeNumerically("<", changed["api"].seq))
		Expect(changed["api"].seq).To(BeNumerically("<", changed["report"].seq))
	})

	It("should garbage-collect everything on delete, keeping the retained volume and deleting the other", func() {
		_, err := kubectl("delete", "-n", platformNS, "plat/acme", "--wait=true")
		Expect(err).NotTo(HaveOccurred())
		for name, obj := range map[string]client.Object{
			"acme-db": &appsv1.StatefulSet{}, "acme-identity": &appsv1.Deployment{}, "acme-api": &appsv1.Deployment{},
			"acme-agent": &appsv1.DaemonSet{}, "acme-report": &batchv1.CronJob{}, "acme-identity-config": &corev1.ConfigMap{},
			"acme-identity-data": &corev1.PersistentVolumeClaim{},
		} {
			key := types.NamespacedName{Namespace: platformNS, Name: name}
			Eventually(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, key, obj)) }, "2m").Should(BeTrue(), "%T %s", obj, name)
		}
		Eventually(func(g Gomega) { g.Expect(componentPods(g)).To(BeEmpty()) }, "2m").Should(Succeed())
		// db's volume has the default Retain policy: it outlives the Platform.
		pvc := &corev1.PersistentVolumeClaim{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: platformNS, Name: "data-acme-db-0"}, pvc)).To(Succeed())
		Expect(pvc.DeletionTimestamp).To(BeNil())
	})
})
