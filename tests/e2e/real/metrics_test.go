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
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubeforge/kubeforge/internal/test/ports"
)

const promNS = "real-prometheus"

var _ = Describe("Metrics through the Service", Ordered, Label("real"), func() {
	var promURL string

	BeforeAll(func() {
		for _, args := range [][]string{
			{"create", "namespace", promNS},
			{"create", "serviceaccount", "prometheus", "-n", promNS},
			// config/default's metrics-reader, with its name prefix.
			{"create", "clusterrolebinding", "real-prometheus-metrics", "--clusterrole=kubeforge-metrics-reader", "--serviceaccount=" + promNS + ":prometheus"},
		} {
			_, err := kubectl(args...)
			Expect(err).NotTo(HaveOccurred())
		}
		dir := filepath.Join(artifacts, "prometheus")
		Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
		token, err := kubectl("create", "token", "prometheus", "-n", promNS, "--duration", "1h")
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(filepath.Join(dir, "token"), []byte(strings.TrimSpace(token)), 0o600)).To(Succeed())
		// cert-manager's certificate for the metrics Service: Prometheus
		// checks it against the CA and the Service's DNS name.
		secret := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: managerNS, Name: "metrics-server-cert"}, secret)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(dir, "ca.crt"), secret.Data["ca.crt"], 0o644)).To(Succeed())
		svc := &corev1.Service{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: managerNS, Name: "kubeforge-controller-manager-metrics-service"}, svc)).To(Succeed())

		config := fmt.Sprintf(`global: {scrape_interval: 1s, scrape_timeout: 1s}
scrape_configs:
- job_name: kubeforge
  scheme: https
  tls_config: {ca_file: %s, server_name: %s.%s.svc}
  authorization: {credentials_file: %s}
  static_configs: [{targets: ['%s:8443']}]
`, filepath.Join(dir, "ca.crt"), svc.Name, managerNS, filepath.Join(dir, "token"), svc.Spec.ClusterIP)
		Expect(os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o644)).To(Succeed())

		port, err := ports.Free()
		Expect(err).NotTo(HaveOccurred())
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		promURL = "http://" + addr
		log, err := os.Create(filepath.Join(dir, "prometheus.log"))
		Expect(err).NotTo(HaveOccurred())
		prom := exec.Command("prometheus", "--config.file="+filepath.Join(dir, "prometheus.yml"),
			"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr)
		prom.Stdout, prom.Stderr = log, log
		Expect(prom.Start()).To(Succeed(), "prometheus (hack/test-deps.sh installs it)")
		DeferCleanup(func() {
			_ = prom.Process.Signal(syscall.SIGTERM)
			_, _ = prom.Process.Wait()
			_ = log.Close()
		})
	})

	It("is scraped by a real Prometheus through the metrics Service, with a ServiceAccount token and cert-manager's certificate", func() {
		query := func(g Gomega, q string) []any {
			resp, err := http.Get(promURL + "/api/v1/query?" + url.Values{"query": {q}}.Encode())
			g.Expect(err).NotTo(HaveOccurred())
			defer resp.Body.Close()
			g.Expect(resp.StatusCode).To(Equal(http.StatusOK))
			var res struct {
				Data struct {
					Result []any `json:"result"`
				} `json:"data"`
			}
			g.Expect(json.NewDecoder(resp.Body).Decode(&res)).To(Succeed())
			return res.Data.Result
		}
		Eventually(func(g Gomega) {
			g.Expect(query(g, `up{job="kubeforge"} == 1`)).To(HaveLen(1), "the scrape through the Service succeeds")
			// Both replicas talk to the API server (one leads, one waits to).
			g.Expect(query(g, `rest_client_requests_total{job="kubeforge"}`)).NotTo(BeEmpty())
		}, "90s", "1s").Should(Succeed())
	})
})
