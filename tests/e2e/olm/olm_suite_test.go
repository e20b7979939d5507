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

// Package olm installs kubeforge the way a catalog user does: real OLM
// (built from source by hack/olm.sh, running on the local cluster's real
// node) pulls our catalog image, unpacks our bundle image and runs the
// manager from its image. Every spec is labelled "olm"
// (E2E_LABELS=olm make test-e2e); docs/install.md's OLM section is these
// steps.
package olm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubeforge/kubeforge/internal/scheme"
	"github.com/kubeforge/kubeforge/internal/test/e2ekit"
	"github.com/kubeforge/kubeforge/internal/test/testenv"
)

const (
	version    = "0.1.0"
	next       = "0.2.0"
	image      = "ghcr.io/kubeforge/kubeforge:v" + version
	nextImage  = "ghcr.io/kubeforge/kubeforge:v" + next
	bundle     = "ghcr.io/kubeforge/kubeforge-bundle:v" + version
	nextBundle = "ghcr.io/kubeforge/kubeforge-bundle:v" + next
	catalog    = "ghcr.io/kubeforge/kubeforge-catalog:v" + version
	// The upgrade's catalog: both bundles, the second replacing the first.
	nextCatalog = "ghcr.io/kubeforge/kubeforge-catalog:v" + next
	echoImage   = "kubeforge.test/echoserver:v1"
	// Where OLM installs operators for all namespaces (the global
	// OperatorGroup), and where global catalogs live.
	operatorsNS = "operators"
	catalogNS   = "olm"
)

var (
	root       = testenv.RepoRoot()
	kubeconfig string
	k8sClient  client.Client
	ctx        = context.Background()
	artifacts  string
)

func TestOLM(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(4 * time.Minute)
	SetDefaultEventuallyPollingInterval(time.Second)
	RunSpecs(t, "kubeforge installed by OLM")
}

func clusterName() string {
	if n := os.Getenv("E2E_OLM_CLUSTER_NAME"); n != "" {
		return n
	}
	return "kubeforge-olm"
}

// run runs a command from the repo root against the suite's cluster, with
// env added, and returns its stdout; stderr is part of the error.
func run(env []string, name string, args ...string) (string, error) {
	return e2ekit.Run(root, append([]string{"KUBECONFIG=" + kubeconfig, "CLUSTER_NAME=" + clusterName(), "REAL_NODE=1"}, env...), nil, name, args...)
}

func kubectl(args ...string) (string, error) { return run(nil, "kubectl", args...) }

// kubectlApply applies a manifest given on standard input.
func kubectlApply(manifest string) {
	_, err := e2ekit.Run(root, []string{"KUBECONFIG=" + kubeconfig}, strings.NewReader(manifest), "kubectl", "apply", "-f", "-")
	Expect(err).NotTo(HaveOccurred())
}

// timed runs a step and records how long it took, for the note.
func timed(what string, f func()) {
	line, err := e2ekit.Timed(artifacts, what, f)
	GinkgoWriter.Print(line)
	Expect(err).NotTo(HaveOccurred())
}

var _ = BeforeSuite(func() {
	Expect(os.Geteuid()).To(Equal(0), "a real node needs root: containerd, the kubelet and iptables")
	artifacts = filepath.Join(root, "tests", "e2e", "artifacts", "olm")
	Expect(os.RemoveAll(artifacts)).To(Succeed())
	Expect(os.MkdirAll(artifacts, 0o755)).To(Succeed())

	timed("cluster with a real node (hack/cluster.sh up, REAL_NODE=1)", func() {
		var err error
		kubeconfig, err = e2ekit.ClusterUp(root, []string{"CLUSTER_NAME=" + clusterName(), "REAL_NODE=1"}, "E2E_REUSE_CLUSTER")
		Expect(err).NotTo(HaveOccurred())
	})
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	k8sClient, err = client.New(cfg, client.Options{Scheme: scheme.New()})
	Expect(err).NotTo(HaveOccurred())

	timed("OLM's binaries and images (hack/olm.sh binaries images)", func() {
		_, err := run(nil, "hack/olm.sh", "binaries")
		Expect(err).NotTo(HaveOccurred())
		_, err = run(nil, "hack/olm.sh", "images")
		Expect(err).NotTo(HaveOccurred())
	})
	timed("OLM installed (hack/olm.sh install)", func() {
		_, err := run(nil, "hack/olm.sh", "install")
		Expect(err).NotTo(HaveOccurred())
	})
	timed("kubeforge's images: manager, bundle, catalog (make image bundle-image catalog-image)", func() {
		_, err := run(nil, "hack/images.sh", "manager", "echoserver")
		Expect(err).NotTo(HaveOccurred())
		_, err = run(nil, "make", "bundle-image", "catalog-image")
		Expect(err).NotTo(HaveOccurred())
	})
})

// On failure, keep what OLM and the manager said.
var _ = ReportAfterSuite("OLM state on failure", func(r Report) {
	if r.SuiteSucceeded || kubeconfig == "" {
		return
	}
	for _, args := range [][]string{
		{"get", "catalogsources,subscriptions,installplans,csv,operatorgroups", "-A", "-o", "wide"},
		{"get", "pods", "-A", "-o", "wide"},
		{"-n", catalogNS, "logs", "deployment/catalog-operator", "--tail=40"},
		{"-n", catalogNS, "logs", "deployment/olm-operator", "--tail=40"},
		{"-n", operatorsNS, "get", "csv", "-o", "jsonpath={range .items[*]}{.metadata.name}: {.status.phase} {.status.reason} {.status.message}{\"\\n\"}{end}"},
	} {
		if out, err := kubectl(args...); err == nil {
			fmt.Fprintf(GinkgoWriter, "--- kubectl %s ---\n%s\n", strings.Join(args, " "), out)
		}
	}
})

// A cluster whose start failed halfway is deleted too: its real node would
// otherwise keep the machine's one node from the next suite.
var _ = AfterSuite(func() {
	if os.Getenv("E2E_KEEP_CLUSTER") != "" {
		return
	}
	By("deleting the cluster, and with it the real node")
	_, err := run(nil, "hack/cluster.sh", "down")
	Expect(err).NotTo(HaveOccurred())
})
