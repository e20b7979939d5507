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

// Package perf measures kubeforge against the control plane's own speed
// on the local kwok cluster: PodSets, Platforms and Balancers against the
// same workloads created directly (the floor), the API writes the manager
// makes while converging and at rest, workspace start through the API,
// webhook latency under load, memory with the cache savings on and off,
// and the scaling curve. `make perf` runs it at N = 300 and writes
// REPORT.md; `make test` runs N = 20 so that it cannot rot.
// docs/performance.md describes each part.
package perf

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	networkingv1alpha1 "github.com/kubeforge/kubeforge/api/networking/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/proof"
	"github.com/kubeforge/kubeforge/internal/scheme"
	"github.com/kubeforge/kubeforge/internal/test/e2ekit"
	"github.com/kubeforge/kubeforge/internal/test/ports"
	"github.com/kubeforge/kubeforge/internal/test/testenv"
)

var (
	n              = flag.Int("perf.n", 20, "objects per convergence run")
	reps           = flag.Int("perf.reps", 3, "repetitions of each measurement")
	report         = flag.String("perf.report", "", "where to write REPORT.md and report.json; tests/perf/out when empty")
	webhookSeconds = flag.Int("perf.webhook-seconds", 60, "how long each webhook load runs")
	webhookClients = flag.Int("perf.webhook-clients", 50, "concurrent clients of the webhook load")
	parts          = flag.String("perf.parts", "convergence,api,scaling,real", "the parts to run: convergence (with writes), api (workspace start and webhooks), scaling (with memory), real (on a cluster of its own with the real node, as root: realnode_test.go)")
	managerFlags   = flag.String("perf.manager-flags", "", "extra flags for every start of the manager, space-separated, e.g. \"--kube-api-qps=100\"")
)

var root = testenv.RepoRoot()

type env struct {
	t          *testing.T
	kubeconfig string
	// c stamps the kubeforge objects it writes, standing in for the
	// mutating webhook the manager runs without (testenv.AdmittingClient);
	// raw does not (the admission load, which the webhooks stamp).
	c   client.Client
	raw client.Client
	// keys is the ownership keyring the manager signs with (the kit's
	// stamps, and the users' load without webhooks).
	keys    *proof.Keyring
	manager *exec.Cmd
	done    chan struct{}
	metrics int
	probe   int
	log     string
	// extra are the flags of the next startManager beyond the defaults.
	extra []string
	// clusterEnv is hack/cluster.sh's environment for this cluster.
	clusterEnv []string
}

func run(t *testing.T, extraEnv []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), extraEnv...)
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr)
	}
	return string(out)
}

func freePort(t *testing.T) int {
	p, err := ports.Free()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func setup(t *testing.T, nodes, volumes int) *env {
	bin := strings.TrimSpace(run(t, nil, "hack/test-binaries.sh", "--print"))
	// A /16 Service range: every Balancer takes two Services.
	clusterEnv := []string{"CLUSTER_NAME=" + perfCluster, fmt.Sprintf("CLUSTER_NODES=%d", nodes), fmt.Sprintf("CLUSTER_VOLUMES=%d", volumes),
		"CLUSTER_SERVICE_CIDR=10.96.0.0/16", "PATH=" + bin + ":" + os.Getenv("PATH")}
	// Deleted however far its start got.
	t.Cleanup(func() {
		if os.Getenv("PERF_KEEP_CLUSTER") == "" {
			run(t, clusterEnv, "hack/cluster.sh", "down")
		}
	})
	kubeconfig, err := e2ekit.ClusterUp(root, clusterEnv, "PERF_REUSE_CLUSTER")
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, kubeconfig: kubeconfig, clusterEnv: clusterEnv}
	cfg := restConfig(t, e.kubeconfig)
	cfg.QPS, cfg.Burst = 500, 1000
	if e.c, err = client.New(cfg, client.Options{Scheme: scheme.New()}); err != nil {
		t.Fatal(err)
	}
	run(t, []string{"KUBECONFIG=" + e.kubeconfig}, "kubectl", "apply", "--server-side", "--force-conflicts", "-f", "config/crd/bases")
	// A fresh API server may not list the new CRDs for a moment.
	waitFor(t, 2*time.Minute, "the CRDs to be established", func() bool {
		cmd := exec.Command("kubectl", "wait", "--for=condition=Established", "--timeout=10s", "crd", "--all")
		cmd.Env = append(os.Environ(), "KUBECONFIG="+e.kubeconfig)
		return cmd.Run() == nil
	})
	run(t, nil, "go", "build", "-o", "bin/manager", "./cmd/manager")
	e.metrics, e.probe = freePort(t), freePort(t)
	e.startManager()
	t.Cleanup(e.stopManager)
	// The key the manager loaded (or made) at its start signs for the kit.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	keys, err := proof.Load(ctx, e.c, "kube-system", proof.DefaultSecretName)
	if err != nil {
		t.Fatal(err)
	}
	e.raw, e.c, e.keys = e.c, testenv.AdmittingClient(e.c, e.c.Scheme(), keys), keys
	return e
}

// startManager runs the manager as a user would, metrics over plain HTTP,
// without webhooks and API unless e.extra turns them on (the convergence
// runs measure reconciling); later flags in e.extra win.
func (e *env) startManager() {
	t := e.t
	logs := filepath.Join(root, "tests/perf/out")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	e.log = filepath.Join(logs, fmt.Sprintf("manager-%d.log", time.Now().UnixNano()))
	f, err := os.Create(e.log)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--kubeconfig", e.kubeconfig, "--enable-webhooks=false",
		"--metrics-secure=false", "--metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", e.metrics),
		"--health-probe-bind-address", fmt.Sprintf("127.0.0.1:%d", e.probe), "--api-bind-address", "0",
		// Outside a cluster the manager has no namespace of its own for
		// its ownership key (docs/security.md).
		"--ownership-key-namespace", "kube-system"}
	args = append(append(args, strings.Fields(*managerFlags)...), e.extra...)
	e.manager = exec.Command(filepath.Join(root, "bin/manager"), args...)
	e.manager.Stdout, e.manager.Stderr = f, f
	if err := e.manager.Start(); err != nil {
		t.Fatal(err)
	}
	e.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { _ = cmd.Wait(); _ = f.Close(); close(done) }(e.manager, e.done)
	waitFor(t, time.Minute, "the manager to be ready", func() bool {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", e.probe))
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

func (e *env) stopManager() {
	if e.manager == nil || e.manager.Process == nil {
		return
	}
	select {
	case <-e.done:
		return // stopped already
	default:
	}
	_ = e.manager.Process.Signal(os.Interrupt)
	select {
	case <-e.done:
	case <-time.After(20 * time.Second):
		_ = e.manager.Process.Kill()
		<-e.done
	}
}

func waitFor(t *testing.T, timeout time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// settle waits until the manager has nothing queued and no reconcile
// running, three polls in a row: a freshly started manager's first pass
// over every object it finds (a full resync) is over, so a figure taken
// next measures what users see of a running manager, not its start.
func (e *env) settle(t *testing.T) {
	t.Helper()
	quiet := 0
	waitFor(t, 5*time.Minute, "the manager to settle (nothing queued, no reconcile running)", func() bool {
		m := e.metricsText()
		if sum(m, "workqueue_depth", "") == 0 && sum(m, "controller_runtime_active_workers", "") == 0 {
			quiet++
		} else {
			quiet = 0
		}
		return quiet >= 3
	})
}

// restConfig is the client configuration of kubeconfig with its
// certificates read once: a client that reads them from their files keeps
// watching those files, and logs every second once the cluster that made
// them is deleted.
func restConfig(t *testing.T, kubeconfig string) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err == nil {
		err = rest.LoadTLSFiles(cfg)
	}
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func artifacts() string {
	dir := *report
	if dir == "" {
		dir = filepath.Join(root, "tests/perf/out")
	}
	_ = os.MkdirAll(dir, 0o755)
	return dir
}

// scrape reads the manager's metrics: the API writes it made (by method)
// and its reconciles.
func (e *env) scrape() (writes float64, reconciles float64) {
	m := e.metricsText()
	for _, verb := range []string{"POST", "PUT", "PATCH", "DELETE"} {
		writes += sum(m, "rest_client_requests_total", `method="`+verb+`"`)
	}
	return writes, sum(m, "controller_runtime_reconcile_total", "")
}

// metricsText is the manager's /metrics in the text format.
func (e *env) metricsText() []string {
	lines, err := e.readMetrics()
	if err != nil {
		e.t.Fatal(err)
	}
	return lines
}

// readMetrics is metricsText for goroutines other than the test's, which
// must not stop the test.
func (e *env) readMetrics() ([]string, error) {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", e.metrics))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var lines []string
	s := bufio.NewScanner(resp.Body)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		if line := s.Text(); line != "" && !strings.HasPrefix(line, "#") {
			lines = append(lines, line)
		}
	}
	return lines, s.Err()
}

// sum adds the samples of metric name whose labels contain label.
func sum(lines []string, name, label string) float64 {
	var total float64
	for _, line := range lines {
		rest, ok := strings.CutPrefix(line, name)
		if !ok || rest == "" || (rest[0] != '{' && rest[0] != ' ') || !strings.Contains(rest, label) {
			continue
		}
		fields := strings.Fields(rest)
		v, _ := strconv.ParseFloat(fields[len(fields)-1], 64)
		total += v
	}
	return total
}

var template = corev1.PodTemplateSpec{
	ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"perf": "yes"}},
	Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example.com/app:1"}}},
}

// inParallel runs do(0) … do(n-1) on workers goroutines and fails the
// test with the first errors once all have run.
func inParallel(t *testing.T, n, workers int, do func(i int) error) {
	var wg sync.WaitGroup
	errs := make(chan error, n)
	work := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if err := do(i); err != nil {
					errs <- err
				}
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	var first []error
	for err := range errs {
		if len(first) < 3 {
			first = append(first, err)
		}
	}
	if len(first) > 0 {
		t.Fatal(errors.Join(first...))
	}
}

// createAll creates n objects with a few parallel writers.
func createAll(t *testing.T, c client.Client, n int, build func(i int) client.Object) {
	inParallel(t, n, 8, func(i int) error { return c.Create(context.Background(), build(i)) })
}

func namespace(t *testing.T, c client.Client, name string) {
	if err := c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
}

// dropNamespace deletes the namespaces and waits until they are gone.
func dropNamespace(t *testing.T, c client.Client, names ...string) {
	for _, name := range names {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if err := c.Delete(context.Background(), ns); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	waitFor(t, 10*time.Minute, fmt.Sprintf("namespaces %v to go", names), func() bool {
		for _, name := range names {
			if !apierrors.IsNotFound(c.Get(context.Background(), client.ObjectKey{Name: name}, &corev1.Namespace{})) {
				return false
			}
		}
		return true
	})
}

// convergeDeployments creates n Deployments of one pod and times them
// until all are Available: the floor.
func convergeDeployments(t *testing.T, c client.Client, ns string, n int) time.Duration {
	start := time.Now()
	createAll(t, c, n, func(i int) client.Object {
		return &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("d-%d", i)},
			Spec: appsv1.DeploymentSpec{Replicas: new(int32(1)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"d": strconv.Itoa(i)}},
				Template: withLabel(template, "d", strconv.Itoa(i))},
		}
	})
	waitFor(t, 10*time.Minute, fmt.Sprintf("%d Deployments to be Available", n), func() bool {
		list := &appsv1.DeploymentList{}
		if err := c.List(context.Background(), list, client.InNamespace(ns)); err != nil {
			return false
		}
		ready := 0
		for _, d := range list.Items {
			if d.Status.AvailableReplicas == 1 && d.Status.ObservedGeneration == d.Generation {
				ready++
			}
		}
		return ready == n
	})
	return time.Since(start)
}

// convergePodSets creates n PodSets of one pod and times them until all
// are Ready.
func convergePodSets(t *testing.T, c client.Client, ns string, n int) time.Duration {
	start := time.Now()
	createAll(t, c, n, func(i int) client.Object {
		return &appsv1alpha1.PodSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("p-%d", i)},
			Spec:       appsv1alpha1.PodSetSpec{Replicas: new(int32(1)), Template: template},
		}
	})
	waitFor(t, 10*time.Minute, fmt.Sprintf("%d PodSets to be Ready", n), func() bool {
		list := &appsv1alpha1.PodSetList{}
		if err := c.List(context.Background(), list, client.InNamespace(ns)); err != nil {
			return false
		}
		ready := 0
		for _, p := range list.Items {
			if meta.IsStatusConditionTrue(p.Status.Conditions, "Ready") && p.Status.ObservedGeneration == p.Generation {
				ready++
			}
		}
		return ready == n
	})
	return time.Since(start)
}

// waitReady lists list in ns until ready() counts n of its objects.
func waitReady(t *testing.T, c client.Client, ns string, n int, what string, list client.ObjectList, ready func() int) {
	waitFor(t, 10*time.Minute, fmt.Sprintf("%d %s", n, what), func() bool {
		if err := c.List(context.Background(), list, client.InNamespace(ns)); err != nil {
			return false
		}
		return ready() == n
	})
}

// convergePlatforms creates n Platforms of four Deployment components and
// times them until all are Running.
func convergePlatforms(t *testing.T, c client.Client, ns string, n int) time.Duration {
	start := time.Now()
	createAll(t, c, n, func(i int) client.Object {
		p := &appsv1alpha1.Platform{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("pl-%d", i)},
			Spec:       appsv1alpha1.PlatformSpec{ImageRepository: "registry.example.com/perf", Version: "1"},
		}
		for _, comp := range []string{"api", "web", "worker", "auth"} {
			p.Spec.Components = append(p.Spec.Components, appsv1alpha1.PlatformComponent{Name: comp})
		}
		return p
	})
	list := &appsv1alpha1.PlatformList{}
	waitReady(t, c, ns, n, "Platforms to be Running", list, func() int {
		ready := 0
		for _, p := range list.Items {
			if p.Status.Phase == appsv1alpha1.PlatformRunning && p.Status.ObservedGeneration == p.Generation {
				ready++
			}
		}
		return ready
	})
	return time.Since(start)
}

// backendPods runs the pods every Balancer of a run sends to.
func backendPods(t *testing.T, c client.Client, ns string) {
	tmpl := withLabel(template, "app", "perf-backend")
	tmpl.Labels["tier"] = "b"
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "backend"},
		Spec:       appsv1.DeploymentSpec{Replicas: new(int32(2)), Selector: &metav1.LabelSelector{MatchLabels: tmpl.Labels}, Template: tmpl},
	}
	if err := c.Create(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 2*time.Minute, "the backend pods", func() bool {
		_ = c.Get(context.Background(), client.ObjectKeyFromObject(d), d)
		return d.Status.AvailableReplicas == 2
	})
}

// convergeBalancers creates n Balancers over the backend pods and times
// them until all are Ready (proxy available, a backend with endpoints).
func convergeBalancers(t *testing.T, c client.Client, ns string, n int) time.Duration {
	start := time.Now()
	createAll(t, c, n, func(i int) client.Object {
		return &networkingv1alpha1.Balancer{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("b-%d", i)},
			Spec: networkingv1alpha1.BalancerSpec{
				Selector: map[string]string{"app": "perf-backend"},
				Backends: []networkingv1alpha1.BalancerBackend{{Name: "b", Selector: map[string]string{"tier": "b"}}},
				Ports:    []networkingv1alpha1.BalancerPort{{Name: "http", Port: 80, TargetPort: new(intstr.FromInt32(8080))}},
			},
		}
	})
	list := &networkingv1alpha1.BalancerList{}
	waitReady(t, c, ns, n, "Balancers to be Ready", list, func() int {
		ready := 0
		for _, b := range list.Items {
			if meta.IsStatusConditionTrue(b.Status.Conditions, "Ready") && b.Status.ObservedGeneration == b.Generation {
				ready++
			}
		}
		return ready
	})
	return time.Since(start)
}

// balancerFloor creates what n Balancers amount to, directly: a proxy
// Deployment, a ConfigMap and two Services each, until the Deployments
// are Available.
func balancerFloor(t *testing.T, c client.Client, ns string, n int) time.Duration {
	start := time.Now()
	createAll(t, c, n, func(i int) client.Object {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("b-%d", i)}, Data: map[string]string{"nginx.conf": "stream {}"}}
	})
	for _, suffix := range []string{"", "-b"} {
		createAll(t, c, n, func(i int) client.Object {
			return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("b-%d%s", i, suffix)},
				Spec: corev1.ServiceSpec{Selector: map[string]string{"b": strconv.Itoa(i)}, Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}}
		})
	}
	convergeDeployments(t, c, ns, n)
	return time.Since(start)
}

func withLabel(t corev1.PodTemplateSpec, k, v string) corev1.PodTemplateSpec {
	out := *t.DeepCopy()
	out.Labels = map[string]string{k: v}
	return out
}

type stats struct {
	Median, Min, Max float64
	Runs             []float64
}

func summarize(xs []float64) stats {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return stats{Median: s[len(s)/2], Min: s[0], Max: s[len(s)-1], Runs: xs}
}

// Result is what a run measured; report.json holds it.
type Result struct {
	N, Reps                  int
	Machine, Commit, Date    string
	Parts, ManagerFlags      string
	PodSetSeconds            stats
	DeploymentSeconds        stats
	Ratio                    stats
	WritesPerPodSet          stats
	MinimumWritesPerPodSet   float64
	WritesAtRest             float64
	ReconcilesAtRest         float64
	WritesAtRestPerReconcile float64
	Platforms                int
	PlatformSeconds          stats
	PlatformFloorSeconds     stats
	PlatformRatio            stats
	Balancers                int
	BalancerSeconds          stats
	BalancerFloorSeconds     stats
	BalancerRatio            stats
	Workspaces               WorkspaceFigures
	Webhooks                 WebhookFigures
	Scaling                  []ScalePoint
	ScalingLinearity         float64
	Memory                   MemoryFigures
	// Real is the real-node part (realnode_test.go).
	Real RealFigures
}

// part reports whether -perf.parts asks for the named part.
func part(name string) bool {
	for _, p := range strings.Split(*parts, ",") {
		if strings.TrimSpace(p) == name {
			return true
		}
	}
	return false
}

func TestPerformance(t *testing.T) {
	// The harness's own controller-runtime clients log nothing worth a line.
	logf.SetLogger(logr.Discard())
	// kwok nodes hold 110 pods: room for the last run's PodSets, the
	// Platforms and Balancers and their floors side by side, and for the
	// largest size of the scaling curve (10/3 N).
	nodes := 4*(*n)/100 + 4
	workspaces := min(50, max(5, *n/6))
	// The kwok parts' cluster; the real part starts its own.
	var e *env
	if part("convergence") || part("api") || part("scaling") {
		e = setup(t, nodes, workspaces+8)
	}
	res := Result{N: *n, Reps: *reps, MinimumWritesPerPodSet: 2, Date: time.Now().UTC().Format(time.RFC3339),
		Machine: fmt.Sprintf("%d cores, %s/%s, %s", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version())}
	res.Commit = strings.TrimSpace(run(t, nil, "git", "rev-parse", "--short", "HEAD"))
	res.Parts, res.ManagerFlags = *parts, *managerFlags
	if part("convergence") {
		var psSecs, depSecs, ratios, writesPer []float64
		for r := range *reps {
			// Alternate which goes first, so neither always meets a warmer cluster.
			psNS, depNS := fmt.Sprintf("ps-%d", r), fmt.Sprintf("dep-%d", r)
			namespace(t, e.c, psNS)
			namespace(t, e.c, depNS)
			var ps, dep time.Duration
			w0, _ := e.scrape()
			if r%2 == 0 {
				ps = convergePodSets(t, e.c, psNS, *n)
				w1, _ := e.scrape()
				writesPer = append(writesPer, (w1-w0)/float64(*n))
				dep = convergeDeployments(t, e.c, depNS, *n)
			} else {
				dep = convergeDeployments(t, e.c, depNS, *n)
				w0, _ = e.scrape()
				ps = convergePodSets(t, e.c, psNS, *n)
				w1, _ := e.scrape()
				writesPer = append(writesPer, (w1-w0)/float64(*n))
			}
			psSecs = append(psSecs, ps.Seconds())
			depSecs = append(depSecs, dep.Seconds())
			ratios = append(ratios, ps.Seconds()/dep.Seconds())
			t.Logf("run %d: %d PodSets Ready in %s, %d Deployments Available in %s (ratio %.2f), %.2f writes per PodSet",
				r+1, *n, ps.Round(time.Millisecond), *n, dep.Round(time.Millisecond), ps.Seconds()/dep.Seconds(), writesPer[len(writesPer)-1])
			// The last run's PodSets stay for the writes at rest.
			dropNamespace(t, e.c, depNS)
			if r < *reps-1 {
				dropNamespace(t, e.c, psNS)
			}
		}
		res.PodSetSeconds, res.DeploymentSeconds, res.Ratio, res.WritesPerPodSet = summarize(psSecs), summarize(depSecs), summarize(ratios), summarize(writesPer)

		// Platforms of four components against the 4 × as many Deployments,
		// and Balancers against what they amount to, created directly.
		res.Platforms, res.Balancers = max(1, *n/6), max(1, *n/3)
		var plSecs, plFloor, plRatio, bSecs, bFloor, bRatio []float64
		for r := range *reps {
			plNS, plFloorNS, bNS, bFloorNS := fmt.Sprintf("pl-%d", r), fmt.Sprintf("plf-%d", r), fmt.Sprintf("bal-%d", r), fmt.Sprintf("balf-%d", r)
			for _, ns := range []string{plNS, plFloorNS, bNS, bFloorNS} {
				namespace(t, e.c, ns)
			}
			backendPods(t, e.c, bNS)
			var pl, plf, b, bf time.Duration
			if r%2 == 0 {
				pl, plf = convergePlatforms(t, e.c, plNS, res.Platforms), convergeDeployments(t, e.c, plFloorNS, 4*res.Platforms)
				b, bf = convergeBalancers(t, e.c, bNS, res.Balancers), balancerFloor(t, e.c, bFloorNS, res.Balancers)
			} else {
				plf, pl = convergeDeployments(t, e.c, plFloorNS, 4*res.Platforms), convergePlatforms(t, e.c, plNS, res.Platforms)
				bf, b = balancerFloor(t, e.c, bFloorNS, res.Balancers), convergeBalancers(t, e.c, bNS, res.Balancers)
			}
			plSecs, plFloor, plRatio = append(plSecs, pl.Seconds()), append(plFloor, plf.Seconds()), append(plRatio, pl.Seconds()/plf.Seconds())
			bSecs, bFloor, bRatio = append(bSecs, b.Seconds()), append(bFloor, bf.Seconds()), append(bRatio, b.Seconds()/bf.Seconds())
			t.Logf("run %d: %d Platforms Running in %s, %d Deployments in %s; %d Balancers Ready in %s, their objects directly in %s",
				r+1, res.Platforms, pl.Round(time.Millisecond), 4*res.Platforms, plf.Round(time.Millisecond), res.Balancers, b.Round(time.Millisecond), bf.Round(time.Millisecond))
			if r < *reps-1 {
				dropNamespace(t, e.c, plNS, plFloorNS, bNS, bFloorNS)
			}
		}
		res.PlatformSeconds, res.PlatformFloorSeconds, res.PlatformRatio = summarize(plSecs), summarize(plFloor), summarize(plRatio)
		res.BalancerSeconds, res.BalancerFloorSeconds, res.BalancerRatio = summarize(bSecs), summarize(bFloor), summarize(bRatio)

		// Writes at rest: a fresh manager reconciles every object once (a full
		// resync) and should write nothing.
		e.stopManager()
		e.startManager()
		var writes, reconciles float64
		waitFor(t, 5*time.Minute, "the restarted manager to reconcile every PodSet", func() bool {
			writes, reconciles = e.scrape()
			return reconciles >= float64(*n+res.Platforms+res.Balancers)
		})
		time.Sleep(3 * time.Second)
		writes, reconciles = e.scrape()
		res.WritesAtRest, res.ReconcilesAtRest = writes, reconciles
		res.WritesAtRestPerReconcile = writes / reconciles
		t.Logf("at rest: %v writes in %v reconciles", writes, reconciles)
		if writes != 0 {
			t.Errorf("the manager wrote %v times at rest (%v reconciles): goal 0", writes, reconciles)
		}
	}

	if part("api") {
		// Workspace start through the API, then the webhooks under load, with
		// the manager serving both.
		manifest, apiPort := serveWebhooksAndAPI(t, e)
		res.Workspaces = measureWorkspaces(t, e, apiPort, workspaces, 5)
		t.Logf("workspaces: create-and-wait %.0f ms, the Pod %.0f ms, overhead %.0f ms (medians)",
			res.Workspaces.Call.Median, res.Workspaces.Pod.Median, res.Workspaces.Overhead.Median)
		res.Webhooks = measureWebhooks(t, e, manifest, *webhookClients, time.Duration(*webhookSeconds)*time.Second, *reps)
		for _, w := range res.Webhooks.PerWebhook {
			t.Logf("webhook %s: %d requests, p50 %.2f ms, p99 %.2f ms", w.Path, w.Requests, w.P50ms, w.P99ms)
		}
		t.Logf("API create p50/p99 with webhooks %.1f/%.1f ms, without %.1f/%.1f ms (medians of the runs)", res.Webhooks.With.CreateP50ms.Median, res.Webhooks.With.CreateP99ms.Median,
			res.Webhooks.Without.CreateP50ms.Median, res.Webhooks.Without.CreateP99ms.Median)
	}

	if part("scaling") {
		// The scaling curve and memory, on a cluster holding nothing else.
		var all corev1.NamespaceList
		if err := e.c.List(context.Background(), &all); err != nil {
			t.Fatal(err)
		}
		var drop []string
		for _, ns := range all.Items {
			if !strings.HasPrefix(ns.Name, "kube-") && ns.Name != "default" {
				drop = append(drop, ns.Name)
			}
		}
		dropNamespace(t, e.c, drop...)
		res.Scaling = measureScaling(t, e, []int{max(1, *n/3), *n, 10 * (*n) / 3})
		res.ScalingLinearity = linearity(res.Scaling)
		res.Memory = measureMemory(t, e, 10*(*n)/3, *reps)
	}

	if part("real") {
		// On a cluster of its own with the machine's one real node, once
		// the kwok parts' cluster is gone.
		if e != nil {
			e.teardown()
		}
		res.Real = measureRealNode(t)
	}
	writeReport(t, res)
	// The verdicts where a developer looks: the test's own output.
	gs := goals(res)
	missed := 0
	for _, g := range gs {
		if !g.met() {
			missed++
		}
	}
	fmt.Printf("\n== performance goals: %d of %d met\n%s\n", len(gs)-missed, len(gs), verdictTable(gs))
}

func writeReport(t *testing.T, r Result) {
	dir := artifacts()
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "report.json"), append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "REPORT.md"), []byte(markdown(r)), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", filepath.Join(dir, "REPORT.md"))
}

// f formats a median with its spread.
func f(s stats, unit string) string {
	if len(s.Runs) == 1 {
		return fmt.Sprintf("%.2f%s (one run)", s.Median, unit)
	}
	return fmt.Sprintf("%.2f%s (min %.2f, max %.2f)", s.Median, unit, s.Min, s.Max)
}

// verdict says whether a figure met its goal (at most goal), and by how
// much it missed.
func verdict(v, goal float64, unit string) string {
	return goalOf("", v, goal, unit, false).verdict()
}

// A goal is a figure held to a bound: at most Bound, or with AtLeast at
// least Bound. A missed goal is reported, never a failed test: these
// machines are noisy.
type goal struct {
	Figure       string
	Value, Bound float64
	Unit         string
	AtLeast      bool
}

func goalOf(figure string, v, bound float64, unit string, atLeast bool) goal {
	return goal{Figure: figure, Value: v, Bound: bound, Unit: unit, AtLeast: atLeast}
}

func (g goal) met() bool {
	if g.AtLeast {
		return g.Value >= g.Bound
	}
	return g.Value <= g.Bound
}

func (g goal) verdict() string {
	op, by := "≤", 100*(g.Value/g.Bound-1)
	if g.AtLeast {
		op, by = "≥", 100*(1-g.Value/g.Bound)
	}
	if g.met() {
		return fmt.Sprintf("goal %s %g%s: met", op, g.Bound, g.Unit)
	}
	return fmt.Sprintf("goal %s %g%s: **missed by %.0f%%**", op, g.Bound, g.Unit, by)
}

// goals are every figure of a run that has a goal (docs/performance.md),
// for the parts that ran.
func goals(r Result) []goal {
	var gs []goal
	if r.Ratio.Median > 0 {
		gs = append(gs,
			goalOf(fmt.Sprintf("%d PodSets until Ready, against Deployments", r.N), r.Ratio.Median, 1.15, "×", false),
			goalOf(fmt.Sprintf("%d Platforms until Running, against their Deployments", r.Platforms), r.PlatformRatio.Median, 1.15, "×", false),
			goalOf(fmt.Sprintf("%d Balancers until Ready, against their objects", r.Balancers), r.BalancerRatio.Median, 1.15, "×", false),
			goalOf("writes at rest after a full resync", r.WritesAtRest, 0, "", false))
	}
	if w := r.Webhooks; w.Without.RequestsPerSecond.Median > 0 {
		for _, wl := range w.PerWebhook {
			gs = append(gs, goalOf("webhook "+wl.Path+" p99", wl.P99ms, 10, " ms", false))
		}
		gs = append(gs,
			goalOf("users' load: requests/s with kubeforge's admission, against none", w.UsersWith.RequestsPerSecond.Median/w.UsersWithout.RequestsPerSecond.Median, 0.9, "×", true),
			goalOf("users' load: create p50 with kubeforge's admission, against none", w.UsersWith.CreateP50ms.Median/w.UsersWithout.CreateP50ms.Median, 1.2, "×", false))
	}
	if r.Workspaces.Workspaces > 0 {
		gs = append(gs, goalOf("Workspace create-and-wait overhead over its Pod", r.Workspaces.Overhead.Median, 100, " ms", false))
	}
	gs = append(gs, realGoals(r.Real)...)
	return gs
}

// verdictTable is the goals as a Markdown table, for the report and the
// test's output.
func verdictTable(gs []goal) string {
	var b strings.Builder
	b.WriteString("| figure | value | verdict |\n|---|---|---|\n")
	for _, g := range gs {
		fmt.Fprintf(&b, "| %s | %.3g%s | %s |\n", g.Figure, g.Value, g.Unit, g.verdict())
	}
	return b.String()
}

func markdown(r Result) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("# kubeforge performance report\n\n")
	p("Measured by `make perf` (tests/perf) on %s, commit %s, %s; each figure %d runs, median and spread, unless it says otherwise.\n", r.Date, r.Commit, r.Machine, r.Reps)
	p("The local cluster is kwok (binary runtime) with etcd, kube-apiserver, kube-controller-manager and kube-scheduler built from\n")
	p("source, all on the same machine as the manager and the clients; kwok plays the kubelet, so a scheduled pod turns Ready at once.\n")
	if r.ManagerFlags == "" {
		p("The manager is `bin/manager` with its default flags (4 reconciles per kind at once, 8 for Workspaces, 50 QPS / 100 burst to the API server).\n\n")
	} else {
		p("The manager is `bin/manager` with `%s`.\n\n", r.ManagerFlags)
	}
	if r.Parts != "convergence,api,scaling,real" {
		p("Parts run: %s; the other sections are empty.\n\n", r.Parts)
	}

	p("How the figures are measured and read, and what they led to: [docs/performance.md](../../docs/performance.md).\n\n")
	p("## Goals\n\nEach figure below that has a goal, and whether this run met it (a miss is reported, not a failed test):\n\n%s\n", verdictTable(goals(r)))
	p("## 1. Convergence against the floor\n\n")
	p("The floor is what the control plane takes for the same workloads created directly, in the same run (the order alternates between runs).\n\n")
	p("| | until all ready | ratio within each run |\n|---|---|---|\n")
	p("| %d PodSets of one replica until Ready | %s | %s — %s |\n", r.N, f(r.PodSetSeconds, " s"), f(r.Ratio, ""), verdict(r.Ratio.Median, 1.15, ""))
	p("| %d Deployments created directly until Available | %s | |\n", r.N, f(r.DeploymentSeconds, " s"))
	p("| %d Platforms of four Deployment components until Running | %s | %s — %s |\n", r.Platforms, f(r.PlatformSeconds, " s"), f(r.PlatformRatio, ""), verdict(r.PlatformRatio.Median, 1.15, ""))
	p("| %d Deployments created directly until Available | %s | |\n", 4*r.Platforms, f(r.PlatformFloorSeconds, " s"))
	p("| %d Balancers (over two shared backend pods) until Ready | %s | %s — %s |\n", r.Balancers, f(r.BalancerSeconds, " s"), f(r.BalancerRatio, ""), verdict(r.BalancerRatio.Median, 1.15, ""))
	p("| what they amount to created directly — a proxy Deployment, a ConfigMap and two Services each — until the proxies are Available | %s | |\n\n", f(r.BalancerFloorSeconds, " s"))

	p("## 2. API writes\n\n| | |\n|---|---|\n")
	p("| writes per PodSet while converging | %s (minimum %.0f: its Deployment and one status write) |\n", f(r.WritesPerPodSet, ""), r.MinimumWritesPerPodSet)
	p("| writes at rest after a full resync (manager restarted) | **%.0f** in %.0f reconciles (goal 0) |\n\n", r.WritesAtRest, r.ReconcilesAtRest)
	p("Writes are every POST, PUT, PATCH and DELETE of the manager (`rest_client_requests_total`) while the PodSets converge.\n\n")

	w := r.Webhooks
	p("## 3. Webhook latency\n\n")
	p("%d clients for %.0f s each create up to four objects of one kind (PodSet, Platform, Balancer, stopped Workspace; all without replicas) and then\n", w.Clients, w.Seconds)
	p("keep updating them (an annotation, by merge patch; the annotation load), and the users' load below: %d webhook calls, every one a\n", w.WebhookRequests)
	p("mutating webhook's (the validating webhooks' matchConditions leave out what the mutating webhook stamped, which is everything\n")
	p("here; updates of an annotation not kubeforge's call no webhook at all). Latency inside the manager, SubjectAccessReviews\n")
	p("included, from the native histogram of `controller_runtime_webhook_latency_seconds` (buckets 9%% wide; the figure is the\n")
	p("bucket's upper bound):\n\n")
	p("| webhook | calls | p50 | p99 | |\n|---|---|---|---|---|\n")
	for _, wl := range w.PerWebhook {
		p("| `%s` | %d | %.3f ms | %.3f ms | %s |\n", wl.Path, wl.Requests, wl.P50ms, wl.P99ms, verdict(wl.P99ms, 10, " ms"))
	}
	p("\nThe API server's throughput and latency as the clients saw them, with kubeforge's admission (the webhooks and the\n")
	p("ValidatingAdmissionPolicies of config/policy) and with none, %d runs of each alternating which goes first (per run the quantile\n", w.Runs)
	p("of its requests; median and spread over the runs). **The users' load** (the goal's): %d clients, each a user of its own in\n", w.Clients)
	p("a group whose Role lets it use kubeforge's kinds, create objects of every kind whose specs name a Secret, a ConfigMap, a\n")
	p("ServiceAccount and volumes, and then change those specs — every request checked in full, SubjectAccessReviews included\n")
	p("(by the mutating webhook before it stamps; the references policies, like the validating webhooks, leave out what it stamped for the request).\n")
	p("Without admission each client signs what it writes as the mutating webhook would, so that the reconcilers do the same work\n")
	p("in both. **The annotation load** above (objects naming nothing, then annotation patches) is the second figure.\n\n")
	p("| load | admission | requests/s | create p50 | create p99 | update p50 | update p99 |\n|---|---|---|---|---|---|---|\n")
	for _, row := range []struct {
		load, name string
		c          ClientLatency
	}{{"users", "kubeforge's", w.UsersWith}, {"users", "none", w.UsersWithout}, {"annotations", "kubeforge's", w.With}, {"annotations", "none", w.Without}} {
		p("| %s | %s | %s | %s | %s | %s | %s |\n", row.load, row.name, f(row.c.RequestsPerSecond, ""), f(row.c.CreateP50ms, " ms"), f(row.c.CreateP99ms, " ms"),
			f(row.c.UpdateP50ms, " ms"), f(row.c.UpdateP99ms, " ms"))
	}
	if w.UsersWithout.RequestsPerSecond.Median > 0 && w.Without.RequestsPerSecond.Median > 0 {
		p("\nRatios: the users' load %.3f× the requests/s and %.2f× the create p50 (%s; %s); the annotation load %.3f× and %.2f×.\n",
			w.UsersWith.RequestsPerSecond.Median/w.UsersWithout.RequestsPerSecond.Median, w.UsersWith.CreateP50ms.Median/w.UsersWithout.CreateP50ms.Median,
			goalOf("", w.UsersWith.RequestsPerSecond.Median/w.UsersWithout.RequestsPerSecond.Median, 0.9, "×", true).verdict(),
			verdict(w.UsersWith.CreateP50ms.Median/w.UsersWithout.CreateP50ms.Median, 1.2, "×"),
			w.With.RequestsPerSecond.Median/w.Without.RequestsPerSecond.Median, w.With.CreateP50ms.Median/w.Without.CreateP50ms.Median)
	}
	if uw, uo := w.UsersWith, w.UsersWithout; len(uw.APIServerCPUms.Runs) > 0 && len(uo.APIServerCPUms.Runs) > 0 {
		p("\nWhat each request of the users' load cost in CPU (user and system, from /proc, over the load; per request the clients\n")
		p("made): the API server %s with kubeforge's admission against %s with none, the manager %s against %s —\n",
			f(uw.APIServerCPUms, " ms"), f(uo.APIServerCPUms, " ms"), f(uw.ManagerCPUms, " ms"), f(uo.ManagerCPUms, " ms"))
		p("admission's cost, %.2f ms a request of the two together, steadier from run to run than the throughput.\n",
			uw.APIServerCPUms.Median+uw.ManagerCPUms.Median-uo.APIServerCPUms.Median-uo.ManagerCPUms.Median)
	}

	m := r.Memory
	p("\n## 4. Memory\n\n")
	p("%d PodSets, each owning a Deployment and its Pod (%d owned objects), and %d unrelated objects (ConfigMaps and Secrets of 2 KiB) in the cluster.\n", m.PodSets, m.Owned, m.Unrelated)
	p("The manager is restarted under each cache setting and read once it has reconciled every PodSet and settled: heap in use is the\n")
	p("lowest of ten readings over 10 s (closest to the live heap), RSS the last, peak RSS the process's high-water mark (VmHWM).\n\n")
	p("| managedFields stripped | label-filtered cache | heap in use | RSS | peak RSS | writes at start |\n|---|---|---|---|---|---|\n")
	onOff := map[bool]string{true: "on", false: "off"}
	for _, st := range m.Settings {
		p("| %s | %s | %s | %s | %s | %.0f |\n", onOff[st.StripManagedFields], onOff[st.LabelFilter], f(st.HeapMiB, " MiB"), f(st.RSSMiB, " MiB"), f(st.PeakRSSMiB, " MiB"), st.WritesAtStart)
	}

	p("\n## 5. Scaling curve\n\n")
	p("PodSets of one replica converged by a freshly started manager, one run per size:\n\n")
	p("| PodSets | until all Ready | per PodSet | peak RSS | peak heap in use |\n|---|---|---|---|---|\n")
	for _, sp := range r.Scaling {
		p("| %d | %.1f s | %.0f ms | %.0f MiB | %.0f MiB |\n", sp.PodSets, sp.Seconds, sp.MsPerPodSet, sp.PeakRSSMiB, sp.PeakHeapMiB)
	}
	p("\nTime per PodSet at the largest size over the smallest: **%.2f** (1 is linear).\n\n", r.ScalingLinearity)

	ws := r.Workspaces
	p("## 6. Workspace start\n\n")
	p("%d Workspaces created through the API's gRPC `CreateSpaceAndWaitForRunning`, %d at a time, with the webhooks installed; a watch\n", ws.Workspaces, ws.Parallel)
	p("records when each Pod appears and turns Ready. Milliseconds, median and spread over the Workspaces:\n\n| | |\n|---|---|\n")
	p("| the call, until it returned Running | %s |\n", f(ws.Call, " ms"))
	p("| the Pod, from created to Ready | %s |\n", f(ws.Pod, " ms"))
	p("| overhead: the call minus the Pod's own time | %s — %s |\n", f(ws.Overhead, " ms"), verdict(ws.Overhead.Median, 100, " ms"))
	p("| of which before the Pod existed | %s |\n", f(ws.BeforePod, " ms"))
	p("| — the call until a watch saw the Workspace (authorisation, API server, webhooks) | %s |\n", f(ws.UntilWorkspace, " ms"))
	p("| — from there until a watch saw its Pod (the reconcile: volume claim, Pod) | %s |\n", f(ws.UntilPod, " ms"))
	p("| of which after the Pod was Ready (reconcile, status write, the wait noticing) | %s |\n", f(ws.AfterReady, " ms"))

	p("\n## 7. On a real node\n\n")
	p("%s", realMarkdown(r.Real))
	return b.String()
}
