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
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

const promNS = "e2e-prometheus"

// A real Prometheus (Debian's package, started here on loopback) scrapes
// both replicas' HTTPS metrics endpoints with a ServiceAccount token that
// RBAC allows to read metrics, and two jobs show what happens without a
// token and with a token that RBAC does not allow.
var _ = Describe("Prometheus", Ordered, Label("manager", "prometheus"), func() {
	var promURL string

	query := func(g Gomega, path string, params url.Values, into any) {
		resp, err := http.Get(promURL + path + "?" + params.Encode())
		g.Expect(err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		g.Expect(resp.StatusCode).To(Equal(http.StatusOK))
		g.Expect(json.NewDecoder(resp.Body).Decode(into)).To(Succeed())
	}

	BeforeAll(func() {
		kubectlEventually("create", "namespace", promNS)
		kubectlEventually("create", "serviceaccount", "prometheus", "-n", promNS)
		kubectlEventually("create", "serviceaccount", "stranger", "-n", promNS)
		kubectlEventually("apply", "-f", "config/rbac/metrics_reader_role.yaml")
		kubectlEventually("create", "clusterrolebinding", "e2e-prometheus-metrics", "--clusterrole=metrics-reader", "--serviceaccount="+promNS+":prometheus")
		kubectlEventually("create", "secret", "generic", "prod-ssh", "-n", promNS, "--type=kubernetes.io/ssh-auth",
			"--from-literal=ssh-privatekey=a throwaway key for kwok, which runs no installer")

		dir := filepath.Join(artifacts, "prometheus")
		Expect(os.RemoveAll(dir)).To(Succeed())
		Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
		for sa, file := range map[string]string{"prometheus": "token", "stranger": "stranger-token"} {
			out, err := kubectl("create", "token", sa, "-n", promNS, "--duration", "1h")
			Expect(err).NotTo(HaveOccurred())
			Expect(os.WriteFile(filepath.Join(dir, file), []byte(strings.TrimSpace(out)), 0o600)).To(Succeed())
		}
		var targets []string
		for _, r := range replicas {
			targets = append(targets, fmt.Sprintf("'127.0.0.1:%d'", r.metricsPort))
		}
		// The replicas serve metrics with a certificate they made
		// themselves; in a cluster the ServiceMonitor checks cert-manager's.
		job := func(name, tokenFile string) string {
			j := "- job_name: " + name + "\n  scheme: https\n  tls_config: {insecure_skip_verify: true}\n"
			if tokenFile != "" {
				j += "  authorization: {credentials_file: " + filepath.Join(dir, tokenFile) + "}\n"
			}
			return j + "  static_configs: [{targets: [" + strings.Join(targets, ", ") + "]}]\n"
		}
		config := "global: {scrape_interval: 1s, scrape_timeout: 1s}\nscrape_configs:\n" +
			job("kubeforge", "token") + job("kubeforge-no-token", "") + job("kubeforge-stranger", "stranger-token")
		Expect(os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o644)).To(Succeed())

		port := freePort()
		promURL = fmt.Sprintf("http://127.0.0.1:%d", port)
		log, err := os.Create(filepath.Join(dir, "prometheus.log"))
		Expect(err).NotTo(HaveOccurred())
		prom := exec.Command("prometheus", "--config.file="+filepath.Join(dir, "prometheus.yml"),
			"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+fmt.Sprintf("127.0.0.1:%d", port))
		prom.Stdout, prom.Stderr = log, log
		Expect(prom.Start()).To(Succeed(), "prometheus (hack/test-deps.sh installs it)")
		DeferCleanup(func() {
			_ = prom.Process.Signal(syscall.SIGTERM)
			_, _ = prom.Process.Wait()
			_ = log.Close()
		})
		Eventually(func() error {
			resp, err := http.Get(promURL + "/-/ready")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					err = fmt.Errorf("%s", resp.Status)
				}
			}
			return err
		}, "60s").Should(Succeed())
	})

	It("should scrape both replicas with the token, and be refused without one (401) and with one RBAC does not allow (403)", func() {
		type target struct {
			Labels    map[string]string `json:"labels"`
			Health    string            `json:"health"`
			LastError string            `json:"lastError"`
		}
		Eventually(func(g Gomega) {
			var res struct {
				Data struct {
					ActiveTargets []target `json:"activeTargets"`
				} `json:"data"`
			}
			query(g, "/api/v1/targets", url.Values{}, &res)
			byJob := map[string][]target{}
			for _, t := range res.Data.ActiveTargets {
				byJob[t.Labels["job"]] = append(byJob[t.Labels["job"]], t)
			}
			g.Expect(byJob["kubeforge"]).To(HaveLen(len(replicas)))
			for _, t := range byJob["kubeforge"] {
				g.Expect(t.Health).To(Equal("up"), "%s: %s", t.Labels["instance"], t.LastError)
			}
			g.Expect(byJob["kubeforge-no-token"]).NotTo(BeEmpty())
			for _, t := range byJob["kubeforge-no-token"] {
				g.Expect(t.Health).To(Equal("down"))
				g.Expect(t.LastError).To(ContainSubstring("401"))
			}
			g.Expect(byJob["kubeforge-stranger"]).NotTo(BeEmpty())
			for _, t := range byJob["kubeforge-stranger"] {
				g.Expect(t.Health).To(Equal("down"))
				g.Expect(t.LastError).To(ContainSubstring("403"))
			}
		}, "60s").Should(Succeed())
	})

	It("should have series of controller-runtime's and every kubeforge metric once the samples are applied", func() {
		manifests, err := run("go", "tool", "-modfile="+filepath.Join(root, "hack", "tools", "go.mod"), "kustomize", "build", "config/samples")
		Expect(err).NotTo(HaveOccurred())
		_, err = kubectlStdin(manifests, "apply", "-n", promNS, "-f", "-")
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() error {
			_, err := kubectlStdin(manifests, "wait", "-n", promNS, "--for=condition=Ready", "--timeout=10s", "-f", "-")
			return err
		}, "4m", "2s").Should(Succeed())

		for _, metric := range []string{
			"controller_runtime_reconcile_total",
			"controller_runtime_webhook_latency_seconds_count",
			`kubeforge_resource_ready{kind="KubernetesCluster"}`,
			`kubeforge_resource_ready{kind="Workspace"}`,
			"kubeforge_resource_degraded",
			"kubeforge_balancer_backend_ready_endpoints",
			"kubeforge_balancer_backend_weight",
			"kubeforge_platform_component_ready",
			"kubeforge_podset_replicas",
			`kubeforge_cluster_operations_total{result="Succeeded"}`,
			"kubeforge_cluster_operation_duration_seconds_count",
			"kubeforge_workspace_startup_seconds_count",
			"kubeforge_platform_rollout_duration_seconds_count",
		} {
			Eventually(func(g Gomega) []any {
				var res struct {
					Data struct {
						Result []any `json:"result"`
					} `json:"data"`
				}
				sel := metric
				if !strings.Contains(sel, "{") {
					sel += "{"
				} else {
					sel = strings.TrimSuffix(sel, "}") + ","
				}
				query(g, "/api/v1/query", url.Values{"query": {sel + `job="kubeforge"}`}}, &res)
				return res.Data.Result
			}, "60s", "1s").ShouldNot(BeEmpty(), metric)
		}

		// Every replica reports the objects, the leader alone the events.
		Eventually(func(g Gomega) []any {
			var res struct {
				Data struct {
					Result []any `json:"result"`
				} `json:"data"`
			}
			query(g, "/api/v1/query", url.Values{"query": {`count by (instance) (kubeforge_resource_ready{job="kubeforge",namespace="` + promNS + `"})`}}, &res)
			return res.Data.Result
		}, "60s", "1s").Should(HaveLen(len(replicas)))
	})
})
