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
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
	networkingv1alpha1 "github.com/kubeforge/kubeforge/api/networking/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/admit"
	"github.com/kubeforge/kubeforge/internal/proof"
	"github.com/kubeforge/kubeforge/internal/scheme"
	"github.com/kubeforge/kubeforge/internal/test/testenv"
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
	Clients, Runs int
	Seconds       float64
	PerWebhook    []WebhookLatency
	// Users and UsersWithout are the users' load (loadUsers), the goal's;
	// With and Without the annotation load (load).
	With, Without           ClientLatency
	UsersWith, UsersWithout ClientLatency
	WebhookRequests         uint64
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
	// APIServerCPUms and ManagerCPUms are the CPU time (user and
	// system, from /proc) the API server and the manager used during
	// the load, per request the clients made: what each request cost
	// them, steadier from run to run than the throughput, which the
	// whole machine's share of the 2 cores moves.
	APIServerCPUms, ManagerCPUms stats
}

// clientLatency summarises runs; cpu, when given, is what each run cost
// the API server and the manager.
func clientLatency(runs []*latencies, d time.Duration, cpu []cpuUse) ClientLatency {
	var rate, c50, c99, u50, u99, api, mgr []float64
	for i, l := range runs {
		n := float64(len(l.creates) + len(l.update))
		rate = append(rate, n/d.Seconds())
		c50, c99 = append(c50, quantile(l.creates, 0.5)), append(c99, quantile(l.creates, 0.99))
		u50, u99 = append(u50, quantile(l.update, 0.5)), append(u99, quantile(l.update, 0.99))
		if i < len(cpu) && n > 0 {
			api, mgr = append(api, 1000*cpu[i].apiServer/n), append(mgr, 1000*cpu[i].manager/n)
		}
	}
	c := ClientLatency{RequestsPerSecond: summarize(rate), CreateP50ms: summarize(c50), CreateP99ms: summarize(c99),
		UpdateP50ms: summarize(u50), UpdateP99ms: summarize(u99)}
	if len(api) > 0 {
		c.APIServerCPUms, c.ManagerCPUms = summarize(api), summarize(mgr)
	}
	return c
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
	run(t, []string{"KUBECONFIG=" + e.kubeconfig}, "kubectl", "apply", "--server-side", policies[0], policies[1], policies[2], policies[3])
	probe := loadObject("PodSet", "default", "webhook-probe")
	waitFor(t, time.Minute, "the API server to call the webhooks", func() bool {
		_ = e.c.Create(context.Background(), probe.DeepCopyObject().(client.Object), client.DryRunAll)
		return sum(e.metricsText(), "controller_runtime_webhook_requests_total", "") > n0
	})
}

// policies are the ValidatingAdmissionPolicies a kustomize install ships
// (config/policy), kubectl's arguments: kubeforge's admission is the
// webhooks and these.
var policies = []string{"-f", "config/policy/owner-record.yaml", "-f", "config/policy/references.yaml"}

// measureWebhooks runs the load reps times with the webhooks installed and
// reps times without them, alternating which goes first: the webhooks'
// own latency, and the API server's with and without them. Each load
// starts on a settled manager, so that none pays for the reconciles the
// one before it left queued (or, the first, for the manager's start). The
// manager goes back to its plain flags.
func measureWebhooks(t *testing.T, e *env, manifest string, clients int, d time.Duration, reps int) WebhookFigures {
	f := WebhookFigures{Clients: clients, Seconds: d.Seconds(), Runs: reps}
	kube := []string{"KUBECONFIG=" + e.kubeconfig}
	pooled := map[string]map[int]uint64{}
	var with, without, usersWith, usersWithout []*latencies
	var cpuWith, cpuWithout []cpuUse
	apiServer := apiServerPID(t, perfCluster)
	installed := true
	for r := range reps {
		for _, withHooks := range []bool{r%2 == 0, r%2 != 0} {
			if withHooks {
				if !installed {
					installWebhooks(t, e, manifest)
					installed = true
				}
				ns, usersNS := fmt.Sprintf("hooks-%d", r), fmt.Sprintf("users-hooks-%d", r)
				namespace(t, e.c, ns)
				namespace(t, e.c, usersNS)
				tenants(t, e.c, usersNS)
				before := e.nativeHistograms()
				e.settle(t)
				cpu := e.cpuUse(apiServer)
				usersWith = append(usersWith, loadUsers(t, e.kubeconfig, nil, usersNS, clients, d))
				cpuWith = append(cpuWith, e.cpuUse(apiServer).since(cpu))
				e.settle(t)
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
				run(t, kube, "kubectl", "delete", policies[0], policies[1], policies[2], policies[3])
				installed = false
				// The API server stops calling them once it sees the deletion.
				time.Sleep(3 * time.Second)
			}
			ns, usersNS := fmt.Sprintf("nohooks-%d", r), fmt.Sprintf("users-nohooks-%d", r)
			namespace(t, e.c, ns)
			namespace(t, e.c, usersNS)
			tenants(t, e.c, usersNS)
			n0 := sum(e.metricsText(), "controller_runtime_webhook_requests_total", "")
			e.settle(t)
			cpu := e.cpuUse(apiServer)
			usersWithout = append(usersWithout, loadUsers(t, e.kubeconfig, e.keys, usersNS, clients, d))
			cpuWithout = append(cpuWithout, e.cpuUse(apiServer).since(cpu))
			e.settle(t)
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
	// Every kind's mutating webhook is called; the validating ones are
	// not: their matchConditions leave out what the mutating webhook
	// stamped, which is everything these loads send.
	mutating := 0
	for _, wl := range f.PerWebhook {
		if strings.HasPrefix(wl.Path, "/mutate-") {
			mutating++
		} else {
			t.Errorf("the validating webhook %s was called %d times for objects the mutating webhook stamped", wl.Path, wl.Requests)
		}
	}
	if mutating != len(loadKinds) {
		t.Errorf("the load reached %d mutating webhooks, want %d (one per kind): %+v", mutating, len(loadKinds), f.PerWebhook)
	}
	f.With, f.Without = clientLatency(with, d, nil), clientLatency(without, d, nil)
	f.UsersWith, f.UsersWithout = clientLatency(usersWith, d, cpuWith), clientLatency(usersWithout, d, cpuWithout)
	if uw, uo := f.UsersWith, f.UsersWithout; len(uw.APIServerCPUms.Runs) > 0 && len(uo.APIServerCPUms.Runs) > 0 {
		t.Logf("users' load, CPU per request: the API server %.2f ms with kubeforge's admission, %.2f ms with none; the manager %.2f ms, %.2f ms (medians)",
			uw.APIServerCPUms.Median, uo.APIServerCPUms.Median, uw.ManagerCPUms.Median, uo.ManagerCPUms.Median)
	}
	if installed {
		run(t, kube, "kubectl", "delete", "-f", manifest)
		run(t, kube, "kubectl", "delete", policies[0], policies[1], policies[2], policies[3])
	}
	_ = os.Remove(manifest)
	e.stopManager()
	e.extra = nil
	e.startManager()
	return f
}

// The users' load: what tenants send. Each client is a user of its own
// (impersonated, in the group perf:tenants, whose Role in the namespace
// lets them use kubeforge's kinds and get the Secret and ConfigMap their
// objects name), creating objects of every kind whose specs name a
// Secret, a ConfigMap, a ServiceAccount and volumes, and then changing
// those specs (not annotations): every create and update is one the
// webhooks check in full, SubjectAccessReviews included.
const (
	tenantsGroup = "perf:tenants"
	userSecret   = "app-token"
	userConfig   = "app-config"
	userSA       = "app"
)

// userObject is client i's object of kind, at version seq of its spec.
func userObject(kind, ns, name string, seq int) client.Object {
	meta := metav1.ObjectMeta{Namespace: ns, Name: name}
	zero := new(int32(0))
	env := []corev1.EnvVar{{Name: "SEQ", Value: fmt.Sprint(seq)},
		{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: userSecret}, Key: "token"}}}}
	switch kind {
	case "PodSet":
		return &appsv1alpha1.PodSet{ObjectMeta: meta, Spec: appsv1alpha1.PodSetSpec{Replicas: zero, Template: corev1.PodTemplateSpec{
			Spec: corev1.PodSpec{
				ServiceAccountName: userSA,
				// Restricted, as a tenant's template without a right to a
				// lower level must be.
				SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: new(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
				Containers: []corev1.Container{{Name: "app", Image: "registry.example.com/app:1", Env: env,
					SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: new(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
					VolumeMounts:    []corev1.VolumeMount{{Name: "config", MountPath: "/etc/app"}, {Name: "token", MountPath: "/var/run/token"}}}},
				Volumes: []corev1.Volume{
					{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: userConfig}}}},
					{Name: "token", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: userSecret}}},
				},
			}}}}
	case "Platform":
		return &appsv1alpha1.Platform{ObjectMeta: meta, Spec: appsv1alpha1.PlatformSpec{ImageRepository: "registry.example.com/perf", Version: "1",
			Components: []appsv1alpha1.PlatformComponent{{Name: "api", Replicas: zero, Env: env}, {Name: "web", Replicas: zero}}}}
	case "Balancer":
		return &networkingv1alpha1.Balancer{ObjectMeta: meta, Spec: networkingv1alpha1.BalancerSpec{
			Replicas: zero, Selector: map[string]string{"app": "perf-backend"},
			Backends: []networkingv1alpha1.BalancerBackend{
				{Name: "a", Weight: new(int32(1 + seq%9)), Selector: map[string]string{"tier": "a"}},
				{Name: "b", Weight: new(int32(10 - seq%9)), Selector: map[string]string{"tier": "b"}}},
			Ports: []networkingv1alpha1.BalancerPort{{Name: "http", Port: 80, TargetPort: new(intstr.FromInt32(8080))}},
		}}
	default:
		return &idev1alpha1.Workspace{ObjectMeta: meta, Spec: idev1alpha1.WorkspaceSpec{User: name, Started: new(false), Env: env,
			Storage: idev1alpha1.WorkspaceStorage{Size: new(resource.MustParse("1Gi"))}}}
	}
}

// tenants makes ns ready for the users' load: what their objects name, and
// the group's Role.
func tenants(t *testing.T, c client.Client, ns string) {
	ctx := context.Background()
	for _, obj := range []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: userSecret}, StringData: map[string]string{"token": "t"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: userConfig}, Data: map[string]string{"a": "b"}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: userSA}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant"}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"apps.kubeforge.io", "networking.kubeforge.io", "ide.kubeforge.io"},
				Resources: []string{"podsets", "platforms", "balancers", "workspaces"}, Verbs: []string{"create", "get", "update", "patch"}},
			{APIGroups: []string{""}, Resources: []string{"secrets", "configmaps"}, Verbs: []string{"get"}},
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"create"}},
		}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant"},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "tenant"},
			Subjects: []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "Group", Name: tenantsGroup}}},
	} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
}

// tenantClient is the API as user name of the tenants' group sees it.
func tenantClient(t *testing.T, kubeconfig, name string) client.Client {
	cfg := restConfig(t, kubeconfig)
	cfg.QPS, cfg.Burst = 500, 1000
	cfg.Impersonate = rest.ImpersonationConfig{UserName: name, Groups: []string{tenantsGroup, "system:authenticated"}}
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// loadUsers runs the users' load on ns for d. keys nil: the webhooks are
// installed and stamp what they admit; otherwise none is, and each client
// signs what it writes as the mutating webhook would (the kit's stamp:
// what the reconcilers do with the objects is the same in both runs).
func loadUsers(t *testing.T, kubeconfig string, keys *proof.Keyring, ns string, clients int, d time.Duration) *latencies {
	l := &latencies{}
	cs := make([]client.Client, clients)
	for i := range cs {
		cs[i] = tenantClient(t, kubeconfig, fmt.Sprintf("tenant-%d", i))
	}
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for i, c := range cs {
		wg.Go(func() {
			kind := loadKinds[i%len(loadKinds)]
			var mine []client.Object
			for seq := 1; time.Now().Before(deadline); seq++ {
				ctx := context.Background()
				if len(mine) < 4 {
					obj := userObject(kind, ns, fmt.Sprintf("u%d-%d", i, len(mine)), 0)
					if keys != nil {
						if err := admit.StamperFor(c.Scheme(), obj).SignObject(keys, obj, testenv.KitSigner, time.Now()); err != nil {
							l.record(&l.creates, 0, err)
							return
						}
					}
					start := time.Now()
					err := c.Create(ctx, obj)
					if err == nil {
						mine = append(mine, obj)
					}
					l.record(&l.creates, time.Since(start), err)
					continue
				}
				have := mine[seq%len(mine)]
				next := userObject(kind, ns, have.GetName(), seq)
				next.SetUID(have.GetUID())
				body := map[string]any{}
				if keys != nil {
					if err := admit.StamperFor(c.Scheme(), next).SignObject(keys, next, testenv.KitSigner, time.Now()); err != nil {
						l.record(&l.update, 0, err)
						return
					}
					body["metadata"] = map[string]any{"annotations": map[string]string{admit.StampAnnotation: next.GetAnnotations()[admit.StampAnnotation]}}
				}
				u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(next)
				if err != nil {
					l.record(&l.update, 0, err)
					return
				}
				body["spec"] = u["spec"]
				raw, err := json.Marshal(body)
				if err != nil {
					l.record(&l.update, 0, err)
					return
				}
				start := time.Now()
				err = c.Patch(ctx, have, client.RawPatch(types.MergePatchType, raw))
				l.record(&l.update, time.Since(start), err)
			}
		})
	}
	wg.Wait()
	if len(l.failures) > 0 {
		t.Fatalf("%d of the users' requests failed, first: %v", len(l.failures), errors.Join(l.failures[:min(3, len(l.failures))]...))
	}
	return l
}
