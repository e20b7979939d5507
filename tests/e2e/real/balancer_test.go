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
	"io"
	"net"
	"net/http"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/kubeforge/kubeforge/api/networking/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/conditions"
)

const balancerNS = "real-balancer"

// backendDeployment is one group of backend pods: the echoserver answering
// its group's name.
func backendDeployment(name string) *appsv1.Deployment {
	labels := map[string]string{"app": "web", "version": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: balancerNS, Name: "web-" + name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: ptr.To(int64(1)),
					Containers: []corev1.Container{{
						Name:  "echo",
						Image: echoImage,
						Env:   []corev1.EnvVar{{Name: "NAME", Value: name}},
						Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
						ReadinessProbe: &corev1.Probe{
							ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}},
							PeriodSeconds: 1,
						},
					}},
				},
			},
		},
	}
	restricted(&d.Spec.Template.Spec)
	return d
}

// get makes n requests, one connection each, and counts the answers by
// body; errors counts failed requests, by error.
func get(url string, n int) (map[string]int, map[string]int) {
	counts, errors := map[string]int{}, map[string]int{}
	for i := 0; i < n; i++ {
		name, err := getOne(url)
		if err != nil {
			errors[err.Error()]++
			continue
		}
		counts[name]++
	}
	return counts, errors
}

func getOne(url string) (string, error) {
	resp, err := httpClient.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s", resp.Status)
	}
	return strings.TrimSpace(string(b)), nil
}

// expectSplit checks that each backend got its weight's share of n
// requests, within 3 percentage points, and returns the split as text.
func expectSplit(counts, errors map[string]int, n int, weights map[string]int) string {
	Expect(errors).To(BeEmpty(), "failed requests")
	total := 0
	for _, w := range weights {
		total += w
	}
	var parts []string
	for name, w := range weights {
		want := 100 * float64(w) / float64(total)
		got := 100 * float64(counts[name]) / float64(n)
		parts = append(parts, fmt.Sprintf("%s %.1f%% (weight %.0f%%)", name, got, want))
		Expect(got).To(BeNumerically("~", want, 3), "backend %s: %.1f%% of %d requests, weight %.0f%%", name, got, n, want)
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

var _ = Describe("Balancer on the real node", Ordered, Label("real"), func() {
	var frontend string
	setWeights := func(weights map[string]int32) {
		Eventually(func() error {
			b := &networkingv1alpha1.Balancer{}
			if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: balancerNS, Name: "web"}, b); err != nil {
				return err
			}
			for i := range b.Spec.Backends {
				b.Spec.Backends[i].Weight = ptr.To(weights[b.Spec.Backends[i].Name])
			}
			return k8sClient.Update(ctx, b)
		}).Should(Succeed())
	}
	// rolledOut waits until the proxy Deployment runs only Pods of its
	// current template, all Ready, and returns their names.
	rolledOut := func() []string {
		var names []string
		Eventually(func(g Gomega) {
			d := &appsv1.Deployment{}
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: balancerNS, Name: "web-proxy"}, d)).To(Succeed())
			g.Expect(d.Status.ObservedGeneration).To(Equal(d.Generation))
			g.Expect(d.Status.UpdatedReplicas).To(Equal(*d.Spec.Replicas))
			g.Expect(d.Status.ReadyReplicas).To(Equal(*d.Spec.Replicas))
			g.Expect(d.Status.Replicas).To(Equal(*d.Spec.Replicas), "old proxy Pods are still there")
			pods := &corev1.PodList{}
			g.Expect(k8sClient.List(ctx, pods, client.InNamespace(balancerNS),
				client.MatchingLabels{networkingv1alpha1.BalancerProxyLabel: "web"})).To(Succeed())
			names = nil
			for _, p := range pods.Items {
				g.Expect(p.DeletionTimestamp).To(BeNil(), "a proxy Pod is still terminating")
				g.Expect(p.Annotations[networkingv1alpha1.ConfigHashAnnotation]).To(Equal(d.Spec.Template.Annotations[networkingv1alpha1.ConfigHashAnnotation]))
				names = append(names, p.Name)
			}
			g.Expect(names).To(HaveLen(int(*d.Spec.Replicas)))
		}, "3m", "1s").Should(Succeed())
		sort.Strings(names)
		return names
	}

	BeforeAll(func() {
		restrictedNamespace(balancerNS)
		for _, name := range []string{"a", "b", "c"} {
			Expect(k8sClient.Create(ctx, backendDeployment(name))).To(Succeed())
		}
		b := &networkingv1alpha1.Balancer{
			ObjectMeta: metav1.ObjectMeta{Namespace: balancerNS, Name: "web"},
			Spec: networkingv1alpha1.BalancerSpec{
				Selector: map[string]string{"app": "web"},
				Backends: []networkingv1alpha1.BalancerBackend{
					{Name: "a", Weight: ptr.To(int32(20)), Selector: map[string]string{"version": "a"}},
					{Name: "b", Weight: ptr.To(int32(30)), Selector: map[string]string{"version": "b"}},
					{Name: "c", Weight: ptr.To(int32(50)), Selector: map[string]string{"version": "c"}},
				},
				Ports:    []networkingv1alpha1.BalancerPort{{Name: "http", Port: 80, TargetPort: new(intstr.FromString("http"))}},
				Replicas: ptr.To(int32(2)),
			},
		}
		Expect(k8sClient.Create(ctx, b)).To(Succeed())
		svc := &corev1.Service{}
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: balancerNS, Name: "web"}, svc)).To(Succeed())
			g.Expect(svc.Spec.ClusterIP).NotTo(BeEmpty())
		}).Should(Succeed())
		frontend = "http://" + svc.Spec.ClusterIP + "/"
		rolledOut()
		Eventually(func(g Gomega) {
			for _, name := range []string{"a", "b", "c"} {
				d := &appsv1.Deployment{}
				g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: balancerNS, Name: "web-" + name}, d)).To(Succeed())
				g.Expect(d.Status.ReadyReplicas).To(Equal(int32(1)))
			}
		}).Should(Succeed())
		// Serving: kube-proxy has the proxy Pods behind the ClusterIP
		// (a second or so after they are Ready) and nginx has resolved
		// every backend. A backend tried before kube-proxy routed its
		// Service counts as failed in that proxy Pod (passive health), and
		// sits out failTimeout (10s): wait until both proxies use all three.
		Eventually(func(g Gomega) {
			counts, errors := get(frontend, 300)
			g.Expect(errors).To(BeEmpty())
			for name, w := range map[string]float64{"a": 20, "b": 30, "c": 50} {
				g.Expect(100*float64(counts[name])/300).To(BeNumerically("~", w, 8), "backend %s: %v", name, counts)
			}
		}, "1m", "1s").Should(Succeed())
	})

	It("splits 2,000 requests through the front-end Service's ClusterIP by the weights 20/30/50", func() {
		counts, errors := get(frontend, 2000)
		split := expectSplit(counts, errors, 2000, map[string]int{"a": 20, "b": 30, "c": 50})
		appendArtifact("figures.txt", "Balancer split of 2000 requests, weights 20/30/50: "+split+"\n")
	})

	It("shows with kubectl kubeforge balancer split each backend's weight 20/30/50, its one ready endpoint and its share", func() {
		out, err := plugin("-n", balancerNS, "balancer", "split", "web")
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(ContainSubstring("Balancer real-balancer/web: proxy 2/2 ready"))
		Expect(out).To(MatchRegexp(`(?m)^a\s+web-a\s+20\s+20%\s+1\s+20%$`))
		Expect(out).To(MatchRegexp(`(?m)^b\s+web-b\s+30\s+30%\s+1\s+30%$`))
		Expect(out).To(MatchRegexp(`(?m)^c\s+web-c\s+50\s+50%\s+1\s+50%$`))
		out, err = plugin("-n", balancerNS, "status", "bal/web")
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(MatchRegexp(`(?m)^\s+Deployment\s+web-proxy\s+2/2 ready$`))
		Expect(out).To(MatchRegexp(`(?m)^\s+Service\s+web-a\s+ClusterIP \d+\.`))
		Expect(out).To(MatchRegexp(`(?m)^\s+Ready\s+True\s`))
		Expect(out).To(ContainSubstring("Waiting for: nothing"))
	})

	It("keeps the split 20/30/50 in a proxy Pod started after someone rewrote the proxy's ConfigMap and stripped its seal", func() {
		proxies := rolledOut()
		By("someone who may write ConfigMaps sends every connection to backend a, and removes the seal in the same write")
		cm := &corev1.ConfigMap{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: balancerNS, Name: "web-proxy"}, cm)).To(Succeed())
		var onlyA []string
		for _, line := range strings.Split(cm.Data["nginx.conf"], "\n") {
			if !strings.Contains(line, "# backend b") && !strings.Contains(line, "# backend c") {
				onlyA = append(onlyA, line)
			}
		}
		cm.Data["nginx.conf"] = strings.Join(onlyA, "\n")
		cm.Annotations = nil
		Expect(k8sClient.Update(ctx, cm)).To(Succeed())

		By("a proxy Pod starts anew")
		Expect(k8sClient.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: balancerNS, Name: proxies[0]}})).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(rolledOut()).NotTo(ContainElement(proxies[0]))
		}, "2m", "1s").Should(Succeed())
		// Behind the ClusterIP (kube-proxy has it a second or so after Ready).
		Eventually(func(g Gomega) {
			counts, errors := get(frontend, 100)
			g.Expect(errors).To(BeEmpty())
			g.Expect(counts).To(HaveLen(3))
		}, "1m", "1s").Should(Succeed())
		counts, errors := get(frontend, 1000)
		// A proxy that read the rewritten file would send its half of the
		// connections to a alone: a ≈ 60 %.
		split := expectSplit(counts, errors, 1000, map[string]int{"a": 20, "b": 30, "c": 50})
		appendArtifact("figures.txt", "Balancer split of 1000 requests with a proxy Pod started after its ConfigMap was rewritten: "+split+"\n")
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: balancerNS, Name: "web-proxy"}, cm)).To(Succeed())
		Expect(cm.Data["nginx.conf"]).NotTo(ContainSubstring("# backend b"), "no longer sealed: left as it was written")

		By("the rewritten ConfigMap deleted, the Balancer makes its own again")
		Expect(k8sClient.Delete(ctx, cm)).To(Succeed())
		Eventually(func(g Gomega) {
			got := &corev1.ConfigMap{}
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: balancerNS, Name: "web-proxy"}, got)).To(Succeed())
			g.Expect(got.Data["nginx.conf"]).To(ContainSubstring("# backend b"))
			b := &networkingv1alpha1.Balancer{}
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: balancerNS, Name: "web"}, b)).To(Succeed())
			g.Expect(meta.IsStatusConditionFalse(b.Status.Conditions, conditions.Degraded)).To(BeTrue())
		}, "1m", "1s").Should(Succeed())
	})

	It("shifts the split after a weight change, with no failed request during the proxy's roll", func() {
		before := rolledOut()
		// Requests without pause while the proxy rolls; bounded by count
		// and time.
		var sent, failed atomic.Int64
		var firstErr atomic.Value
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer GinkgoRecover()
			defer close(done)
			deadline := time.Now().Add(4 * time.Minute)
			for sent.Load() < 100000 && time.Now().Before(deadline) {
				select {
				case <-stop:
					return
				default:
				}
				sent.Add(1)
				if _, err := getOne(frontend); err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
				}
			}
		}()
		time.Sleep(time.Second)
		setWeights(map[string]int32{"a": 50, "b": 30, "c": 20})
		Eventually(func() []string { return rolledOut() }, "3m", "1s").ShouldNot(Equal(before))
		after := rolledOut()
		for _, name := range before {
			Expect(after).NotTo(ContainElement(name), "every proxy Pod is replaced")
		}
		close(stop)
		<-done
		appendArtifact("figures.txt", fmt.Sprintf("during the proxy's roll after a weight change: %d requests, %d failed\n", sent.Load(), failed.Load()))
		Expect(failed.Load()).To(BeZero(), "requests failed during the roll, the first: %v", firstErr.Load())
		Expect(sent.Load()).To(BeNumerically(">", 100))

		counts, errors := get(frontend, 2000)
		split := expectSplit(counts, errors, 2000, map[string]int{"a": 50, "b": 30, "c": 20})
		appendArtifact("figures.txt", "Balancer split of 2000 requests after the change to 50/30/20: "+split+"\n")
	})

	It("sends traffic to a backend Service made again with a new ClusterIP, without a proxy restart", func() {
		proxies := rolledOut()
		restarts := func() map[string]int32 {
			pods := &corev1.PodList{}
			Expect(k8sClient.List(ctx, pods, client.InNamespace(balancerNS),
				client.MatchingLabels{networkingv1alpha1.BalancerProxyLabel: "web"})).To(Succeed())
			out := map[string]int32{}
			for _, p := range pods.Items {
				out[p.Name] = p.Status.ContainerStatuses[0].RestartCount
			}
			return out
		}
		before := restarts()
		old := &corev1.Service{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: balancerNS, Name: "web-b"}, old)).To(Succeed())
		Expect(k8sClient.Delete(ctx, old)).To(Succeed())
		Eventually(func(g Gomega) {
			svc := &corev1.Service{}
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: balancerNS, Name: "web-b"}, svc)).To(Succeed())
			g.Expect(svc.UID).NotTo(Equal(old.UID))
			g.Expect(svc.Spec.ClusterIP).NotTo(Equal(old.Spec.ClusterIP))
		}).Should(Succeed())
		t0 := time.Now()
		Eventually(func(g Gomega) {
			counts, errors := get(frontend, 100)
			g.Expect(errors).To(BeEmpty())
			g.Expect(counts["b"]).To(BeNumerically(">=", 20), "backend b (weight 30 of 100) gets traffic again: %v", counts)
		}, "1m", "1s").Should(Succeed())
		appendArtifact("figures.txt", fmt.Sprintf("backend Service made again: traffic back %.1fs after its new ClusterIP\n", time.Since(t0).Seconds()))
		Expect(rolledOut()).To(Equal(proxies), "the proxy Pods are the same")
		Expect(restarts()).To(Equal(before), "no proxy container restarted")
	})

	It("takes a backend whose pods stop answering out without a failed request, and gives it its share back when they answer", func() {
		rolledOut()
		scaleB := func(n int32) {
			Eventually(func() error {
				d := &appsv1.Deployment{}
				if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: balancerNS, Name: "web-b"}, d); err != nil {
					return err
				}
				d.Spec.Replicas = ptr.To(n)
				return k8sClient.Update(ctx, d)
			}).Should(Succeed())
			Eventually(func(g Gomega) {
				d := &appsv1.Deployment{}
				g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: balancerNS, Name: "web-b"}, d)).To(Succeed())
				g.Expect(d.Status.ObservedGeneration).To(Equal(d.Generation))
				g.Expect(d.Status.Replicas).To(Equal(n))
				g.Expect(d.Status.ReadyReplicas).To(Equal(n))
				pods := &corev1.PodList{}
				g.Expect(k8sClient.List(ctx, pods, client.InNamespace(balancerNS), client.MatchingLabels{"app": "web", "version": "b"})).To(Succeed())
				g.Expect(pods.Items).To(HaveLen(int(n)))
			}, "2m", "500ms").Should(Succeed())
		}
		By("b's pods are gone: its Service refuses connections")
		scaleB(0)
		// Until kube-proxy has synced, b's ClusterIP still leads to the
		// address of a Pod that is gone, where a connect hangs rather than
		// fails. Wait for its rule that refuses them.
		Eventually(func(g Gomega) {
			out, err := exec.Command("iptables-save", "-t", "filter").CombinedOutput()
			g.Expect(err).NotTo(HaveOccurred(), "%s", out)
			g.Expect(string(out)).To(MatchRegexp(`"%s/web-b:[^"]* has no endpoints"[^\n]*-j REJECT`, balancerNS))
		}, "30s", "200ms").Should(Succeed())
		counts, errors := get(frontend, 1000)
		appendArtifact("figures.txt", fmt.Sprintf("backend b stopped answering (weights 50/30/20, passive health 3 failures/10s): 1000 requests, %d failed, a %d, b %d, c %d\n",
			len(errors), counts["a"], counts["b"], counts["c"]))
		Expect(errors).To(BeEmpty(), "the attempts on b are retried on the others")
		Expect(counts["b"]).To(BeZero())
		Expect(100*float64(counts["a"])/1000).To(BeNumerically("~", 100*50.0/70, 4), "b's share goes to a and c by their weights")

		By("b answers again: it gets its share back within failTimeout")
		scaleB(1)
		t0 := time.Now()
		Eventually(func() string { name, _ := getOne(frontend); return name }, "30s", "100ms").Should(Equal("b"))
		back := time.Since(t0)
		// Each proxy Pod keeps its own count of failures: b is back in the
		// other one by failTimeout after that one last tried it.
		Eventually(func(g Gomega) {
			counts, errors := get(frontend, 300)
			g.Expect(errors).To(BeEmpty())
			g.Expect(100 * float64(counts["b"]) / 300).To(BeNumerically("~", 30, 6))
		}, "30s", "1s").Should(Succeed())
		everywhere := time.Since(t0)
		counts, errors = get(frontend, 2000)
		split := expectSplit(counts, errors, 2000, map[string]int{"a": 50, "b": 30, "c": 20})
		appendArtifact("figures.txt", fmt.Sprintf("backend b answering again: first request %.1fs after its pod was Ready, its full share through both proxies after %.1fs; then %s\n",
			back.Seconds(), everywhere.Seconds(), split))
		Expect(back).To(BeNumerically("<", 20*time.Second), "failTimeout is 10s")
		Expect(everywhere).To(BeNumerically("<", 30*time.Second), "failTimeout is 10s")
	})

	It("keeps every connection of a client address on one backend with sessionAffinity ClientIP", func() {
		// Twelve client Pods, each its own source address, started while
		// the proxy rolls. They call the proxy Pods directly: this node's
		// kube-proxy masquerades Service traffic (masqueradeAll), so through
		// the ClusterIP nginx would see one address for all of them.
		const nClients = 12
		clients := backendDeployment("client")
		clients.Name = "clients"
		clients.Spec.Replicas = ptr.To(int32(nClients))
		for _, l := range []map[string]string{clients.Spec.Selector.MatchLabels, clients.Spec.Template.Labels} {
			l["app"], l["version"] = "client", "client"
		}
		Expect(k8sClient.Create(ctx, clients)).To(Succeed())

		before := rolledOut()
		Eventually(func() error {
			b := &networkingv1alpha1.Balancer{}
			if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: balancerNS, Name: "web"}, b); err != nil {
				return err
			}
			b.Spec.SessionAffinity = networkingv1alpha1.SessionAffinityClientIP
			return k8sClient.Update(ctx, b)
		}).Should(Succeed())
		Eventually(func() []string { return rolledOut() }, "3m", "500ms").ShouldNot(Equal(before))

		readyPods := func(labels map[string]string, n int) []corev1.Pod {
			var pods []corev1.Pod
			Eventually(func(g Gomega) {
				list := &corev1.PodList{}
				g.Expect(k8sClient.List(ctx, list, client.InNamespace(balancerNS), client.MatchingLabels(labels))).To(Succeed())
				pods = nil
				for _, p := range list.Items {
					if p.DeletionTimestamp == nil && podReady(p) {
						pods = append(pods, p)
					}
				}
				g.Expect(pods).To(HaveLen(n))
			}, "2m", "500ms").Should(Succeed())
			return pods
		}
		pods := readyPods(map[string]string{"app": "client"}, nClients)
		proxies := readyPods(map[string]string{networkingv1alpha1.BalancerProxyLabel: "web"}, 2)
		// Every client through every proxy, the clients at once: 20
		// requests each, answered "20 <backend> errors 0" when all 20 went
		// to one backend and none failed.
		type answer struct {
			out string
			err error
		}
		answers := make([][]answer, len(pods))
		var wg sync.WaitGroup
		for i, p := range pods {
			answers[i] = make([]answer, len(proxies))
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j, proxy := range proxies {
					// The proxy listens on an unprivileged port behind the
					// Service's (the Pod's own container port).
					addr := net.JoinHostPort(proxy.Status.PodIP, fmt.Sprint(proxy.Spec.Containers[0].Ports[0].ContainerPort))
					out, err := kubectl("-n", balancerNS, "exec", p.Name, "--", "/echoserver", "get", "-n", "20", "http://"+addr+"/")
					answers[i][j] = answer{out, err}
				}
			}()
		}
		wg.Wait()
		var lines []string
		used := map[string]int{}
		for i, p := range pods {
			var backends []string
			for j, proxy := range proxies {
				out, err := answers[i][j].out, answers[i][j].err
				Expect(err).NotTo(HaveOccurred(), "%s", out)
				got := strings.Fields(strings.ReplaceAll(strings.TrimSpace(out), "\n", " "))
				Expect(got).To(HaveLen(4), "client %s (%s) through proxy %s was spread over backends: %q", p.Name, p.Status.PodIP, proxy.Name, out)
				Expect(got[0]).To(Equal("20"))
				Expect(got[2:]).To(Equal([]string{"errors", "0"}))
				backends = append(backends, got[1])
			}
			Expect(backends[1]).To(Equal(backends[0]), "client %s: both proxy replicas build the same ring", p.Status.PodIP)
			used[backends[0]]++
			lines = append(lines, p.Status.PodIP+"→"+backends[0])
		}
		sort.Strings(lines)
		appendArtifact("figures.txt", fmt.Sprintf("ClientIP affinity, %d client Pods × 20 requests through each of 2 proxy Pods, each on one backend, the same through both: %s (a %d, b %d, c %d clients; weights 50/30/20)\n",
			nClients, strings.Join(lines, ", "), used["a"], used["b"], used["c"]))
		// All twelve on one backend has odds of 0.5^12+0.3^12+0.2^12 (about
		// 1 in 4,000) if addresses are told apart; it is certain if not.
		Expect(len(used)).To(BeNumerically(">=", 2), "the clients' addresses spread over the backends: %v", used)
	})
})
