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

// Package real runs kubeforge the way users run it, on a local cluster with
// a real node (hack/real-node.sh: containerd, kubelet, kube-proxy, CoreDNS)
// beside kwok's fake ones: the manager from its own image, installed by
// `make deploy` from config/default with cert-manager's certificates, its
// webhooks reached through their Service, its workloads' containers really
// running. Every spec is labelled "real" (E2E_LABELS=real make test-e2e).
package real

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kubeforge/kubeforge/internal/scheme"
	"github.com/kubeforge/kubeforge/internal/test/e2ekit"
	"github.com/kubeforge/kubeforge/internal/test/testenv"
	"github.com/kubeforge/kubeforge/internal/workload"
)

const (
	managerNS   = "kubeforge-system"
	managerName = "kubeforge-controller-manager"
	leaseName   = "kubeforge.kubeforge.io"
	echoImage   = "kubeforge.test/echoserver:v1"
	// realNode is the label hack/real-node.sh gives the real node.
	realNodeLabel = "kubeforge.io/node"
)

var (
	root       = testenv.RepoRoot()
	kubeconfig string
	k8sClient  client.Client
	ctx        = context.Background()
	artifacts  string
	// hostBefore is what the host looked like before the real node came:
	// cluster-down must leave it so.
	hostBefore hostState
	// demoOut is what make demo printed (its closing message), demoStages
	// its stage lines with their times.
	demoOut, demoStages string
)

func TestReal(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(2 * time.Minute)
	SetDefaultEventuallyPollingInterval(500 * time.Millisecond)
	RunSpecs(t, "kubeforge on a real node")
}

func clusterName() string {
	if n := os.Getenv("E2E_REAL_CLUSTER_NAME"); n != "" {
		return n
	}
	return "kubeforge-real"
}

// run runs a command from the repo root against the suite's cluster and
// returns its stdout; stderr is part of the error.
func run(name string, args ...string) (string, error) {
	return e2ekit.Run(root, []string{"KUBECONFIG=" + kubeconfig, "CLUSTER_NAME=" + clusterName(), "REAL_NODE=1"}, nil, name, args...)
}

func kubectl(args ...string) (string, error) { return run("kubectl", args...) }

// pluginBin is `kubectl kubeforge`, built by make build beside the manager.
func pluginBin() string { return filepath.Join(root, "bin", "kubectl-kubeforge") }

// plugin runs `kubectl kubeforge ARGS` against the suite's cluster and
// keeps what it printed in the artifacts (plugin.txt: the docs' examples).
func plugin(args ...string) (string, error) {
	out, err := e2ekit.Run(root, nil, nil, pluginBin(), append([]string{"--kubeconfig", kubeconfig}, args...)...)
	appendArtifact("plugin.txt", "$ kubectl kubeforge "+strings.Join(args, " ")+"\n"+out+"\n")
	return out, err
}

// timed runs a setup step and records how long it took, for the note.
func timed(what string, f func()) {
	line, err := e2ekit.Timed(artifacts, what, f)
	GinkgoWriter.Print(line)
	Expect(err).NotTo(HaveOccurred())
}

func appendArtifact(name, line string) {
	Expect(e2ekit.AppendArtifact(artifacts, name, line)).To(Succeed())
}

var _ = BeforeSuite(func() {
	logf.SetLogger(GinkgoLogr) // the suite's own clients log into the spec's output
	Expect(os.Geteuid()).To(Equal(0), "a real node needs root: containerd, the kubelet and iptables")
	artifacts = filepath.Join(root, "tests", "e2e", "artifacts", "real")
	Expect(os.RemoveAll(artifacts)).To(Succeed())
	Expect(os.MkdirAll(artifacts, 0o755)).To(Succeed())
	hostBefore = readHost()

	timed("make demo: a cluster with a real node, the images, cert-manager, make deploy, the demo's samples Ready", func() {
		env := []string{"CLUSTER_NAME=" + clusterName()}
		if os.Getenv("E2E_REUSE_CLUSTER") == "" {
			env = append(env, "CLUSTER_FRESH=1")
		}
		cmd := exec.Command("make", "--no-print-directory", "demo", "CLUSTER_NAME="+clusterName())
		cmd.Dir = root
		cmd.Env = append(os.Environ(), env...)
		var stdout strings.Builder
		cmd.Stdout = &stdout
		stages := gbytes.NewBuffer()
		cmd.Stderr = io.MultiWriter(stages, GinkgoWriter)
		err := cmd.Run()
		demoOut = stdout.String()
		Expect(os.WriteFile(filepath.Join(artifacts, "demo.txt"), append(stages.Contents(), stdout.String()...), 0o644)).To(Succeed())
		Expect(err).NotTo(HaveOccurred(), "make demo: %s", stages.Contents())
		demoStages = string(stages.Contents())
		Expect(demoStages).NotTo(ContainSubstring("kwok-only"), "make demo on a machine that can host the real node runs it")
		kubeconfig, err = run("hack/cluster.sh", "kubeconfig")
		Expect(err).NotTo(HaveOccurred())
		kubeconfig = strings.TrimSpace(kubeconfig)
	})
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	k8sClient, err = client.New(cfg, client.Options{Scheme: scheme.New()})
	Expect(err).NotTo(HaveOccurred())

	timed("make deploy-monitoring, both manager Pods Ready, admission answering", func() {
		_, err := run("make", "deploy-monitoring")
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			d := &appsv1.Deployment{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: managerNS, Name: managerName}, d)).To(Succeed())
			g.Expect(d.Status.ObservedGeneration).To(Equal(d.Generation))
			g.Expect(d.Status.Replicas).To(Equal(int32(2)))
			g.Expect(d.Status.ReadyReplicas).To(Equal(int32(2)))
			g.Expect(d.Status.UpdatedReplicas).To(Equal(int32(2)))
			// The Pods of the rollout before are gone, not only out of
			// the Deployment's count (terminating Pods are not in it).
			pods := &corev1.PodList{}
			g.Expect(k8sClient.List(ctx, pods, client.InNamespace(managerNS), client.MatchingLabels{"control-plane": "controller-manager"})).To(Succeed())
			g.Expect(pods.Items).To(HaveLen(2))
		}, "4m", "1s").Should(Succeed())
		// Ready Pods are not yet a routed webhook Service: kube-proxy
		// programs its endpoints a moment later. A server-side dry run
		// goes through admission, so it answers only once they are.
		Eventually(func() error {
			probe := echoPodSet("admission-probe", "/healthz")
			probe.Namespace = "default"
			return k8sClient.Create(ctx, probe, client.DryRunAll)
		}, "1m", "500ms").Should(Succeed())
	})
})

// On failure, keep what the node and the manager said.
var _ = ReportAfterSuite("real node logs on failure", func(r Report) {
	if r.SuiteSucceeded || kubeconfig == "" {
		return
	}
	if out, err := kubectl("-n", managerNS, "logs", "-l", "control-plane=controller-manager", "--tail=60", "--prefix"); err == nil {
		fmt.Fprintf(GinkgoWriter, "--- manager logs ---\n%s\n", out)
	}
	if out, err := kubectl("get", "pods", "-A", "-o", "wide"); err == nil {
		fmt.Fprintf(GinkgoWriter, "--- pods ---\n%s\n", out)
	}
})

var _ = AfterSuite(func() {
	if os.Getenv("E2E_KEEP_CLUSTER") != "" {
		return
	}
	By("make demo-down: deleting the cluster, and with it the real node")
	_, err := run("make", "--no-print-directory", "demo-down", "CLUSTER_NAME="+clusterName())
	Expect(err).NotTo(HaveOccurred())
	By("checking that the real node left nothing behind on the host")
	Expect(leftBehind(hostBefore)).To(BeEmpty())
})

// httpClient makes one connection per request, so that every request is
// a new choice of the proxy.
var httpClient = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

// hostState is what cluster-down must give back.
type hostState struct {
	sysctls map[string]string
}

var watchedSysctls = []string{"kernel.panic", "kernel.panic_on_oops", "vm.overcommit_memory", "net.ipv4.ip_forward",
	"net.ipv4.conf.all.route_localnet"}

func readHost() hostState {
	h := hostState{sysctls: map[string]string{}}
	for _, s := range watchedSysctls {
		b, err := os.ReadFile("/proc/sys/" + strings.ReplaceAll(s, ".", "/"))
		if err == nil {
			h.sysctls[s] = strings.TrimSpace(string(b))
		}
	}
	return h
}

// leftBehind lists what the real node left on the host: processes of its
// binaries or in its cgroups, mounts under its state directory, its bridge
// or veths, iptables rules or chains it made, its cgroups, changed sysctls.
func leftBehind(before hostState) []string {
	var leaks []string
	nodeBin, err := run("hack/node-binaries.sh", "--print")
	Expect(err).NotTo(HaveOccurred())
	nodeBin = strings.TrimSpace(nodeBin)
	state := filepath.Join(filepath.Dir(filepath.Dir(nodeBin)), "real-node")
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		if exe, err := os.Readlink(p + "/exe"); err == nil && strings.HasPrefix(exe, nodeBin+"/") {
			leaks = append(leaks, "process "+filepath.Base(p)+" "+exe)
		}
		if cg, err := os.ReadFile(p + "/cgroup"); err == nil && strings.Contains(string(cg), "/kubeforge-real") {
			leaks = append(leaks, "process "+filepath.Base(p)+" in the kubelet's cgroups")
		}
	}
	if f, err := os.Open("/proc/self/mountinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) > 4 && (strings.HasPrefix(fields[4], state+"/") || strings.HasPrefix(fields[4], "/var/lib/kubelet")) {
				leaks = append(leaks, "mount "+fields[4])
			}
		}
		f.Close()
	}
	if out, err := exec.Command("ip", "-o", "link", "show").Output(); err == nil {
		for _, l := range strings.Split(string(out), "\n") {
			if strings.Contains(l, "kfbr0") {
				leaks = append(leaks, "interface: "+l)
			}
		}
	}
	for _, save := range []string{"iptables-save", "ip6tables-save"} {
		out, err := exec.Command(save).Output()
		Expect(err).NotTo(HaveOccurred())
		for _, l := range strings.Split(string(out), "\n") {
			if strings.Contains(l, "KUBE-") || strings.Contains(l, "CNI-") || strings.Contains(l, "kubeforge-real-node") {
				leaks = append(leaks, save+": "+l)
			}
		}
	}
	cgroups, _ := filepath.Glob("/sys/fs/cgroup/*/kubeforge-real")
	for _, c := range cgroups {
		leaks = append(leaks, "cgroup "+c)
	}
	after := readHost()
	for k, v := range before.sysctls {
		if after.sysctls[k] != v {
			leaks = append(leaks, fmt.Sprintf("sysctl %s = %s, was %s", k, after.sysctls[k], v))
		}
	}
	if _, err := os.Stat(state); err == nil {
		leaks = append(leaks, "state directory "+state)
	}
	return leaks
}

// restrictedNamespace makes a namespace that enforces Pod Security's
// restricted level (the API server's PodSecurity admission): every Pod
// kubeforge makes for the objects of a spec there must pass it, or its
// workload controller cannot create it and the spec waits in vain.
func restrictedNamespace(name string) {
	GinkgoHelper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		"pod-security.kubernetes.io/enforce":         "restricted",
		"pod-security.kubernetes.io/enforce-version": "latest",
	}}}
	Expect(client.IgnoreAlreadyExists(k8sClient.Create(ctx, ns))).To(Succeed())
	got := &corev1.Namespace{}
	Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(ns), got)).To(Succeed())
	Expect(got.Labels).To(HaveKeyWithValue("pod-security.kubernetes.io/enforce", "restricted"), "namespace %s", name)
	// The API server enforces it: a root Pod is refused here.
	root := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "pod-security-probe"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: echoImage}}}}
	err := k8sClient.Create(ctx, root, client.DryRunAll)
	Expect(apierrors.IsForbidden(err)).To(BeTrue(), "an unrestricted Pod in %s: want Forbidden by PodSecurity, got %v", name, err)
}

// restricted makes a test fixture's Pod (the echoserver, which runs as
// 65532) pass the restricted level, as kubeforge's own Pods do.
func restricted(spec *corev1.PodSpec) {
	workload.Restrict(spec, workload.Security{})
}
