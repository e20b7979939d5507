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

package perf

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
	networkingv1alpha1 "github.com/kubeforge/kubeforge/api/networking/v1alpha1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// loadKinds are what the webhook load creates and updates: every kind
// whose objects cost the cluster nothing at rest (no replicas, a stopped
// Workspace). KubernetesCluster is left out: each create starts an
// installer Job.
var loadKinds = []string{"PodSet", "Platform", "Balancer", "Workspace"}

func loadObject(kind, ns, name string) client.Object {
	meta := metav1.ObjectMeta{Namespace: ns, Name: name}
	zero := new(int32(0))
	switch kind {
	case "PodSet":
		return &appsv1alpha1.PodSet{ObjectMeta: meta, Spec: appsv1alpha1.PodSetSpec{Replicas: zero, Template: template}}
	case "Platform":
		return &appsv1alpha1.Platform{ObjectMeta: meta, Spec: appsv1alpha1.PlatformSpec{ImageRepository: "registry.example.com/perf", Version: "1",
			Components: []appsv1alpha1.PlatformComponent{{Name: "api", Replicas: zero}, {Name: "web", Replicas: zero}}}}
	case "Balancer":
		return &networkingv1alpha1.Balancer{ObjectMeta: meta, Spec: networkingv1alpha1.BalancerSpec{
			Replicas: zero, Selector: map[string]string{"app": "perf-backend"},
			Backends: []networkingv1alpha1.BalancerBackend{{Name: "b", Selector: map[string]string{"tier": "b"}}},
			Ports:    []networkingv1alpha1.BalancerPort{{Name: "http", Port: 80, TargetPort: new(intstr.FromInt32(8080))}},
		}}
	default:
		return &idev1alpha1.Workspace{ObjectMeta: meta, Spec: idev1alpha1.WorkspaceSpec{User: name, Started: new(false),
			Storage: idev1alpha1.WorkspaceStorage{Size: new(resource.MustParse("1Gi"))}}}
	}
}

// latencies is what the load's clients saw, per verb.
type latencies struct {
	mu              sync.Mutex
	creates, update []time.Duration
	failures        []error
}

// load runs clients that each create up to four objects of one kind and
// then keep updating them (an annotation, through a merge patch) until d
// has passed.
func load(t *testing.T, c client.Client, ns string, clients int, d time.Duration) *latencies {
	l := &latencies{}
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			kind := loadKinds[i%len(loadKinds)]
			var mine []client.Object
			for seq := 0; time.Now().Before(deadline); seq++ {
				var err error
				start := time.Now()
				if len(mine) < 4 {
					obj := loadObject(kind, ns, fmt.Sprintf("l%d-%d", i, len(mine)))
					if err = c.Create(context.Background(), obj); err == nil {
						mine = append(mine, obj)
					}
					l.record(&l.creates, time.Since(start), err)
					continue
				}
				patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"metadata":{"annotations":{"perf.kubeforge.io/seq":"%d"}}}`, seq))
				err = c.Patch(context.Background(), mine[seq%len(mine)], patch)
				l.record(&l.update, time.Since(start), err)
			}
		}()
	}
	wg.Wait()
	if len(l.failures) > 0 {
		t.Fatalf("%d of the load's requests failed, first: %v", len(l.failures), errors.Join(l.failures[:min(3, len(l.failures))]...))
	}
	return l
}

func (l *latencies) record(into *[]time.Duration, d time.Duration, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.failures = append(l.failures, err)
		return
	}
	*into = append(*into, d)
}

// quantile of durations, in milliseconds.
func quantile(ds []time.Duration, q float64) float64 {
	if len(ds) == 0 {
		return math.NaN()
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return float64(s[int(math.Ceil(q*float64(len(s))))-1].Microseconds()) / 1000
}

// nativeHistograms reads controller_runtime_webhook_latency_seconds per
// webhook path from the manager in the protobuf format, which carries the
// native histogram (buckets growing by 2^(1/8) ≈ 9%; the classic buckets
// are decades).
func (e *env) nativeHistograms() map[string]map[int]uint64 {
	req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/metrics", e.metrics), nil)
	if err != nil {
		e.t.Fatal(err)
	}
	format := expfmt.NewFormat(expfmt.TypeProtoDelim)
	req.Header.Set("Accept", string(format))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]map[int]uint64{}
	dec := expfmt.NewDecoder(resp.Body, format)
	for {
		mf := &dto.MetricFamily{}
		if err := dec.Decode(mf); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			e.t.Fatal(err)
		}
		if mf.GetName() != "controller_runtime_webhook_latency_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			var path string
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "webhook" {
					path = lp.GetValue()
				}
			}
			out[path] = buckets(e.t, m.GetHistogram())
		}
	}
	return out
}

// nativeSchema is the schema controller-runtime's bucket factor 1.1 gives.
const nativeSchema = 3

// buckets decodes a native histogram into counts by bucket index; index
// i holds (2^((i-1)/8), 2^(i/8)] seconds, and math.MinInt the zero bucket.
func buckets(t *testing.T, h *dto.Histogram) map[int]uint64 {
	if h.GetSchema() != nativeSchema || (h.GetSampleCount() > 0 && len(h.GetPositiveSpan()) == 0 && h.GetZeroCount() == 0) {
		t.Fatalf("the webhook latency histogram has no native buckets of schema %d (schema %d)", nativeSchema, h.GetSchema())
	}
	out := map[int]uint64{math.MinInt: h.GetZeroCount()}
	idx, delta, count := 0, 0, int64(0)
	for i, span := range h.GetPositiveSpan() {
		if i == 0 {
			idx = int(span.GetOffset())
		} else {
			idx += int(span.GetOffset())
		}
		for range span.GetLength() {
			count += h.GetPositiveDelta()[delta]
			delta++
			out[idx] = uint64(count)
			idx++
		}
	}
	return out
}

// webhookQuantile is the upper bound of the bucket holding quantile q of
// the requests counted in delta (bucket index → requests), in
// milliseconds.
func webhookQuantile(delta map[int]uint64, q float64) (ms float64, n uint64) {
	var idx []int
	for i, c := range delta {
		if c > 0 {
			idx = append(idx, i)
		}
		n += c
	}
	if n == 0 {
		return math.NaN(), 0
	}
	sort.Ints(idx)
	rank, seen := uint64(math.Ceil(q*float64(n))), uint64(0)
	for _, i := range idx {
		seen += delta[i]
		if seen >= rank {
			if i == math.MinInt {
				return 0, n
			}
			return 1000 * math.Pow(2, float64(i)/8), n
		}
	}
	return math.NaN(), n
}

// WebhookFigures are the webhook part of the report.
type WebhookFigures struct {
	Clients, Runs   int
	Seconds         float64
	PerWebhook      []WebhookLatency
	With, Without   ClientLatency
	WebhookRequests uint64
}

// WebhookLatency is one webhook's latency inside the manager, over the
// calls of every run.
type WebhookLatency struct {
	Path         string
	Requests     uint64
	P50ms, P99ms float64
}

// ClientLatency is what the load's clients saw from the API server: per
// run, the quantiles of its requests; median and spread over the runs.
type ClientLatency struct {
	RequestsPerSecond                                  stats
	CreateP50ms, CreateP99ms, UpdateP50ms, UpdateP99ms stats
}

func clientLatency(runs []*latencies, d time.Duration) ClientLatency {
	var rate, c50, c99, u50, u99 []float64
	for _, l := range runs {
		rate = append(rate, float64(len(l.creates)+len(l.update))/d.Seconds())
		c50, c99 = append(c50, quantile(l.creates, 0.5)), append(c99, quantile(l.creates, 0.99))
		u50, u99 = append(u50, quantile(l.update, 0.5)), append(u99, quantile(l.update, 0.99))
	}
	return ClientLatency{RequestsPerSecond: summarize(rate), CreateP50ms: summarize(c50), CreateP99ms: summarize(c99),
		UpdateP50ms: summarize(u50), UpdateP99ms: summarize(u99)}
}

// serveWebhooksAndAPI restarts the manager serving the webhooks and the
// API and installs the webhooks, pointing at it. It returns the API's port.
func serveWebhooksAndAPI(t *testing.T, e *env) (manifest string, apiPort int) {
	// Working files, never in the report's directory (which is committed).
	work := filepath.Join(root, "tests/perf/out")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	certs := filepath.Join(work, "webhook-certs")
	manifest = filepath.Join(work, "webhooks.yaml")
	port, apiPort := freePort(t), freePort(t)
	run(t, nil, "go", "run", "./hack/localwebhook", "--cert-dir", certs, "--out", manifest, "--port", fmt.Sprint(port))
	e.stopManager()
	e.extra = []string{"--enable-webhooks=true", "--webhook-port", fmt.Sprint(port), "--webhook-cert-path", certs,
		"--api-bind-address", fmt.Sprintf("127.0.0.1:%d", apiPort)}
	e.startManager()
	installWebhooks(t, e, manifest)
	return manifest, apiPort
}

// installWebhooks applies the webhook configurations and waits until the
// API server calls them.
func installWebhooks(t *testing.T, e *env, manifest string) {
	n0 := sum(e.metricsText(), "controller_runtime_webhook_requests_total", "")
	run(t, []string{"KUBECONFIG=" + e.kubeconfig}, "kubectl", "apply", "--server-side", "-f", manifest)
	probe := loadObject("PodSet", "default", "webhook-probe")
	waitFor(t, time.Minute, "the API server to call the webhooks", func() bool {
		_ = e.c.Create(context.Background(), probe.DeepCopyObject().(client.Object), client.DryRunAll)
		return sum(e.metricsText(), "controller_runtime_webhook_requests_total", "") > n0
	})
}

// measureWebhooks runs the load reps times with the webhooks installed and
// reps times without them, alternating which goes first: the webhooks'
// own latency, and the API server's with and without them. The manager
// goes back to its plain flags.
func measureWebhooks(t *testing.T, e *env, manifest string, clients int, d time.Duration, reps int) WebhookFigures {
	f := WebhookFigures{Clients: clients, Seconds: d.Seconds(), Runs: reps}
	kube := []string{"KUBECONFIG=" + e.kubeconfig}
	pooled := map[string]map[int]uint64{}
	var with, without []*latencies
	installed := true
	for r := range reps {
		for _, withHooks := range []bool{r%2 == 0, r%2 != 0} {
			if withHooks {
				if !installed {
					installWebhooks(t, e, manifest)
					installed = true
				}
				ns := fmt.Sprintf("hooks-%d", r)
				namespace(t, e.c, ns)
				before := e.nativeHistograms()
				with = append(with, load(t, e.raw, ns, clients, d))
				for p, after := range e.nativeHistograms() {
					if pooled[p] == nil {
						pooled[p] = map[int]uint64{}
					}
					for i, c := range after {
						pooled[p][i] += c - before[p][i]
					}
				}
				continue
			}
			if installed {
				run(t, kube, "kubectl", "delete", "-f", manifest)
				installed = false
				// The API server stops calling them once it sees the deletion.
				time.Sleep(3 * time.Second)
			}
			ns := fmt.Sprintf("nohooks-%d", r)
			namespace(t, e.c, ns)
			n0 := sum(e.metricsText(), "controller_runtime_webhook_requests_total", "")
			without = append(without, load(t, e.raw, ns, clients, d))
			if n1 := sum(e.metricsText(), "controller_runtime_webhook_requests_total", ""); n1 != n0 {
				t.Errorf("%v webhook calls during a run without webhooks", n1-n0)
			}
		}
	}
	var paths []string
	for p := range pooled {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		p50, n := webhookQuantile(pooled[p], 0.5)
		p99, _ := webhookQuantile(pooled[p], 0.99)
		if n > 0 {
			f.PerWebhook = append(f.PerWebhook, WebhookLatency{Path: p, Requests: n, P50ms: p50, P99ms: p99})
			f.WebhookRequests += n
		}
	}
	if want := 2 * len(loadKinds); len(f.PerWebhook) != want {
		t.Errorf("the load reached %d webhooks, want %d (a mutating and a validating one per kind): %+v", len(f.PerWebhook), want, f.PerWebhook)
	}
	f.With, f.Without = clientLatency(with, d), clientLatency(without, d)
	if installed {
		run(t, kube, "kubectl", "delete", "-f", manifest)
	}
	_ = os.Remove(manifest)
	e.stopManager()
	e.extra = nil
	e.startManager()
	return f
}
