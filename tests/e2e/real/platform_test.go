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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/workload"
)

const lifecycleNS = "real-lifecycle"

// The Platform "life": db and api run the echoserver from
// kubeforge.test/echoserver:<version>. db's bootstrap Job calls db through
// its Service; its preUpgrade Job runs with the new image and resolves a
// cluster name. Version v2 is the same server; version unready never
// answers on :8080, so its readiness probe never passes.
var _ = Describe("Platform lifecycle on the real node", Ordered, Label("real"), func() {
	key := client.ObjectKey{Namespace: lifecycleNS, Name: "life"}
	status := func(g Gomega) (*appsv1alpha1.Platform, map[string]appsv1alpha1.ComponentStatus) {
		p := &appsv1alpha1.Platform{}
		g.Expect(k8sClient.Get(ctx, key, p)).To(Succeed())
		out := map[string]appsv1alpha1.ComponentStatus{}
		for _, c := range p.Status.Components {
			out[c.Name] = c
		}
		return p, out
	}
	imageOf := func(g Gomega, name string) string {
		d := &appsv1.Deployment{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: lifecycleNS, Name: "life-" + name}, d)).To(Succeed())
		return d.Spec.Template.Spec.Containers[0].Image
	}
	setVersion := func(v string) {
		Eventually(func() error {
			p := &appsv1alpha1.Platform{}
			if err := k8sClient.Get(ctx, key, p); err != nil {
				return err
			}
			p.Spec.Version = v
			return k8sClient.Update(ctx, p)
		}).Should(Succeed())
	}
	jobDone := func(g Gomega, name string) (bool, bool, string) {
		j := &batchv1.Job{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: lifecycleNS, Name: name}, j)).To(Succeed())
		done, ok, reason, msg := workload.JobResult(j)
		return done, ok, reason + " " + msg
	}

	BeforeAll(func() {
		restrictedNamespace(lifecycleNS)
		probe := &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}},
			PeriodSeconds: 1,
		}
		comp := func(name string, deps ...string) appsv1alpha1.PlatformComponent {
			return appsv1alpha1.PlatformComponent{
				Name: name, ImageName: "echoserver", DependsOn: deps, ReadinessProbe: probe,
				Env:   []corev1.EnvVar{{Name: "NAME", Value: name}},
				Ports: []appsv1alpha1.ComponentPort{{Name: "http", Port: 8080}},
			}
		}
		db := comp("db")
		db.Hooks = &appsv1alpha1.ComponentHooks{
			Bootstrap:  &appsv1alpha1.HookJob{Command: []string{"/echoserver", "get", "-wait", "1m", "-n", "3", "http://life-db:8080/"}},
			PreUpgrade: &appsv1alpha1.HookJob{Command: []string{"/echoserver", "lookup", "kubernetes.default.svc.cluster.local"}, BackoffLimit: ptr.To(int32(0))},
		}
		p := &appsv1alpha1.Platform{
			ObjectMeta: metav1.ObjectMeta{Namespace: lifecycleNS, Name: "life"},
			Spec: appsv1alpha1.PlatformSpec{
				ImageRepository: "kubeforge.test",
				Version:         "v1",
				Components:      []appsv1alpha1.PlatformComponent{db, comp("api", "db")},
				UpgradePolicy:   appsv1alpha1.PlatformUpgradePolicy{OnFailure: appsv1alpha1.UpgradeRollback, ProgressDeadlineSeconds: ptr.To(int32(15))},
			},
		}
		Expect(k8sClient.Create(ctx, p)).To(Succeed())
	})

	It("runs db's bootstrap Job once db is Ready, against db's own Service, before api starts", func() {
		Eventually(func(g Gomega) {
			done, ok, msg := jobDone(g, "life-db-bootstrap")
			g.Expect(done && ok).To(BeTrue(), "bootstrap Job: %s", msg)
			_, cs := status(g)
			g.Expect(cs["db"].Bootstrapped).To(BeTrue())
			g.Expect(cs["api"].Phase).To(Equal(appsv1alpha1.ComponentReady))
		}, "3m", time.Second).Should(Succeed())
		// The Pod that succeeded: a Job may have retried.
		pods := &corev1.PodList{}
		Expect(k8sClient.List(ctx, pods, client.InNamespace(lifecycleNS), client.MatchingLabels{"job-name": "life-db-bootstrap"},
			client.MatchingFields{"status.phase": string(corev1.PodSucceeded)})).To(Succeed())
		Expect(pods.Items).To(HaveLen(1))
		out, err := kubectl("-n", lifecycleNS, "logs", pods.Items[0].Name)
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(ContainSubstring("3 db"))
		Expect(out).To(ContainSubstring("errors 0"))
		// api was created only after the bootstrap finished.
		j := &batchv1.Job{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: lifecycleNS, Name: "life-db-bootstrap"}, j)).To(Succeed())
		api := &appsv1.Deployment{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: lifecycleNS, Name: "life-api"}, api)).To(Succeed())
		Expect(api.CreationTimestamp.Time).NotTo(BeTemporally("<", j.Status.CompletionTime.Time))
		appendArtifact("platform-lifecycle.txt", fmt.Sprintf("bootstrap Job completed %s, api created %s\n",
			j.Status.CompletionTime.Format(time.RFC3339), api.CreationTimestamp.Format(time.RFC3339)))
	})

	It("shows with kubectl kubeforge platform graph db before api, both Ready, and status waiting for nothing", func() {
		Eventually(func(g Gomega) {
			out, err := plugin("-n", lifecycleNS, "platform", "graph", "life")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(out).To(ContainSubstring("Platform real-lifecycle/life  Running  version v1, 2/2 components ready"))
			g.Expect(out).To(MatchRegexp(`(?m)^1\s+db\s+-\s+Deployment\s+Ready\s+1/1\s+kubeforge.test/echoserver:v1`))
			g.Expect(out).To(MatchRegexp(`(?m)^2\s+api\s+db\s+Deployment\s+Ready\s+1/1\s+kubeforge.test/echoserver:v1`))
			out, err = plugin("-n", lifecycleNS, "status", "platform/life")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(out).To(MatchRegexp(`(?m)^\s+Deployment\s+life-db\s+1/1 ready$`))
			g.Expect(out).To(MatchRegexp(`(?m)^\s+Job\s+life-db-bootstrap\s+Complete$`))
			g.Expect(out).To(ContainSubstring("Waiting for: nothing"))
		}, "1m", "2s").Should(Succeed())
	})

	It("runs db's preUpgrade Job with the new image before db moves to v2, then moves api", func() {
		setVersion("v2")
		name := ""
		Eventually(func(g Gomega) {
			jobs := &batchv1.JobList{}
			g.Expect(k8sClient.List(ctx, jobs, client.InNamespace(lifecycleNS), client.MatchingLabels{appsv1alpha1.PlatformHookLabel: "pre-upgrade"})).To(Succeed())
			g.Expect(jobs.Items).To(HaveLen(1))
			name = jobs.Items[0].Name
			g.Expect(jobs.Items[0].Spec.Template.Spec.Containers[0].Image).To(Equal("kubeforge.test/echoserver:v2"))
		}, "1m", time.Second).Should(Succeed())
		Eventually(func(g Gomega) {
			p, cs := status(g)
			g.Expect(p.Status.Version).To(Equal("v2"))
			g.Expect(cs["db"].Image).To(Equal("kubeforge.test/echoserver:v2"))
			g.Expect(cs["api"].Phase).To(Equal(appsv1alpha1.ComponentReady))
			g.Expect(imageOf(g, "api")).To(Equal("kubeforge.test/echoserver:v2"))
		}, "3m", time.Second).Should(Succeed())
		j := &batchv1.Job{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: lifecycleNS, Name: name}, j)).To(Succeed())
		rs := &appsv1.ReplicaSetList{}
		Expect(k8sClient.List(ctx, rs, client.InNamespace(lifecycleNS), client.MatchingLabels{appsv1alpha1.PlatformComponentLabel: "db"})).To(Succeed())
		for _, r := range rs.Items {
			if r.Spec.Template.Spec.Containers[0].Image == "kubeforge.test/echoserver:v2" {
				Expect(r.CreationTimestamp.Time).NotTo(BeTemporally("<", j.Status.CompletionTime.Time), "db moved to v2 before its migration finished")
			}
		}
	})

	It("rolls db back to v2 when the pods of version unready never turn Ready, and keeps api on v2", func() {
		// Version "unready" is the image that never answers on :8080.
		setVersion("unready")
		start := time.Now()
		Eventually(func(g Gomega) {
			p, cs := status(g)
			g.Expect(cs["db"].FailedImage).To(Equal("kubeforge.test/echoserver:unready"))
			g.Expect(cs["db"].Phase).To(Equal(appsv1alpha1.ComponentFailed))
			g.Expect(cs["db"].Message).To(ContainSubstring("Rolled back to kubeforge.test/echoserver:v2"))
			g.Expect(imageOf(g, "db")).To(Equal("kubeforge.test/echoserver:v2"))
			g.Expect(p.Status.Version).To(Equal("v2"))
			d := &appsv1.Deployment{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: lifecycleNS, Name: "life-db"}, d)).To(Succeed())
			g.Expect(d.Status.ObservedGeneration).To(Equal(d.Generation))
			g.Expect(d.Status.UpdatedReplicas).To(Equal(int32(1)))
			g.Expect(d.Status.AvailableReplicas).To(Equal(int32(1)))
		}, "3m", time.Second).Should(Succeed())
		Consistently(func(g Gomega) string { return imageOf(g, "api") }, "5s", time.Second).Should(Equal("kubeforge.test/echoserver:v2"))
		events, err := kubectl("-n", lifecycleNS, "get", "events.v1.events.k8s.io", "-o", `jsonpath={range .items[*]}{.reason}{" "}{.note}{"\n"}{end}`)
		Expect(err).NotTo(HaveOccurred())
		Expect(events).To(MatchRegexp(`UpgradeRolledBack db failed on kubeforge.test/echoserver:unready .*rolled it back to kubeforge.test/echoserver:v2`))
		_, cs := status(Default)
		appendArtifact("platform-lifecycle.txt", fmt.Sprintf("version unready: db rolled back to v2 and available %.1fs after the bump (progressDeadlineSeconds 15); db: %s\n",
			time.Since(start).Seconds(), strings.TrimSpace(cs["db"].Message)))
	})
})
