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
	"bufio"
	"fmt"
	"k8s.io/client-go/tools/clientcmd"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/apiserver"
)

const (
	// hostsNS holds the KubernetesClusters; it enforces Pod Security
	// restricted, so their installer Pods must pass it. The SSH host Pods
	// (sshd as root: a test fixture, not the operator's) live in
	// sshHostsNS, which does not.
	hostsNS    = "real-hosts"
	sshHostsNS = "real-ssh-hosts"
	// The stand-in installer (hack/installer) and the hosts it logs in to,
	// both built by hack/images.sh.
	installerImageRepo = "kubeforge.test/installer-standin"
	installerImage     = installerImageRepo + ":v1"
	sshHostImage       = "kubeforge.test/sshhost:v1"
	markerDir          = "/var/lib/kubeforge-standin"
	// The real node's Pod network (hack/real-node.sh): installer Jobs on
	// the real node may only be told addresses in it.
	realPodCIDR = "10.244.0.0/24"
)

// sshHost starts a host Pod: sshd with the public key authorized for root.
func sshHost(name string) {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: sshHostsNS, Name: name, Labels: map[string]string{"app": "ssh-host"}},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers: []corev1.Container{{
				Name: "sshd", Image: sshHostImage,
				Ports:          []corev1.ContainerPort{{Name: "ssh", ContainerPort: 22}},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(22)}}, PeriodSeconds: 1},
				VolumeMounts:   []corev1.VolumeMount{{Name: "keys", MountPath: "/etc/kubeforge", ReadOnly: true}},
			}},
			Volumes: []corev1.Volume{{Name: "keys", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "authorized-keys"},
			}}}},
		},
	}
	Expect(k8sClient.Create(ctx, p)).To(Succeed())
}

// hostIP waits for a host Pod to be Ready and returns its address, which
// must be in the real node's Pod network: an installer is never told any
// other address.
func hostIP(name string) string {
	p := &corev1.Pod{}
	Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: sshHostsNS, Name: name}, p)).To(Succeed())
		g.Expect(podReady(*p)).To(BeTrue())
	}, "2m", "500ms").Should(Succeed())
	_, cidr, _ := net.ParseCIDR(realPodCIDR)
	Expect(cidr.Contains(net.ParseIP(p.Status.PodIP))).To(BeTrue(), "host %s at %s", name, p.Status.PodIP)
	return p.Status.PodIP
}

// marker is what the stand-in playbooks last wrote on a host for a node
// name, or "" when there is no marker.
func marker(host, node string) string {
	out, err := kubectl("-n", sshHostsNS, "exec", host, "--", "sh", "-c", "cat "+markerDir+"/"+node+" 2>/dev/null || true")
	Expect(err).NotTo(HaveOccurred())
	return strings.TrimSpace(out)
}

var _ = Describe("KubernetesCluster by real ansible over SSH", Ordered, Label("real"), func() {
	key := client.ObjectKey{Namespace: hostsNS, Name: "lab"}
	ips := map[string]string{}
	cluster := func(g Gomega) *clusterv1alpha1.KubernetesCluster {
		kc := &clusterv1alpha1.KubernetesCluster{}
		g.Expect(k8sClient.Get(ctx, key, kc)).To(Succeed())
		return kc
	}
	update := func(f func(*clusterv1alpha1.KubernetesCluster)) {
		Eventually(func() error {
			kc := &clusterv1alpha1.KubernetesCluster{}
			if err := k8sClient.Get(ctx, key, kc); err != nil {
				return err
			}
			f(kc)
			return k8sClient.Update(ctx, kc)
		}).Should(Succeed())
	}
	// settled waits until the operations the last change asked for have
	// run: Running, no operation under way, each Succeeded. It returns the
	// cluster and how long it took.
	settled := func(ops int) (*clusterv1alpha1.KubernetesCluster, time.Duration) {
		start := time.Now()
		var kc *clusterv1alpha1.KubernetesCluster
		Eventually(func(g Gomega) {
			kc = cluster(g)
			g.Expect(kc.Status.ObservedGeneration).To(Equal(kc.Generation))
			g.Expect(kc.Status.Operations).To(HaveLen(ops))
			last := kc.Status.Operations[ops-1]
			g.Expect(last.Result).NotTo(Equal(clusterv1alpha1.ResultRunning), "%s is running", last.ID)
			for _, op := range kc.Status.Operations {
				g.Expect(op.Result).To(Equal(clusterv1alpha1.ResultSucceeded), "%s: %s %s", op.ID, op.Reason, op.Message)
			}
			g.Expect(kc.Status.Phase).To(Equal(clusterv1alpha1.PhaseRunning))
		}, "6m", time.Second).Should(Succeed())
		return kc, time.Since(start)
	}
	expectMarker := func(host, version, role string) {
		m := marker(host, host)
		Expect(m).To(ContainSubstring("kube_version="+version), "marker on %s", host)
		Expect(m).To(ContainSubstring("role="+role), "marker on %s", host)
		Expect(m).To(ContainSubstring("address="+ips[host]), "marker on %s", host)
		Expect(m).To(ContainSubstring("os=Debian"), "marker on %s", host)
	}
	// What the deadline's cluster, started in BeforeAll, streams: the
	// REST API's log lines as they came, and kubectl kubeforge's output.
	var slowLog struct {
		sync.Mutex
		lines []slowLine
		ended time.Time
	}
	slowEnded := make(chan struct{})
	var slowFollowed *gbytes.Buffer
	var slowFollowEnded <-chan error
	jobLog := func(op clusterv1alpha1.Operation) string {
		out, err := kubectl("-n", hostsNS, "logs", "job/"+op.JobName)
		Expect(err).NotTo(HaveOccurred())
		return out
	}

	BeforeAll(func() {
		restrictedNamespace(hostsNS)
		Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: sshHostsNS}})).To(Succeed())
		// The cluster's key: made here, its public half authorized on the
		// hosts, its private half in the ssh-auth Secret the cluster names.
		dir := GinkgoT().TempDir()
		keyPath := filepath.Join(dir, "id_ed25519")
		out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "kubeforge-e2e", "-f", keyPath).CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
		pub, err := os.ReadFile(keyPath + ".pub")
		Expect(err).NotTo(HaveOccurred())
		private, err := os.ReadFile(keyPath)
		Expect(err).NotTo(HaveOccurred())
		Expect(k8sClient.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: sshHostsNS, Name: "authorized-keys"},
			Data:       map[string]string{"authorized_keys": string(pub)},
		})).To(Succeed())
		for _, h := range []string{"cp1", "w1", "w2", "slow"} {
			sshHost(h)
		}
		// Each host's own key, pinned in the Secret: the installer refuses
		// a host that shows another.
		var knownHosts strings.Builder
		for _, h := range []string{"cp1", "w1", "w2", "slow"} {
			ips[h] = hostIP(h)
			hostKey, err := kubectl("-n", sshHostsNS, "exec", h, "--", "cat", "/etc/ssh/ssh_host_ed25519_key.pub")
			Expect(err).NotTo(HaveOccurred())
			f := strings.Fields(hostKey)
			Expect(f).To(HaveLen(3))
			fmt.Fprintf(&knownHosts, "%s %s %s\n", ips[h], f[0], f[1])
		}
		Expect(k8sClient.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: hostsNS, Name: "hosts-ssh"},
			Type:       corev1.SecretTypeSSHAuth,
			Data:       map[string][]byte{corev1.SSHAuthPrivateKey: private, "known_hosts": []byte(knownHosts.String())},
		})).To(Succeed())

		// The deadline's cluster starts now and runs out its minute while
		// the specs below run; the last spec reads what it did.
		slow := &clusterv1alpha1.KubernetesCluster{
			ObjectMeta: metav1.ObjectMeta{Namespace: hostsNS, Name: "slow"},
			Spec: clusterv1alpha1.KubernetesClusterSpec{
				Version:       "v1.31.4",
				Masters:       []clusterv1alpha1.Host{{Address: ips["slow"], Name: "slow"}},
				SSHSecretRef:  clusterv1alpha1.SSHSecretReference{Name: "hosts-ssh", User: "root"},
				ResetOnDelete: ptr.To(false),
				Installer: clusterv1alpha1.Installer{
					Image:     installerImage,
					Timeout:   &metav1.Duration{Duration: time.Minute},
					ExtraVars: map[string]string{"standin_sleep_seconds": "900"},
				},
			},
		}
		Expect(k8sClient.Create(ctx, slow)).To(Succeed())
		slowKey := client.ObjectKeyFromObject(slow)
		// The create: cluster.yml sleeps on the host far past the deadline.
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, slowKey, slow)).To(Succeed())
			g.Expect(slow.Status.Operations).To(HaveLen(2))
			g.Expect(slow.Status.Operations[0].Result).To(Equal(clusterv1alpha1.ResultSucceeded))
		}, "4m", time.Second).Should(Succeed())

		// Follow it with kubectl kubeforge as well, from now until the
		// installer ends.
		slowFollowed = gbytes.NewBuffer()
		follow := exec.Command(pluginBin(), "--kubeconfig", kubeconfig, "-n", hostsNS, "cluster", "logs", "slow", "--follow")
		follow.Stdout = slowFollowed
		follow.Stderr = GinkgoWriter
		Expect(follow.Start()).To(Succeed())
		followEnded := make(chan error, 1)
		slowFollowEnded = followEnded
		go func() { followEnded <- follow.Wait() }()
		DeferCleanup(func() { _ = follow.Process.Kill() })

		// Follow the running operation's log through the API.
		httpc, base := apiHTTP()
		token := apiToken(hostsNS, "log-reader", "pods/log", "kubernetesclusters.cluster.kubeforge.io")
		var resp *http.Response
		Eventually(func(g Gomega) {
			req, err := http.NewRequest(http.MethodGet, base+"/api/v1/namespaces/"+hostsNS+"/kubernetesclusters/slow/logs?follow=true", nil)
			g.Expect(err).NotTo(HaveOccurred())
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err = httpc.Do(req)
			g.Expect(err).NotTo(HaveOccurred())
			if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Kubeforge-Operation") != slow.Status.Operations[1].ID {
				resp.Body.Close()
			}
			g.Expect(resp.StatusCode).To(Equal(http.StatusOK))
			g.Expect(resp.Header.Get("X-Kubeforge-Operation")).To(Equal(slow.Status.Operations[1].ID))
		}, "2m", time.Second).Should(Succeed())
		DeferCleanup(resp.Body.Close)
		// Each line with the time it came, however late the spec reads it.
		go func() {
			defer close(slowEnded)
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				slowLog.Lock()
				slowLog.lines = append(slowLog.lines, slowLine{sc.Text(), time.Now()})
				slowLog.Unlock()
			}
			slowLog.Lock()
			slowLog.ended = time.Now()
			slowLog.Unlock()
		}()
	})

	It("creates a cluster: the precheck and cluster.yml over SSH on every host, the kubeconfig from admin.conf", func() {
		kc := &clusterv1alpha1.KubernetesCluster{
			ObjectMeta: metav1.ObjectMeta{Namespace: hostsNS, Name: "lab"},
			Spec: clusterv1alpha1.KubernetesClusterSpec{
				Version:      "v1.31.4",
				Masters:      []clusterv1alpha1.Host{{Address: ips["cp1"], Name: "cp1"}},
				Nodes:        []clusterv1alpha1.Host{{Address: ips["w1"], Name: "w1"}},
				SSHSecretRef: clusterv1alpha1.SSHSecretReference{Name: "hosts-ssh", User: "root"},
				Installer:    clusterv1alpha1.Installer{Image: installerImage, Timeout: &metav1.Duration{Duration: 5 * time.Minute}},
			},
		}
		Expect(k8sClient.Create(ctx, kc)).To(Succeed())
		kc, took := settled(2)
		appendArtifact("figures.txt", fmt.Sprintf("create (precheck + cluster.yml on cp1, w1): Running in %.1fs", took.Seconds())+"\n")
		Expect(kc.Status.Operations[0].Type).To(Equal(clusterv1alpha1.OpPrecheck))
		Expect(kc.Status.Operations[1].Type).To(Equal(clusterv1alpha1.OpCreate))
		Expect(kc.Status.Version).To(Equal("v1.31.4"))
		Expect(kc.Status.InstalledNodes).To(ConsistOf(ips["w1"]), "the installed workers")
		expectMarker("cp1", "v1.31.4", "control-plane")
		expectMarker("w1", "v1.31.4", "node")
		Expect(marker("w2", "w2")).To(BeEmpty())
		// The precheck looked at both hosts over SSH, and found them fit.
		log := jobLog(kc.Status.Operations[0])
		Expect(log).To(ContainSubstring("The host is fit for Kubernetes"))
		Expect(log).To(MatchRegexp(`cp1\s*: ok=\d+\s+changed=\d+\s+unreachable=0\s+failed=0`))
		Expect(log).To(MatchRegexp(`w1\s*: ok=\d+\s+changed=\d+\s+unreachable=0\s+failed=0`))
		// cluster.yml reported through the callback, from inside the Job:
		// the API's name resolved, its certificate trusted, the token spent.
		cb := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: hostsNS, Name: clusterv1alpha1.CallbackSecretName(kc, kc.Status.Operations[1].ID)}, cb)).To(Succeed())
		Expect(cb.Annotations).To(HaveKeyWithValue(apiserver.CallbackUsedAnnotation, "true"))
		Expect(cb.Annotations).To(HaveKeyWithValue(apiserver.CallbackResultAnnotation, "succeeded"))
		Expect(cb.Annotations).To(HaveKeyWithValue(apiserver.CallbackMessageAnnotation, "cluster.yml (stand-in) marked 2 hosts"))
		// The kubeconfig Secret holds what cluster.yml produced.
		Expect(kc.Status.KubeconfigSecretRef).NotTo(BeNil())
		s := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: hostsNS, Name: kc.Status.KubeconfigSecretRef.Name}, s)).To(Succeed())
		Expect(string(s.Data["kubeconfig"])).To(ContainSubstring("server: https://" + ips["cp1"] + ":6443"))

		By("kubectl kubeforge: the kubeconfig, the precheck's and the create's logs, the status")
		out, err := plugin("-n", hostsNS, "cluster", "kubeconfig", "lab")
		Expect(err).NotTo(HaveOccurred())
		// The installer's kubeconfig, every entry named after the cluster.
		written, err := clientcmd.Load(s.Data["kubeconfig"])
		Expect(err).NotTo(HaveOccurred())
		printed, err := clientcmd.Load([]byte(out))
		Expect(err).NotTo(HaveOccurred())
		own := "kubeforge-" + hostsNS + "-lab"
		Expect(printed.CurrentContext).To(Equal(own))
		Expect(printed.Clusters).To(HaveKey(own))
		Expect(printed.Clusters[own].Server).To(Equal(written.Clusters[written.Contexts[written.CurrentContext].Cluster].Server))
		Expect(printed.AuthInfos[printed.Contexts[own].AuthInfo].ClientKeyData).To(Equal(
			written.AuthInfos[written.Contexts[written.CurrentContext].AuthInfo].ClientKeyData))
		out, err = plugin("-n", hostsNS, "cluster", "logs", "lab", "--operation", kc.Status.Operations[0].ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(ContainSubstring("The host is fit for Kubernetes"))
		out, err = plugin("-n", hostsNS, "cluster", "logs", "lab")
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(MatchRegexp(`cp1\s*: ok=\d+\s+changed=\d+\s+unreachable=0\s+failed=0`))
		Expect(out).NotTo(ContainSubstring("The host is fit for Kubernetes"), "the last operation's log, the create's")
		out, err = plugin("-n", hostsNS, "status", "kc/lab")
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(ContainSubstring("KubernetesCluster real-hosts/lab  Running"))
		Expect(out).To(MatchRegexp(`(?m)^\s+Job\s+` + kc.Status.Operations[1].JobName + `\s+Complete$`))
		Expect(out).To(ContainSubstring("Waiting for: nothing"))
	})

	It("scales up: the new host prechecked, then scale.yml on it alone", func() {
		update(func(kc *clusterv1alpha1.KubernetesCluster) {
			kc.Spec.Nodes = append(kc.Spec.Nodes, clusterv1alpha1.Host{Address: ips["w2"], Name: "w2"})
		})
		kc, took := settled(3)
		appendArtifact("figures.txt", fmt.Sprintf("scale-up (precheck + scale.yml on w2): Running in %.1fs", took.Seconds())+"\n")
		op := kc.Status.Operations[2]
		Expect(op.Type).To(Equal(clusterv1alpha1.OpScaleUp))
		Expect(kc.Status.InstalledNodes).To(ConsistOf(ips["w1"], ips["w2"]))
		expectMarker("w2", "v1.31.4", "node")
		log := jobLog(op)
		Expect(log).To(ContainSubstring("The host is fit for Kubernetes"))
		Expect(log).To(MatchRegexp(`w2\s*: ok=\d+\s+changed=\d+\s+unreachable=0\s+failed=0`))
		Expect(log).NotTo(MatchRegexp(`(cp1|w1)\s*: ok=`), "only the new host is touched")
	})

	It("upgrades every host", func() {
		update(func(kc *clusterv1alpha1.KubernetesCluster) { kc.Spec.Version = "v1.32.0" })
		kc, took := settled(4)
		appendArtifact("figures.txt", fmt.Sprintf("upgrade to v1.32.0 (upgrade-cluster.yml on 3 hosts): Running in %.1fs", took.Seconds())+"\n")
		Expect(kc.Status.Operations[3].Type).To(Equal(clusterv1alpha1.OpUpgrade))
		Expect(kc.Status.Version).To(Equal("v1.32.0"))
		expectMarker("cp1", "v1.32.0", "control-plane")
		expectMarker("w1", "v1.32.0", "node")
		expectMarker("w2", "v1.32.0", "node")
	})

	It("scales down: remove-node.yml takes w1 out under the name it was installed with", func() {
		update(func(kc *clusterv1alpha1.KubernetesCluster) {
			kc.Spec.Nodes = []clusterv1alpha1.Host{{Address: ips["w2"], Name: "w2"}}
		})
		kc, took := settled(5)
		appendArtifact("figures.txt", fmt.Sprintf("scale-down (remove-node.yml for w1): Running in %.1fs", took.Seconds())+"\n")
		Expect(kc.Status.Operations[4].Type).To(Equal(clusterv1alpha1.OpScaleDown))
		Expect(kc.Status.InstalledNodes).To(ConsistOf(ips["w2"]))
		Expect(marker("w1", "w1")).To(BeEmpty())
		expectMarker("cp1", "v1.32.0", "control-plane")
		expectMarker("w2", "v1.32.0", "node")
	})

	It("resets every host when deleted", func() {
		Expect(k8sClient.Delete(ctx, &clusterv1alpha1.KubernetesCluster{ObjectMeta: metav1.ObjectMeta{Namespace: hostsNS, Name: "lab"}})).To(Succeed())
		start := time.Now()
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, key, &clusterv1alpha1.KubernetesCluster{}))
		}, "5m", time.Second).Should(BeTrue())
		appendArtifact("figures.txt", fmt.Sprintf("delete (reset.yml on cp1, w2): gone in %.1fs", time.Since(start).Seconds())+"\n")
		Expect(marker("cp1", "cp1")).To(BeEmpty())
		Expect(marker("w2", "w2")).To(BeEmpty())
	})

	It("stops an operation at its deadline: SIGTERM reaches ansible, the operation ends Failed, the log streams while it runs", func() {
		// The slow cluster was created in BeforeAll, so that its deadline
		// runs out while the specs above run.
		Eventually(slowEnded, "4m").Should(BeClosed(), func() string {
			slowLog.Lock()
			defer slowLog.Unlock()
			var so []string
			for _, l := range slowLog.lines {
				so = append(so, l.text)
			}
			return "the log stream did not end with the installer: " + strings.Join(so, "\n")
		})
		slowLog.Lock()
		var got []string
		var sleepingAt time.Time
		for _, l := range slowLog.lines {
			got = append(got, l.text)
			if sleepingAt.IsZero() && strings.Contains(l.text, "Hold the operation") {
				sleepingAt = l.at
			}
		}
		endedAt := slowLog.ended
		slowLog.Unlock()
		log := strings.Join(got, "\n")
		Expect(sleepingAt).NotTo(BeZero(), "the stream showed the running task: %s", log)
		Expect(log).To(ContainSubstring("kubeforge: stopping the operation (SIGTERM)"), "run.sh passed the deadline's SIGTERM on")
		Eventually(slowFollowEnded, "1m").Should(Receive(BeNil()), "kubectl kubeforge cluster logs --follow ends with the installer")
		Expect(string(slowFollowed.Contents())).To(ContainSubstring("Hold the operation"))
		Expect(string(slowFollowed.Contents())).To(ContainSubstring("kubeforge: stopping the operation (SIGTERM)"))

		slow := &clusterv1alpha1.KubernetesCluster{}
		slowKey := client.ObjectKey{Namespace: hostsNS, Name: "slow"}
		var op clusterv1alpha1.Operation
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, slowKey, slow)).To(Succeed())
			op = slow.Status.Operations[1]
			g.Expect(op.Result).To(Equal(clusterv1alpha1.ResultFailed))
			g.Expect(slow.Status.Phase).To(Equal(clusterv1alpha1.PhaseFailed))
		}, "2m", time.Second).Should(Succeed())
		Expect(op.Type).To(Equal(clusterv1alpha1.OpCreate))
		Expect(op.Reason).To(Equal("DeadlineExceeded"))
		Expect(op.Message).To(HavePrefix("Timed out after 1m0s (spec.installer.timeout): the installer was stopped."))
		took := op.CompletionTime.Sub(op.StartTime.Time)
		appendArtifact("figures.txt", fmt.Sprintf("deadline (timeout 1m, a 900 s task): Failed %.1fs after the operation started; "+
			"the followed log showed the task %.1fs before the stream ended\n", took.Seconds(), endedAt.Sub(sleepingAt).Seconds()))
		Expect(took).To(BeNumerically("<", 3*time.Minute), "the operation ends at its deadline, not with the task")
		// The host was never marked: the task before the marker was stopped.
		Expect(marker("slow", "slow")).To(BeEmpty())
		Expect(k8sClient.Delete(ctx, slow)).To(Succeed())
	})
})

// slowLine is a line of a followed log and when it came.
type slowLine struct {
	text string
	at   time.Time
}

// apiHTTP is an HTTP client for the manager's REST API, and its base URL.
func apiHTTP() (*http.Client, string) {
	cfg, addr := apiEndpoint()
	return &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}, "https://" + addr
}
