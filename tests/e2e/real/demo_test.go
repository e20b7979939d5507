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
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"

	"github.com/kubeforge/kubeforge/internal/test/e2ekit"
)

// This suite's cluster is make demo's (BeforeSuite runs make demo):
// these specs are what a newcomer does with it.
var _ = Describe("make demo on the real node", Ordered, Label("real", "demo"), func() {
	// newcomer runs a shell script as a newcomer would type it: in a fresh
	// directory (or the clone, for README's block), with nothing but HOME
	// and PATH from this process.
	newcomer := func(dir, script string) *exec.Cmd {
		cmd := exec.Command("bash", "-c", "set -euo pipefail\n"+script)
		cmd.Dir = dir
		cmd.Env = []string{"HOME=" + os.Getenv("HOME"), "PATH=" + os.Getenv("PATH")}
		return cmd
	}

	It("showed each stage with its time, and ended with every sample Ready on the real node", func() {
		for _, stage := range []string{"the Kubernetes binaries", "the real node's binaries", "a cluster with a real node",
			"images built here", "cert-manager", "kubeforge as users install it: make deploy", "the samples on real containers",
			"waiting for every sample to be Ready", "ready"} {
			Expect(demoStages).To(MatchRegexp(`\[demo\]\s+\d+s `+regexp.QuoteMeta(stage)), "make demo's stage lines")
		}
		Expect(demoStages).NotTo(ContainSubstring("kwok-only"))
		for _, obj := range []string{"podset.apps.kubeforge.io/web", "balancer.networking.kubeforge.io/shop",
			"workspace.ide.kubeforge.io/alice", "platform.apps.kubeforge.io/acme", "kubernetescluster.cluster.kubeforge.io/prod"} {
			Expect(demoOut).To(ContainSubstring(obj), "kubectl get kubeforge in make demo's output")
		}
		// Real containers: the samples' Pods run on the real node.
		out, err := kubectl("get", "pods", "-n", "default", "-o", "jsonpath={range .items[*]}{.metadata.name} {.spec.nodeName}{\"\\n\"}{end}")
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(MatchRegexp(`(?m)^alice real-node$`))
		Expect(out).To(MatchRegexp(`(?m)^shop-proxy-\S+ real-node$`))
		Expect(out).To(MatchRegexp(`(?m)^acme-api-\S+ real-node$`))
	})

	It("prints lines to try that work as printed: the status, the IDE through workspace open, the Balancer's split of real requests, the Platform, the cluster's kubeconfig and log", func() {
		lines := e2ekit.TryLines(demoOut)
		Expect(len(lines)).To(BeNumerically(">=", 8), "commands to try: %q", lines)
		Expect(lines[0]).To(HavePrefix("export KUBECONFIG="))
		var script, exports []string
		var forever string
		for _, l := range lines {
			switch {
			case strings.HasSuffix(l, e2ekit.UntilCtrlC):
				forever = l
			case strings.HasPrefix(l, "export "):
				exports = append(exports, l)
				script = append(script, l)
			default:
				script = append(script, l)
			}
		}
		Expect(forever).To(ContainSubstring("kubectl kubeforge workspace open alice"))

		By("running the lines as a newcomer would: one shell, in a fresh directory, line by line")
		got, err := newcomer(GinkgoT().TempDir(), strings.Join(script, "\n")).CombinedOutput()
		GinkgoWriter.Printf("the lines to try:\n%s\nprinted:\n%s\n", strings.Join(script, "\n"), got)
		Expect(err).NotTo(HaveOccurred(), "a line make demo prints failed")
		printed := string(got)
		Expect(printed).To(ContainSubstring("Workspace default/alice  Running"))
		Expect(printed).To(MatchRegexp(`(?m)^stable\s+shop-stable\s+90\s+90%\s+3\s+90%$`), "balancer split")
		Expect(printed).To(MatchRegexp(`(?m)^canary\s+shop-canary\s+10\s+10%\s+1\s+10%$`), "balancer split")
		// 200 real requests through nginx, counted by who answered.
		v1 := regexp.MustCompile(`(?m)^(\d+) v1$`).FindStringSubmatch(printed)
		v2 := regexp.MustCompile(`(?m)^(\d+) v2$`).FindStringSubmatch(printed)
		Expect(v1).NotTo(BeNil(), "requests answered by v1")
		Expect(v2).NotTo(BeNil(), "requests answered by v2")
		n1, _ := strconv.Atoi(v1[1])
		n2, _ := strconv.Atoi(v2[1])
		Expect(n1 + n2).To(Equal(200))
		Expect(n2).To(BeNumerically("~", 20, 14), "the canary's 10%% of 200 (3 standard deviations)")
		Expect(printed).To(MatchRegexp(`(?m)^errors 0$`))
		Expect(printed).To(MatchRegexp(`(?m)^5\s+report\s+api\s+CronJob\s+`), "platform graph: report last")
		Expect(printed).To(MatchRegexp(`server: https://10\.244\.0\.\d+:6443`), "the kubeconfig names cp1's Pod address")
		Expect(printed).To(MatchRegexp(`cp1\s*: ok=\d+\s+changed=\d+\s+unreachable=0\s+failed=0`), "the installer's log")

		By("running the line that runs until Ctrl-C, opening the URL it prints, then Ctrl-C")
		open := newcomer(GinkgoT().TempDir(), strings.Join(exports, "\n")+"\nexec "+strings.TrimSuffix(forever, e2ekit.UntilCtrlC))
		out := gbytes.NewBuffer()
		open.Stdout, open.Stderr = out, GinkgoWriter
		Expect(open.Start()).To(Succeed())
		ended := make(chan error, 1)
		go func() { ended <- open.Wait() }()
		defer func() { _ = open.Process.Kill() }()
		Eventually(out, "30s").Should(gbytes.Say(`Open:\s+http://127\.0\.0\.1:\d+/\n`))
		url := regexp.MustCompile(`Open:\s+(\S+)`).FindStringSubmatch(string(out.Contents()))[1]
		code, _, h := ideGet(url)
		Expect(code).To(Equal(http.StatusFound), "code-server answers through the forwarded port")
		Expect(h.Get("Location")).To(HaveSuffix("/login"))
		Expect(open.Process.Signal(syscall.SIGINT)).To(Succeed())
		Eventually(ended, "10s").Should(Receive(BeNil()))
	})

	It("runs README's make demo block as written, from the clone", func() {
		block, err := e2ekit.ReadmeDemoBlock(root)
		Expect(err).NotTo(HaveOccurred())
		Expect(block).To(ContainSubstring("kubectl"))
		// The one change: the cluster's name (this suite's own).
		block = strings.ReplaceAll(block, "/kwok/clusters/kubeforge/", "/kwok/clusters/"+clusterName()+"/")
		// A run with the cache moved (KUBEFORGE_CACHE, as a from-nothing
		// measurement does) has the cluster and the binaries there.
		if c := os.Getenv("KUBEFORGE_CACHE"); c != "" {
			block = strings.ReplaceAll(block, "~/.cache/kubeforge/", strings.TrimSuffix(c, "/")+"/")
		}
		start := time.Now()
		got, err := newcomer(root, block).CombinedOutput()
		GinkgoWriter.Printf("README's block:\n%s\nprinted:\n%s\n", block, got)
		Expect(err).NotTo(HaveOccurred(), "a command of README's make demo block failed")
		Expect(string(got)).To(ContainSubstring("platform.apps.kubeforge.io/acme condition met"), "the Platform's upgrade to v2")
		Expect(string(got)).To(MatchRegexp(`(?m)^canary\s+shop-canary\s+10\s+10%\s+0\s+0%$`), "the split with the canary scaled to zero")
		appendArtifact("figures.txt", "README's make demo block ran in "+time.Since(start).Round(time.Second).String()+"\n")
	})
})
