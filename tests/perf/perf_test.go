/*
Copyright 2026 The kubeforge Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package perf measures kubeforge against the control plane's own speed
// on the local kwok cluster: N PodSets against N Deployments created
// directly (the floor), and the API writes the manager makes at rest.
// `make perf` runs it at N = 300 and writes REPORT.md; `make test` runs
// N = 20 so that it cannot rot.
package perf

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
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

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	networkingv1alpha1 "github.com/kubeforge/kubeforge/api/networking/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/scheme"
	"github.com/kubeforge/kubeforge/internal/testenv"
)

var (
	n      = flag.Int("perf.n", 20, "objects per convergence run")
	reps   = flag.Int("perf.reps", 3, "repetitions of each measurement")
	report = flag.String("perf.report", "", "where to write REPORT.md and report.json; tests/perf/out when empty")
)

var root = testenv.RepoRoot()

type env struct {
	t          *testing.T
	kubeconfig string
	c          client.Client
	manager    *exec.Cmd
	done       chan struct{}
	metrics    int
	probe      int
	log        string
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
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func setup(t *testing.T, nodes int) *env {
	bin := strings.TrimSpace(run(t, nil, "hack/test-binaries.sh", "--print"))
	clusterEnv := []string{"CLUSTER_NAME=kubeforge-perf", fmt.Sprintf("CLUSTER_NODES=%d", nodes), "PATH=" + bin + ":" + os.Getenv("PATH")}
	e := &env{t: t, kubeconfig: strings.TrimSpace(run(t, clusterEnv, "hack/cluster.sh", "up"))}
	t.Cleanup(func() {
		if os.Getenv("PERF_KEEP_CLUSTER") == "" {
			run(t, clusterEnv, "hack/cluster.sh", "down")
		}
	})
	cfg, err := clientcmd.BuildConfigFromFlags("", e.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
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
	return e
}

// startManager runs the manager as a user would, without webhooks (the
// convergence runs measure reconciling), metrics over plain HTTP.
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
	e.manager = exec.Command(filepath.Join(root, "bin/manager"), "--kubeconfig", e.kubeconfig, "--enable-webhooks=false",
		"--metrics-secure=false", "--metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", e.metrics),
		"--health-probe-bind-address", fmt.Sprintf("127.0.0.1:%d", e.probe), "--api-bind-address", "0")
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
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", e.metrics))
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	s := bufio.NewScanner(resp.Body)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		line := s.Text()
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		v, _ := strconv.ParseFloat(fields[len(fields)-1], 64)
		switch {
		case strings.HasPrefix(line, "rest_client_requests_total{"):
			for _, m := range []string{`method="POST"`, `method="PUT"`, `method="PATCH"`, `method="DELETE"`} {
				if strings.Contains(line, m) {
					writes += v
				}
			}
		case strings.HasPrefix(line, "controller_runtime_reconcile_total{"):
			reconciles += v
		}
	}
	return writes, reconciles
}

var template = corev1.PodTemplateSpec{
	ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"perf": "yes"}},
	Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example.com/app:1"}}},
}

// createAll creates n objects with a few parallel writers.
func createAll(t *testing.T, c client.Client, n int, build func(i int) client.Object) {
	var wg sync.WaitGroup
	errs := make(chan error, n)
	work := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if err := c.Create(context.Background(), build(i)); err != nil {
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
	for err := range errs {
		t.Fatal(err)
	}
}

func namespace(t *testing.T, c client.Client, name string) {
	if err := c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
}

func dropNamespace(t *testing.T, c client.Client, name string) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := c.Delete(context.Background(), ns); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Minute, "namespace "+name+" to go", func() bool {
		return apierrors.IsNotFound(c.Get(context.Background(), client.ObjectKeyFromObject(ns), ns))
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
				Ports:    []networkingv1alpha1.BalancerPort{{Name: "http", Port: 80, TargetPort: 8080}},
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
}

func TestConvergenceAndWritesAtRest(t *testing.T) {
	// kwok nodes hold 110 pods: room for the last run's PodSets, the
	// Platforms and Balancers and their floors, side by side.
	nodes := 3*(*n)/100 + 4
	e := setup(t, nodes)
	res := Result{N: *n, Reps: *reps, MinimumWritesPerPodSet: 2, Date: time.Now().UTC().Format(time.RFC3339),
		Machine: fmt.Sprintf("%d cores, %s/%s, %s", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version())}
	res.Commit = strings.TrimSpace(run(t, nil, "git", "rev-parse", "--short", "HEAD"))
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
	// The local cluster's Service range is a /24: 40 Balancers (four
	// Services each with their floor) is what fits beside everything else;
	// the 100 would need a wider range.
	res.Platforms, res.Balancers = max(1, *n/6), min(40, max(1, *n/3))
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
			for _, ns := range []string{plNS, plFloorNS, bNS, bFloorNS} {
				dropNamespace(t, e.c, ns)
			}
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
	writeReport(t, res)
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
	f := func(s stats, unit string) string {
		return fmt.Sprintf("%.2f%s (min %.2f, max %.2f)", s.Median, unit, s.Min, s.Max)
	}
	md := fmt.Sprintf(`# kubeforge performance report

Measured by tests/perf on %s, commit %s, %s; %d runs each, median and spread.
The local cluster is kwok (binary runtime) with the Kubernetes components
built from source; kwok plays the kubelet, so pods turn Ready at once.

## 1. Convergence against the floor (N = %d, one replica each)

| | time until all ready |
|---|---|
| %d PodSets (kubeforge) until Ready | %s |
| %d Deployments created directly until Available | %s |
| ratio, within each run | %s (goal ≤ 1.15) |
| %d Platforms of four Deployment components until Running | %s |
| %d Deployments created directly until Available | %s |
| ratio | %s (goal ≤ 1.15) |
| %d Balancers (over two shared backend pods) until Ready | %s |
| what they amount to created directly (a proxy Deployment, a ConfigMap and two Services each) until the proxies are Available | %s |
| ratio | %s (goal ≤ 1.15) |

## 2. API writes

| | |
|---|---|
| writes per PodSet during convergence | %s (minimum %.0f: its Deployment and one status write) |
| writes at rest after a full resync (restart) | %.0f in %.0f reconciles (goal 0) |

Writes per PodSet count every POST, PUT, PATCH and DELETE of the manager
(rest_client_requests_total) while the PodSets converge: the Deployment, an
event recording its creation (events are writes too), and one status write
per state the PodSet passes through (created, pod scheduled, Ready).

## Not measured yet

Webhook latency under 50 clients, memory with and without the cache transforms, the scaling curve
and the workspace start overhead (issue 11) are still to be added to the
harness.
`, r.Date, r.Commit, r.Machine, r.Reps, r.N, r.N, f(r.PodSetSeconds, " s"), r.N, f(r.DeploymentSeconds, " s"), f(r.Ratio, ""),
		r.Platforms, f(r.PlatformSeconds, " s"), 4*r.Platforms, f(r.PlatformFloorSeconds, " s"), f(r.PlatformRatio, ""),
		r.Balancers, f(r.BalancerSeconds, " s"), f(r.BalancerFloorSeconds, " s"), f(r.BalancerRatio, ""),
		f(r.WritesPerPodSet, ""), r.MinimumWritesPerPodSet, r.WritesAtRest, r.ReconcilesAtRest)
	if err := os.WriteFile(filepath.Join(dir, "REPORT.md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", filepath.Join(dir, "REPORT.md"))
}
