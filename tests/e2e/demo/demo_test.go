// Package demo runs `make demo`'s script as a newcomer would, then every
// command its closing message tells them to try, exactly as printed, then
// `make demo-down`.
package demo

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/kubeforge/kubeforge/internal/test/testenv"
)

func TestDemo(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "make demo, as a newcomer runs it")
}

// The demo's own cluster and ports, apart from a developer's `make demo`.
var demoEnv = []string{
	"CLUSTER_NAME=kubeforge-demo-e2e", "CLUSTER_FRESH=1",
	"WEBHOOK_PORT=19443", "METRICS_PORT=18443", "PROBE_PORT=18081", "API_PORT=18082",
}

func demo(verb string) (string, error) {
	cmd := exec.Command("hack/demo.sh", verb)
	cmd.Dir = testenv.RepoRoot()
	cmd.Env = append(os.Environ(), demoEnv...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// tryLines are the indented command lines of the demo's closing message
// (from "The demo is running." to "Manager log:"), continuations joined.
func tryLines(out string) []string {
	start := strings.Index(out, "The demo is running.")
	if start < 0 {
		return nil
	}
	var lines []string
	cont := false
	for _, l := range strings.Split(out[start:], "\n")[1:] {
		if strings.HasPrefix(l, "Manager log:") {
			break
		}
		if !cont && !strings.HasPrefix(l, "  ") {
			continue // prose
		}
		l = strings.TrimSpace(l)
		if cont {
			lines[len(lines)-1] = strings.TrimSuffix(lines[len(lines)-1], `\`) + " " + l
		} else {
			lines = append(lines, l)
		}
		cont = strings.HasSuffix(l, `\`)
	}
	return lines
}

// readmeDemoBlock is the first sh block of README.md's "make demo" section.
func readmeDemoBlock() string {
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "README.md"))
	Expect(err).NotTo(HaveOccurred())
	s := string(b)
	i := strings.Index(s, "### `make demo`")
	Expect(i).To(BeNumerically(">=", 0), "README has a make demo section")
	s = s[i:]
	start := strings.Index(s, "```sh\n")
	Expect(start).To(BeNumerically(">=", 0))
	s = s[start+len("```sh\n"):]
	end := strings.Index(s, "```")
	Expect(end).To(BeNumerically(">=", 0))
	return s[:end]
}

var _ = Describe("make demo", Label("demo"), func() {
	AfterEach(func() {
		if os.Getenv("E2E_KEEP_CLUSTER") == "" {
			// Again, when the spec stopped before its own demo-down.
			out, err := demo("down")
			Expect(err).NotTo(HaveOccurred(), out)
		}
	})

	It("ends with the samples listed, every command it prints and README's block of commands work as written, and demo-down stops the manager and deletes the cluster", func() {
		Expect(os.Geteuid()).To(Equal(0), "the demo's cluster runs as root here, as in make test")
		out, err := demo("up")
		GinkgoWriter.Printf("make demo printed:\n%s\n", out)
		Expect(err).NotTo(HaveOccurred())
		for _, obj := range []string{"podset.apps.kubeforge.io/web", "balancer.networking.kubeforge.io/", "workspace.ide.kubeforge.io/",
			"platform.apps.kubeforge.io/", "kubernetescluster.cluster.kubeforge.io/prod"} {
			Expect(out).To(ContainSubstring(obj), "kubectl get kubeforge in the demo's output")
		}

		lines := tryLines(out)
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

		By("running README's block of commands to try, as written, against the demo's cluster")
		block := readmeDemoBlock()
		Expect(block).To(ContainSubstring("kubectl"), "README's make demo section has a block of commands")
		// The one change: the cluster's name (this spec's own, beside a
		// developer's demo).
		block = strings.ReplaceAll(block, "/kwok/clusters/kubeforge/", "/kwok/clusters/kubeforge-demo-e2e/")
		cmd = exec.Command("bash", "-c", "set -euo pipefail\n"+block)
		cmd.Dir = GinkgoT().TempDir()
		cmd.Env = []string{"HOME=" + os.Getenv("HOME"), "PATH=" + os.Getenv("PATH")}
		got, err = cmd.CombinedOutput()
		GinkgoWriter.Printf("README's block:\n%s\nprinted:\n%s\n", block, got)
		Expect(err).NotTo(HaveOccurred(), "a command of README's make demo block failed")
		Expect(string(got)).To(ContainSubstring("platform.apps.kubeforge.io/acme condition met"), "the Platform's upgrade to 1.1.0")

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
