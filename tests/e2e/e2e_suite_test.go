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

// Package e2e runs the built manager binary against a local control plane
// of real components (etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler) with kwok playing the kubelet, all built from source by
// hack/test-binaries.sh and started by hack/cluster.sh.
package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubeforge/kubeforge/internal/localca"
	"github.com/kubeforge/kubeforge/internal/scheme"
	"github.com/kubeforge/kubeforge/internal/test/e2ekit"
	"github.com/kubeforge/kubeforge/internal/test/ports"
	"github.com/kubeforge/kubeforge/internal/test/testenv"
)

const leaseName = "kubeforge.kubeforge.io"

var (
	root        = testenv.RepoRoot()
	kubeconfig  string
	k8sClient   client.Client
	watchClient client.WithWatch
	ctx         = context.Background()
	artifacts   string
)

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(2 * time.Minute)
	SetDefaultEventuallyPollingInterval(500 * time.Millisecond)
	RunSpecs(t, "kubeforge end-to-end")
}

// run runs a command from the repo root and returns its stdout; stderr
// is part of the error.
func run(name string, args ...string) (string, error) {
	return e2ekit.Run(root, []string{"KUBECONFIG=" + kubeconfig, "CLUSTER_NAME=" + clusterName()}, nil, name, args...)
}

func kubectl(args ...string) (string, error) { return run("kubectl", args...) }

// kubectlStdin runs kubectl with input on its standard input.
func kubectlStdin(input string, args ...string) (string, error) {
	cmd := exec.Command("kubectl", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	cmd.Stdin = strings.NewReader(input)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

func clusterName() string {
	if n := os.Getenv("E2E_CLUSTER_NAME"); n != "" {
		return n
	}
	return "kubeforge-e2e"
}

func freePort() int {
	p, err := ports.Free()
	Expect(err).NotTo(HaveOccurred())
	return p
}

var _ = BeforeSuite(func() {
	artifacts = filepath.Join(root, "tests", "e2e", "artifacts")
	Expect(os.MkdirAll(artifacts, 0o755)).To(Succeed())
	for _, stale := range managerLogs() {
		Expect(os.Remove(stale)).To(Succeed())
	}

	By("starting the local control plane")
	var err error
	kubeconfig, err = e2ekit.ClusterUp(root, []string{"CLUSTER_NAME=" + clusterName()}, "E2E_REUSE_CLUSTER")
	Expect(err).NotTo(HaveOccurred())
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	k8sClient, err = client.New(cfg, client.Options{Scheme: scheme.New()})
	Expect(err).NotTo(HaveOccurred())
	watchClient, err = client.NewWithWatch(cfg, client.Options{Scheme: scheme.New()})
	Expect(err).NotTo(HaveOccurred())

	By("building the manager")
	_, err = run("go", "build", "-o", "bin/manager", "./cmd/manager")
	Expect(err).NotTo(HaveOccurred())

	By("installing the CRDs")
	_, err = kubectl("apply", "--server-side", "--force-conflicts", "-f", "config/crd/bases")
	Expect(err).NotTo(HaveOccurred())
	Eventually(func() error {
		_, err := kubectl("wait", "--for=condition=Established", "--timeout=10s", "crd", "--all")
		return err
	}).Should(Succeed())

	By("installing the webhook configurations, served over HTTPS on loopback through a proxy over both replicas")
	webhookFrontPort = freePort()
	webhookCertDir = filepath.Join(artifacts, "certs")
	_, err = run("go", "run", "./hack/localwebhook", "--cert-dir", webhookCertDir,
		"--port", fmt.Sprint(webhookFrontPort), "--out", filepath.Join(artifacts, "webhooks.yaml"))
	Expect(err).NotTo(HaveOccurred())
	_, err = kubectl("apply", "--server-side", "--force-conflicts", "-f", filepath.Join(artifacts, "webhooks.yaml"))
	Expect(err).NotTo(HaveOccurred())

	By("making the API's serving certificate, signed by a local CA its clients trust (cert-manager's job in a cluster)")
	apiCertDir = filepath.Join(artifacts, "api-certs")
	apiCA, err := localca.New("kubeforge e2e CA")
	Expect(err).NotTo(HaveOccurred())
	Expect(apiCA.WriteServing(apiCertDir, "localhost", "127.0.0.1")).To(Succeed())

	By("installing the manager's RBAC as config/rbac has it, and a kubeconfig for its ServiceAccount")
	managerConfig = installRBAC()

	By("starting two replicas of the manager with leader election, as its ServiceAccount")
	for _, name := range []string{"a", "b"} {
		replicas = append(replicas, &replica{name: name, webhookPort: freePort(), metricsPort: freePort(), probePort: freePort(), apiPort: freePort()})
	}
	startWebhookFront()
	for _, r := range replicas {
		r.start()
	}

	Eventually(func(g Gomega) {
		lease := &coordinationv1.Lease{}
		g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: managerNS, Name: leaseName}, lease)).To(Succeed())
		g.Expect(lease.Spec.HolderIdentity).NotTo(BeNil())
		g.Expect(*lease.Spec.HolderIdentity).NotTo(BeEmpty())
		g.Expect(lease.Spec.RenewTime.Time).To(BeTemporally(">", time.Now().Add(-30*time.Second)))
	}).Should(Succeed())
	leader()
})

// kubectlEventually runs an idempotent kubectl command until it succeeds,
// so a transient refusal does not fail the suite. An answer that the object
// already exists counts as success: on a loaded machine a create can land
// while its answer is lost (an etcd timeout, a dropped connection), and the
// retry then meets the object the first attempt made. kubectl spells that
// answer "(AlreadyExists)" for most creates and "already exists" for some
// (create clusterrolebinding), so both count. Every failed attempt is
// written to the spec's output, so a lasting failure shows its history.
func kubectlEventually(args ...string) {
	Eventually(func() error {
		_, err := kubectl(args...)
		if err != nil && (strings.Contains(err.Error(), "(AlreadyExists)") || strings.Contains(err.Error(), "already exists")) {
			return nil
		}
		if err != nil {
			GinkgoWriter.Printf("%s: %v\n", time.Now().Format(time.RFC3339), err)
		}
		return err
	}).Should(Succeed(), "kubectl %s", strings.Join(args, " "))
}

// managerNS is where the manager's ServiceAccount, leader-election Role and
// Lease live, as config/default installs them.
const managerNS = "kubeforge-system"

// installRBAC applies config/rbac the way config/default does (namespace
// kubeforge-system, prefix kubeforge-) and writes a kubeconfig that
// authenticates as the manager's ServiceAccount, so the end-to-end specs
// prove that the generated RBAC is enough for everything the manager does.
func installRBAC() string {
	dir := filepath.Join(artifacts, "rbac")
	Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
	rel, err := filepath.Rel(dir, filepath.Join(root, "config", "rbac"))
	Expect(err).NotTo(HaveOccurred())
	Expect(os.WriteFile(filepath.Join(dir, "kustomization.yaml"),
		[]byte("namespace: "+managerNS+"\nnamePrefix: kubeforge-\nresources:\n- "+rel+"\n"), 0o644)).To(Succeed())
	manifests, err := run("go", "tool", "-modfile="+filepath.Join(root, "hack", "tools", "go.mod"), "kustomize", "build", dir)
	Expect(err).NotTo(HaveOccurred())
	kubectlEventually("create", "namespace", managerNS)
	_, err = kubectlStdin(manifests, "apply", "--server-side", "--force-conflicts", "-f", "-")
	Expect(err).NotTo(HaveOccurred())

	token, err := kubectl("create", "token", "kubeforge-controller-manager", "-n", managerNS, "--duration", "6h")
	Expect(err).NotTo(HaveOccurred())
	admin, err := clientcmd.LoadFromFile(kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	ctxName := admin.CurrentContext
	cluster := admin.Contexts[ctxName].Cluster
	sa := clientcmdapi.NewConfig()
	sa.Clusters[cluster] = admin.Clusters[cluster]
	sa.AuthInfos["manager"] = &clientcmdapi.AuthInfo{Token: strings.TrimSpace(token)}
	sa.Contexts["manager"] = &clientcmdapi.Context{Cluster: cluster, AuthInfo: "manager"}
	sa.CurrentContext = "manager"
	path := filepath.Join(artifacts, "manager.kubeconfig")
	Expect(clientcmd.WriteToFile(*sa, path)).To(Succeed())
	return path
}

// On failure, show the end of each manager log next to the failure.
var _ = ReportAfterSuite("manager logs on failure", func(r Report) {
	if r.SuiteSucceeded {
		return
	}
	logs, _ := filepath.Glob(filepath.Join(root, "tests", "e2e", "artifacts", "manager-*.log"))
	for _, path := range logs {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		if len(lines) > 40 {
			lines = lines[len(lines)-40:]
		}
		fmt.Fprintf(GinkgoWriter, "--- last lines of %s ---\n%s\n", path, strings.Join(lines, "\n"))
	}
})

var _ = AfterSuite(func() {
	// The replicas ran as the manager's ServiceAccount with the RBAC of
	// config/rbac: any request that RBAC refused is a missing permission.
	var refused []string
	for _, path := range managerLogs() {
		if log, err := os.ReadFile(path); err == nil {
			for _, line := range strings.Split(string(log), "\n") {
				if strings.Contains(line, "forbidden") && !duringAPIServerRestart(line) {
					refused = append(refused, filepath.Base(path)+": "+line)
				}
			}
		}
	}
	for _, r := range replicas {
		r.stop(syscall.SIGTERM)
	}
	stopWebhookFront()
	if os.Getenv("E2E_KEEP_CLUSTER") == "" {
		_, err := run("hack/cluster.sh", "down")
		Expect(err).NotTo(HaveOccurred())
	}
	Expect(refused).To(BeEmpty(), "the manager's RBAC refused requests")
})
