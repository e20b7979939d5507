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
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// scrape GETs the manager's metrics endpoint over HTTPS with an optional
// bearer token and returns the status code and body.
func scrape(token string) (int, string, error) {
	req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d/metrics", liveMetricsPort()), nil)
	if err != nil {
		return 0, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := &http.Client{
		Timeout: 10 * time.Second,
		// The manager serves metrics with a certificate it generated itself.
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // test only
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

func token(sa string) string {
	out, err := kubectl("create", "token", sa, "-n", metricsNS)
	Expect(err).NotTo(HaveOccurred())
	return strings.TrimSpace(out)
}

const metricsNS = "e2e-metrics"

var _ = Describe("Manager", Ordered, Label("manager"), func() {
	BeforeAll(func() {
		for _, args := range [][]string{
			{"create", "namespace", metricsNS},
			{"create", "serviceaccount", "scraper", "-n", metricsNS},
			{"create", "serviceaccount", "stranger", "-n", metricsNS},
			{"apply", "-f", "config/rbac/metrics_reader_role.yaml"},
			{"create", "clusterrolebinding", "e2e-scraper-metrics", "--clusterrole=metrics-reader", "--serviceaccount=" + metricsNS + ":scraper"},
		} {
			kubectlEventually(args...)
		}
	})

	It("should refuse metrics to a caller without a token", func() {
		code, _, err := scrape("")
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(http.StatusUnauthorized))
	})

	It("should refuse metrics to a caller whose RBAC does not allow /metrics", func() {
		code, _, err := scrape(token("stranger"))
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(http.StatusForbidden))
	})

	It("should serve metrics over HTTPS to a caller bound to metrics-reader", func() {
		t := token("scraper")
		Eventually(func(g Gomega) {
			code, body, err := scrape(t)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(code).To(Equal(http.StatusOK))
			g.Expect(body).To(ContainSubstring(`controller_runtime_reconcile_total{controller="podset"`))
		}).Should(Succeed())
	})
})
