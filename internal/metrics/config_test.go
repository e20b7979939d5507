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

package metrics

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"

	"github.com/kubeforge/kubeforge/internal/scheme"
)

// The alerting rules, the dashboard and docs/metrics.md are checked
// against each other and against the metrics this package registers.

const repo = "../.."

type prometheusRule struct {
	Spec struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []struct {
				Alert       string            `json:"alert"`
				Expr        string            `json:"expr"`
				Annotations map[string]string `json:"annotations"`
			} `json:"rules"`
		} `json:"groups"`
	} `json:"spec"`
}

func loadRules(t *testing.T) (prometheusRule, []byte) {
	raw, err := os.ReadFile(filepath.Join(repo, "config/prometheus/rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var r prometheusRule
	if err := yaml.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	var whole map[string]any
	if err := yaml.Unmarshal(raw, &whole); err != nil {
		t.Fatal(err)
	}
	groups, err := yaml.Marshal(whole["spec"])
	if err != nil {
		t.Fatal(err)
	}
	return r, groups
}

// promtool comes with Debian's prometheus package (hack/test-deps.sh).
func TestAlertRules(t *testing.T) {
	_, groups := loadRules(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rules.yaml"), groups, 0o644); err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile("testdata/alerts_test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "alerts_test.yaml"), tests, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"check", "rules", "rules.yaml"}, {"test", "rules", "alerts_test.yaml"}} {
		cmd := exec.Command("promtool", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// Every alert has a runbook section in docs/metrics.md that its
// runbook_url points at, and a promtool test.
func TestEveryAlertHasARunbookAndATest(t *testing.T) {
	r, _ := loadRules(t)
	doc, err := os.ReadFile(filepath.Join(repo, "docs/metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile("testdata/alerts_test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, g := range r.Spec.Groups {
		for _, rule := range g.Rules {
			n++
			if !strings.Contains(string(doc), "\n### "+rule.Alert+"\n") {
				t.Errorf("docs/metrics.md has no section ### %s", rule.Alert)
			}
			if want := "docs/metrics.md#" + strings.ToLower(rule.Alert); !strings.HasSuffix(rule.Annotations["runbook_url"], want) {
				t.Errorf("%s: runbook_url %q does not end in %s", rule.Alert, rule.Annotations["runbook_url"], want)
			}
			if !strings.Contains(string(tests), "alertname: "+rule.Alert+"\n") {
				t.Errorf("%s has no promtool test", rule.Alert)
			}
		}
	}
	if n != 5 {
		t.Errorf("%d alerts, want the 5 of docs/metrics.md", n)
	}
}

// kubeforgeMetrics are the names this package exposes, histogram series included.
func kubeforgeMetrics(t *testing.T) []string {
	reg := prometheus.NewPedanticRegistry()
	if err := Register(reg, fake.NewClientBuilder().WithScheme(scheme.New()).Build()); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range describe(reg) {
		names = append(names, d, d+"_bucket", d+"_sum", d+"_count")
	}
	return names
}

var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

func describe(c prometheus.Collector) []string {
	ch := make(chan *prometheus.Desc)
	go func() { c.Describe(ch); close(ch) }()
	var out []string
	for d := range ch {
		if m := fqName.FindStringSubmatch(d.String()); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

var metricName = regexp.MustCompile(`\b(kubeforge_[a-z_]+|controller_runtime_[a-z_]+|workqueue_[a-z_]+|rest_client_[a-z_]+)`)

// The dashboard and the rules query only metrics that exist, and every
// kubeforge metric is documented.
func TestDashboardRulesAndDocsNameRealMetrics(t *testing.T) {
	ours := kubeforgeMetrics(t)
	// controller-runtime's, as its metrics package registers them.
	theirs := []string{
		"controller_runtime_reconcile_total", "controller_runtime_reconcile_errors_total", "controller_runtime_reconcile_time_seconds_bucket",
		"controller_runtime_active_workers", "controller_runtime_max_concurrent_reconciles", "controller_runtime_webhook_latency_seconds_bucket",
		"controller_runtime_webhook_requests_total", "controller_runtime_webhook_requests_in_flight", "workqueue_depth", "workqueue_adds_total",
		"workqueue_queue_duration_seconds_bucket", "workqueue_retries_total", "rest_client_requests_total", "controller_runtime_reconcile_panics_total",
	}
	known := append(slices.Clone(ours), theirs...)

	raw, err := os.ReadFile(filepath.Join(repo, "config/grafana/kubeforge-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title  string `json:"title"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	if len(dash.Panels) < 8 {
		t.Fatalf("%d panels", len(dash.Panels))
	}
	var exprs []string
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q queries nothing", p.Title)
		}
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	r, _ := loadRules(t)
	for _, g := range r.Spec.Groups {
		for _, rule := range g.Rules {
			exprs = append(exprs, rule.Expr)
		}
	}
	for _, e := range exprs {
		for _, m := range metricName.FindAllString(e, -1) {
			if !slices.Contains(known, m) {
				t.Errorf("%q queries %s, which no one exports", e, m)
			}
		}
	}

	doc, err := os.ReadFile(filepath.Join(repo, "docs/metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []prometheus.Collector{ClusterOperations, ClusterOperationDuration, WorkspaceStartup, PlatformRollout, NewStateCollector(nil)} {
		for _, name := range describe(c) {
			if !strings.Contains(string(doc), "`"+name+"`") {
				t.Errorf("docs/metrics.md does not document %s", name)
			}
		}
	}
}
