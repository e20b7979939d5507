// Package demo runs the kwok-only `make demo` (FAKE_NODES=1: what a
// machine that cannot host the real node gets) as a newcomer would, then
// every command its closing message tells them to try, exactly as printed,
// then `make demo-down`. The demo on the real node, the default where the
// machine can host it, is run by tests/e2e/real, whose cluster it is.
package demo

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/kubeforge/kubeforge/internal/test/e2ekit"
	"github.com/kubeforge/kubeforge/internal/test/testenv"
)

func TestDemo(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "make demo, as a newcomer runs it")
}

// The demo's own cluster and ports, apart from a developer's `make demo`.
var demoEnv = []string{
	"FAKE_NODES=1", "CLUSTER_NAME=kubeforge-demo-e2e", "CLUSTER_FRESH=1",
	"WEBHOOK_PORT=19443", "METRICS_PORT=18443", "PROBE_PORT=18081", "API_PORT=18082",
}

func demo(verb string) (string, error) {
	target := "demo"
	if verb == "down" {
		target = "demo-down"
	}
	cmd := exec.Command("make", "--no-print-directory", target)
	cmd.Dir = testenv.RepoRoot()
	cmd.Env = append(os.Environ(), demoEnv...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

var _ = Describe("make demo", Label("demo"), func() {
	AfterEach(func() {
		if os.Getenv("E2E_KEEP_CLUSTER") == "" {
			// Again, when the spec stopped before its own demo-down.
			out, err := demo("down")
			Expect(err).NotTo(HaveOccurred(), out)
		}
	})

	It("says why it is kwok-only, ends with the samples listed, every command it prints works as written, and demo-down stops the manager and deletes the cluster", func() {
		Expect(os.Geteuid()).To(Equal(0), "the demo's cluster runs as root here, as in make test")
		out, err := demo("up")
		GinkgoWriter.Printf("make demo printed:\n%s\n", out)
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(ContainSubstring("[demo] the kwok-only demo (pods run no container): FAKE_NODES=1 asks for it"))
		for _, obj := range []string{"podset.apps.kubeforge.io/web", "balancer.networking.kubeforge.io/", "workspace.ide.kubeforge.io/",
			"platform.apps.kubeforge.io/", "kubernetescluster.cluster.kubeforge.io/prod"} {
			Expect(out).To(ContainSubstring(obj), "kubectl get kubeforge in the demo's output")
		}

		lines := e2ekit.TryLines(out)
		Expect(len(lines)).To(BeNumerically(">=", 5), "commands to try: %q", lines)
		kubeconfig, ok := strings.CutPrefix(lines[0], "export KUBECONFIG=")
		Expect(ok).To(BeTrue(), "the first line to try exports the KUBECONFIG: %q", lines[0])

		By("running the lines to try as a newcomer would: one shell, in a fresh directory, line by line")
		script := "set -euo pipefail\n" + strings.Join(lines, "\n") + "\n"
		cmd := exec.Command("bash", "-c", script)
		cmd.Dir = GinkgoT().TempDir()
		cmd.Env = []string{"HOME=" + os.Getenv("HOME"), "PATH=" + os.Getenv("PATH")}
		got, err := cmd.CombinedOutput()
		GinkgoWriter.Printf("the lines to try:\n%s\nprinted:\n%s\n", script, got)
		Expect(err).NotTo(HaveOccurred(), "a command the demo prints failed")
		Expect(string(got)).To(ContainSubstring("podset.apps.kubeforge.io/web scaled"))
		// curl --fail-with-body has already refused a 4xx: the demo's
		// ServiceAccount may list, and the list names the sample.
		Expect(string(got)).To(MatchRegexp(`"name":\s*"prod"`), "the API's list of KubernetesClusters")
		// kubectl finds the plugin on the PATH the demo printed.
		Expect(string(got)).To(ContainSubstring("PodSet default/web"), "kubectl kubeforge status pset/web")
		Expect(string(got)).To(MatchRegexp(`(?m)^stable\s+shop-stable\s+90\s+90%\s+\d+\s+\d+%$`), "kubectl kubeforge balancer split shop")
		Expect(string(got)).To(MatchRegexp(`(?m)^1\s+\S+\s+-\s+`), "kubectl kubeforge platform graph acme")

		By("make demo-down")
		var logPath string
		for _, l := range strings.Split(out, "\n") {
			if p, ok := strings.CutPrefix(l, "Manager log: "); ok {
				logPath = strings.TrimSpace(p)
			}
		}
		pid, err := os.ReadFile(filepath.Join(filepath.Dir(logPath), "manager.pid"))
		Expect(err).NotTo(HaveOccurred(), "the manager's pid file beside its log %q", logPath)
		down, err := demo("down")
		Expect(err).NotTo(HaveOccurred(), down)
		Expect(exec.Command("kill", "-0", strings.TrimSpace(string(pid))).Run()).To(HaveOccurred(),
			"the demo's manager (pid %s) still runs after demo-down", pid)
		_, err = os.Stat(kubeconfig)
		Expect(os.IsNotExist(err)).To(BeTrue(), "the cluster's kubeconfig %s after demo-down: %v", kubeconfig, err)
	})
})
