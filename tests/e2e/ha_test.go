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
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
)

const haNS = "e2e-ha"

// apiserverRestarts are the windows in which the suite restarted the
// kube-apiserver.
var apiserverRestarts [][2]time.Time

var logTime = regexp.MustCompile(`"ts":"([^"]+)"`)

// duringAPIServerRestart reports whether a log line was written while the
// kube-apiserver was restarting.
func duringAPIServerRestart(line string) bool {
	m := logTime.FindStringSubmatch(line)
	if m == nil {
		return false
	}
	t, err := time.Parse(time.RFC3339, m[1])
	if err != nil {
		return false
	}
	for _, w := range apiserverRestarts {
		if !t.Before(w[0].Truncate(time.Second)) && !t.After(w[1]) {
			return true
		}
	}
	return false
}

// The manager's leader election timings (its flags' defaults).
const (
	leaseDuration = 15 * time.Second
	retryPeriod   = 2 * time.Second
)

// admit sends an AdmissionReview for a PodSet straight to one replica's
// validating webhook and says whether it was allowed.
func admit(r *replica, podSet string) (bool, string, error) {
	review := fmt.Sprintf(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"e2e",`+
		`"kind":{"group":"apps.kubeforge.io","version":"v1alpha1","kind":"PodSet"},`+
		`"resource":{"group":"apps.kubeforge.io","version":"v1alpha1","resource":"podsets"},`+
		`"namespace":"%s","operation":"CREATE","userInfo":{"username":"e2e"},"object":%s}}`, haNS, podSet)
	ca, err := os.ReadFile(filepath.Join(webhookCertDir, "ca.crt"))
	if err != nil {
		return false, "", err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	resp, err := c.Post(fmt.Sprintf("https://127.0.0.1:%d/validate-apps-kubeforge-io-v1alpha1-podset", r.webhookPort), "application/json", bytes.NewBufferString(review))
	if err != nil {
		return false, "", err
	}
	defer resp.Body.Close()
	out := &admissionv1.AdmissionReview{}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return false, "", err
	}
	if out.Response == nil {
		return false, "", fmt.Errorf("no response in %+v", out)
	}
	msg := ""
	if out.Response.Result != nil {
		msg = out.Response.Result.Message
	}
	return out.Response.Allowed, msg, nil
}

const badPodSet = `{"apiVersion":"apps.kubeforge.io/v1alpha1","kind":"PodSet","metadata":{"name":"bad","namespace":"` + haNS + `"},` +
	`"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"app","image":"nginx","resources":{"requests":{"cpu":"2"},"limits":{"cpu":"1"}}}]}}}}`

// admissionWorks checks, through the API server and the proxy, that a bad
// PodSet is refused by the validating webhook (no schema rule compares
// requests with limits) and a Platform defaulted by the mutating one (the
// CRD does not default imageName).
func admissionWorks(name string) {
	_, err := kubectlStdin(strings.ReplaceAll(badPodSet, `"bad"`, `"`+name+`-bad"`), "create", "--dry-run=server", "-f", "-")
	Expect(err).To(MatchError(ContainSubstring("must be less than or equal to the limit")))
	out, err := kubectlStdin(`{"apiVersion":"apps.kubeforge.io/v1alpha1","kind":"Platform","metadata":{"name":"`+name+`","namespace":"`+haNS+`"},`+
		`"spec":{"imageRepository":"reg.example.com/acme","version":"1.0.0","components":[{"name":"api"}]}}`,
		"create", "--dry-run=server", "-o", "jsonpath={.spec.components[0].imageName}", "-f", "-")
	Expect(err).NotTo(HaveOccurred())
	Expect(out).To(Equal("api"), "the mutating webhook defaulted imageName")
}

func holder(g Gomega) string {
	lease := &coordinationv1.Lease{}
	g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: managerNS, Name: leaseName}, lease)).To(Succeed())
	if lease.Spec.HolderIdentity == nil {
		return ""
	}
	return *lease.Spec.HolderIdentity
}

// noDuplicates checks that each owned workload and installer Job exists
// once: one Deployment per PodSet, one Job per operation, none left over.
func noDuplicates(kcName string, podSets []string) {
	deployments := &appsv1.DeploymentList{}
	Expect(k8sClient.List(ctx, deployments, client.InNamespace(haNS))).To(Succeed())
	owners := map[string]int{}
	for _, d := range deployments.Items {
		for _, ref := range d.OwnerReferences {
			owners[ref.Kind+"/"+ref.Name]++
		}
	}
	for _, ps := range podSets {
		Expect(owners["PodSet/"+ps]).To(Equal(1), "Deployments of PodSet %s", ps)
	}
	kc := &clusterv1alpha1.KubernetesCluster{}
	Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: haNS, Name: kcName}, kc)).To(Succeed())
	jobs := &batchv1.JobList{}
	Expect(k8sClient.List(ctx, jobs, client.InNamespace(haNS), client.MatchingLabels{clusterv1alpha1.ClusterLabel: kcName})).To(Succeed())
	Expect(jobs.Items).To(HaveLen(len(kc.Status.Operations)), "one Job per operation")
	for _, op := range kc.Status.Operations {
		Expect(op.Result).To(Equal(clusterv1alpha1.ResultSucceeded), "operation %s", op.ID)
	}
}

var _ = Describe("High availability", Ordered, Label("ha"), func() {
	var report []string
	note := func(format string, args ...any) {
		line := fmt.Sprintf(format, args...)
		report = append(report, line)
		AddReportEntry("failover", line)
		GinkgoWriter.Println(line)
	}

	BeforeAll(func() {
		kubectlEventually("create", "namespace", haNS)
		kubectlEventually("create", "secret", "generic", "ha-ssh", "-n", haNS, "--type=kubernetes.io/ssh-auth",
			"--from-literal=ssh-privatekey=a throwaway key for kwok, which runs no installer")
		DeferCleanup(func() {
			Expect(os.WriteFile(filepath.Join(artifacts, "failover.txt"), []byte(strings.Join(report, "\n")+"\n"), 0o644)).To(Succeed())
			// Leave two replicas running for whatever runs next.
			for _, r := range replicas {
				if !r.alive() {
					r.start()
				}
			}
		})
	})

	It("should have exactly one replica hold the Lease and reconcile, and both answer webhooks", func() {
		l := leader()
		f := follower(l)
		Consistently(f.leads, "3s").Should(BeFalse())
		Expect(l.logText()).To(ContainSubstring("Starting workers"))
		Expect(f.logText()).NotTo(ContainSubstring("Starting workers"), "the follower reconciles nothing")
		for _, r := range replicas {
			allowed, msg, err := admit(r, badPodSet)
			Expect(err).NotTo(HaveOccurred(), "replica %s", r.name)
			Expect(allowed).To(BeFalse(), "replica %s", r.name)
			Expect(msg).To(ContainSubstring("must be less than or equal to the limit"))
		}
		admissionWorks("both")
	})

	It("should replace a killed leader within the lease duration plus the retry period, keep admitting, and finish the work in flight once", func() {
		l := leader()
		f := follower(l)
		// Work in flight: a cluster whose installer Jobs run one after the
		// other, and PodSets still being created.
		kc := fmt.Sprintf(`{"apiVersion":"cluster.kubeforge.io/v1alpha1","kind":"KubernetesCluster","metadata":{"name":"ha","namespace":"%s"},`+
			`"spec":{"version":"v1.31.4","masters":[{"address":"10.1.0.10","name":"cp1"}],"nodes":[{"address":"10.1.0.21","name":"w1"}],`+
			`"sshSecretRef":{"name":"ha-ssh"}}}`, haNS)
		_, err := kubectlStdin(kc, "create", "-f", "-")
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) []clusterv1alpha1.Operation {
			k := &clusterv1alpha1.KubernetesCluster{}
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: haNS, Name: "ha"}, k)).To(Succeed())
			return k.Status.Operations
		}, "30s", "50ms").ShouldNot(BeEmpty())
		var podSets []string
		for i := range 5 {
			name := fmt.Sprintf("inflight-%d", i)
			podSets = append(podSets, name)
			_, err := kubectlStdin(fmt.Sprintf(`{"apiVersion":"apps.kubeforge.io/v1alpha1","kind":"PodSet","metadata":{"name":"%s","namespace":"%s"},`+
				`"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"app","image":"nginx"}]}}}}`, name, haNS), "create", "-f", "-")
			Expect(err).NotTo(HaveOccurred())
		}

		before := holder(Default)
		killed := time.Now()
		l.stop(syscall.SIGKILL)
		By("admission goes on while no one leads")
		admissionWorks("leaderless")
		Eventually(f.leads, leaseDuration+retryPeriod+5*time.Second, "50ms").Should(BeTrue())
		takeover := time.Since(killed)
		Expect(holder(Default)).NotTo(Equal(before))
		// client-go's elector waits between retryPeriod and 2.2 × retryPeriod
		// between attempts (JitterUntil, factor 1.2), and a follower times
		// the lease from when it saw the last renewal: the worst case is
		// the lease duration plus two such waits.
		bound := leaseDuration + 2*time.Duration(2.2*float64(retryPeriod))
		note("SIGKILL of the leader: replica %s took the Lease %s after the kill (lease duration %s + retry period %s = %s; worst case with client-go's jitter %s)",
			f.name, takeover.Round(10*time.Millisecond), leaseDuration, retryPeriod, leaseDuration+retryPeriod, bound)
		Expect(takeover).To(BeNumerically("<=", bound+500*time.Millisecond))

		By("the new leader finishes the work in flight, once")
		Eventually(func(g Gomega) clusterv1alpha1.ClusterPhase {
			k := &clusterv1alpha1.KubernetesCluster{}
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: haNS, Name: "ha"}, k)).To(Succeed())
			return k.Status.Phase
		}, "3m").Should(Equal(clusterv1alpha1.PhaseRunning))
		for _, name := range podSets {
			Eventually(func(g Gomega) int32 {
				ps := &appsv1alpha1.PodSet{}
				g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: haNS, Name: name}, ps)).To(Succeed())
				return ps.Status.ReadyReplicas
			}, "2m").Should(Equal(int32(2)), name)
		}
		noDuplicates("ha", podSets)

		By("the killed replica comes back as a follower")
		l.start()
		Consistently(l.leads, "3s").Should(BeFalse())
	})

	It("should hand the Lease over in under 5 s when the leader is stopped with SIGTERM", func() {
		l := leader()
		f := follower(l)
		stopped := time.Now()
		l.stop(syscall.SIGTERM)
		exited := time.Since(stopped)
		Eventually(f.leads, "5s", "50ms").Should(BeTrue())
		takeover := time.Since(stopped)
		note("SIGTERM of the leader: it exited in %s, releasing the Lease; replica %s took it after %s", exited.Round(10*time.Millisecond), f.name, takeover.Round(10*time.Millisecond))
		Expect(takeover).To(BeNumerically("<", 5*time.Second))
		// The new leader works: a scale converges.
		_, err := kubectl("scale", "-n", haNS, "podset/inflight-0", "--replicas=3")
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) int32 {
			ps := &appsv1alpha1.PodSet{}
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: haNS, Name: "inflight-0"}, ps)).To(Succeed())
			return ps.Status.ReadyReplicas
		}, "2m").Should(Equal(int32(3)))
		l.start()
	})

	It("should ride out a restart of the kube-apiserver without restarting, and converge after it", func() {
		l := leader()
		pids := map[string]int{}
		for _, r := range replicas {
			Expect(r.alive()).To(BeTrue())
			pids[r.name] = r.cmd.Process.Pid
		}
		restarted := restartAPIServer(3 * time.Second)
		note("kube-apiserver down for %s (killed, 3 s pause, started, until /readyz answers)", restarted.Round(10*time.Millisecond))

		// A change made after the restart converges: the informers
		// re-listed and the leader goes on.
		_, err := kubectl("scale", "-n", haNS, "podset/inflight-1", "--replicas=4")
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) int32 {
			ps := &appsv1alpha1.PodSet{}
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: haNS, Name: "inflight-1"}, ps)).To(Succeed())
			g.Expect(ps.Status.ObservedGeneration).To(Equal(ps.Generation))
			return ps.Status.ReadyReplicas
		}, "2m").Should(Equal(int32(4)))
		for _, r := range replicas {
			Expect(r.alive()).To(BeTrue(), "replica %s exited", r.name)
			Expect(r.cmd.Process.Pid).To(Equal(pids[r.name]), "replica %s restarted", r.name)
		}
		Expect(l.leads()).To(BeTrue(), "the leader kept the Lease")
		admissionWorks("after-restart")
	})
})

// restartAPIServer kills the local cluster's kube-apiserver, waits pause,
// starts it again with the same command line, and returns how long it was
// unavailable.
func restartAPIServer(pause time.Duration) time.Duration {
	// The pid file kwokctl keeps beside the cluster's kubeconfig: another
	// cluster's API server on this machine (a suite beside this one) is
	// never the one killed.
	b, err := os.ReadFile(filepath.Join(filepath.Dir(kubeconfig), "pids", "kube-apiserver.pid"))
	Expect(err).NotTo(HaveOccurred())
	pid := strings.TrimSpace(string(b))
	cmdline, err := os.ReadFile("/proc/" + pid + "/cmdline")
	Expect(err).NotTo(HaveOccurred())
	Expect(string(cmdline)).To(ContainSubstring("kube-apiserver"), "pid %s of the cluster's pid file", pid)
	cwd, err := os.Readlink("/proc/" + pid + "/cwd")
	Expect(err).NotTo(HaveOccurred())
	args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")

	down := time.Now()
	_, err = run("kill", "-9", pid)
	Expect(err).NotTo(HaveOccurred())
	Eventually(func() error { _, err := os.Stat("/proc/" + pid + "/cmdline"); return err }, "10s", "50ms").Should(HaveOccurred())
	time.Sleep(pause)
	log, err := os.Create(filepath.Join(artifacts, "kube-apiserver-restarted.log"))
	Expect(err).NotTo(HaveOccurred())
	cmd := execDetached(args, cwd, log)
	Expect(cmd.Start()).To(Succeed())
	go func() { _ = cmd.Wait(); _ = log.Close() }()
	// kwokctl stops the cluster's processes by their pid files.
	Expect(os.WriteFile(filepath.Join(cwd, "pids", "kube-apiserver.pid"), []byte(fmt.Sprint(cmd.Process.Pid)), 0o644)).To(Succeed())
	Eventually(func() error { _, err := kubectl("get", "--raw", "/readyz"); return err }, "60s", "100ms").Should(Succeed())
	// Until its RBAC authorizer has synced, a starting API server refuses
	// requests it would allow: the suite's forbidden check skips this window.
	apiserverRestarts = append(apiserverRestarts, [2]time.Time{down, time.Now().Add(5 * time.Second)})
	return time.Since(down)
}

// execDetached runs args in its own session, as kwokctl started it, so it
// outlives nothing of ours; kwokctl finds it by its pid file.
func execDetached(args []string, dir string, log *os.File) *exec.Cmd {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return cmd
}
