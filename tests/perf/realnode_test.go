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
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubeforge/kubeforge/internal/proof"
	"github.com/kubeforge/kubeforge/internal/scheme"
	"github.com/kubeforge/kubeforge/internal/test/e2ekit"
	"github.com/kubeforge/kubeforge/internal/test/testenv"
)

// The real-node part (-perf.parts real): what kwok cannot show, measured
// on a cluster of its own with the machine's one real node (kubelet,
// containerd, runc, kube-proxy: hack/real-node.sh) — traffic through a
// Balancer's proxy against a plain ClusterIP Service, a Workspace's start
// until its IDE answers against a plain Pod, and real PodSet pods against
// a Deployment's. Each figure is a ratio or a difference within one run.

var (
	realSeconds = flag.Float64("perf.real-seconds", 0, "how long each traffic point of the real-node part runs against each target, in seconds; 0: -perf.webhook-seconds/4 within 1..15 (15 for make perf, 1 for make test-perf)")
	realCPU     = flag.String("perf.real-cpu", "500m", "the CPU limit of the real-node traffic's client Pod, each backend Pod and the Balancer's proxy")
	realPods    = flag.Int("perf.real-pods", 0, "pods of the real-node PodSet and of its Deployment; 0: -perf.n/6 within 10..50 (50 for make perf, 10 for make test-perf)")
)

const (
	// perfCluster is the kwok parts' cluster; realClusterName the real
	// node's.
	perfCluster     = "kubeforge-perf"
	realClusterName = "kubeforge-perf-real"
	// realNodeLabel is the label hack/real-node.sh gives the real node;
	// the fake node is tainted besides, so what names no node lands there.
	realNodeLabel = "kubeforge.io/node"
	echoImage     = "kubeforge.test/echoserver:v1"
	realNS        = "perf-real"
)

// RealFigures are section 7 of the report: the real-node part.
type RealFigures struct {
	// CPU is the CPU limit of the traffic's client, backends and proxy;
	// PointSeconds how long each traffic point ran.
	CPU          string
	PointSeconds float64
	Traffic      []TrafficPoint
	Workspace    RealWorkspaceFigures
	// Pods: one PodSet of Pods replicas against one Deployment of as many.
	Pods int
	PodFigures
	// SetupSeconds: the cluster with its real node, the images, the
	// manager; TotalSeconds: the whole part, the cluster's deletion aside.
	SetupSeconds, TotalSeconds float64
}

// PodFigures are the real PodSet against a Deployment: until all are
// Ready (seconds), the PodSet's split (until its Deployment was seen, and
// from the Deployment's pods all available until the PodSet was Ready),
// and what each start cost beside the pods: CPU seconds of the manager
// and of the API server while it ran, and the manager's reconciles and
// writes during the PodSet's.
type PodFigures struct {
	PodSetSeconds, DeploymentSeconds           stats
	PodSetRatio                                stats
	PodSetBefore, PodSetAfter                  stats
	PodSetManagerCPU, DeploymentManagerCPU     stats
	PodSetAPIServerCPU, DeploymentAPIServerCPU stats
	PodSetReconciles, PodSetWrites             stats
}

// TrafficPoint is one protocol at one concurrency, through the Balancer
// and through a ClusterIP Service to the same backend Pods.
type TrafficPoint struct {
	Protocol            string // HTTP (keep-alive GETs) or UDP (request/response datagrams)
	Concurrency         int
	Balancer, ClusterIP LoadFigures
	// Ratio is the Balancer's requests/s over the ClusterIP's, P99Added
	// its p99 minus the ClusterIP's (ms), within each run.
	Ratio, P99Added stats
}

// LoadFigures are what `echoserver load` reported, over the runs.
type LoadFigures struct {
	RPS, P50ms, P99ms stats
	Errors            int64
}

// RealWorkspaceFigures are seconds from create (or started: true), as a
// poll every 50 ms saw them. A Workspace until its IDE answers GET
// /healthz (asked by the harness at the Pod's address, so without the
// readiness probe's 2 s period) and until Running (the kubelet's probe
// answered, the status written), against a plain Pod of the same spec and
// a claim of its own until the IDE answers and until Ready; the
// Workspace's split (until its Pod was seen, the Pod's own start, after
// the Pod was Ready); a stopped Workspace started again.
type RealWorkspaceFigures struct {
	Workspace, Pod, Added                      stats
	WorkspaceAnswers, PodAnswers, AddedAnswers stats
	BeforePod, WorkspacePod, AfterReady        stats
	Restart, RestartAnswers                    stats
}

// loadResult is the JSON line of `echoserver load`.
type loadResult struct {
	Requests int64   `json:"requests"`
	Errors   int64   `json:"errors"`
	Seconds  float64 `json:"seconds"`
	RPS      float64 `json:"rps"`
	P50ms    float64 `json:"p50_ms"`
	P99ms    float64 `json:"p99_ms"`
}

// realEnv is the real part's cluster and manager; ide says when the IDE
// image is in the cluster's registry.
type realEnv struct {
	*env
	ide chan error
}

// teardown deletes the kwok parts' cluster before the real part starts
// its own (what setup's cleanup would do at the end, which then finds
// nothing left): the real node's cluster runs alone on the machine.
func (e *env) teardown() {
	e.stopManager()
	if os.Getenv("PERF_KEEP_CLUSTER") == "" {
		run(e.t, e.clusterEnv, "hack/cluster.sh", "down")
	}
}

// kubectl runs kubectl (the cluster's version) against the real cluster.
func (r *realEnv) kubectl(ctx context.Context, args ...string) (string, error) {
	cmd := commandContext(ctx, "kubectl", args...)
	cmd.Env = append(os.Environ(), append(r.clusterEnv, "KUBECONFIG="+r.kubeconfig)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out), nil
}

// setupReal starts the real part's cluster — its own, with the real node
// (hack/cluster.sh up, REAL_NODE=1), deleted when the test ends however
// far it got — pushes the images, installs the CRDs and starts the
// manager on this machine as the kwok parts do.
func setupReal(t *testing.T, volumes int) *realEnv {
	if os.Geteuid() != 0 {
		t.Fatalf("the real part (-perf.parts real) needs root: the real node runs containerd, the kubelet and kube-proxy (hack/real-node.sh); run as root or leave real out of -perf.parts")
	}
	bin := strings.TrimSpace(run(t, nil, "hack/test-binaries.sh", "--print"))
	clusterEnv := []string{"CLUSTER_NAME=" + realClusterName, "REAL_NODE=1", "CLUSTER_NODES=1",
		fmt.Sprintf("CLUSTER_VOLUMES=%d", volumes), "PATH=" + bin + ":" + os.Getenv("PATH")}
	// Deleted however far its start got: its real node would keep the
	// machine's one node from everything after.
	t.Cleanup(func() {
		if os.Getenv("PERF_KEEP_CLUSTER") == "" {
			t0 := time.Now()
			run(t, clusterEnv, "hack/cluster.sh", "down")
			t.Logf("real node: cluster deleted in %s", time.Since(t0).Round(100*time.Millisecond))
		}
	})
	t0 := time.Now()
	kubeconfig, err := e2ekit.ClusterUp(root, clusterEnv, "PERF_REUSE_CLUSTER")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("real node: cluster up in %s", time.Since(t0).Round(100*time.Millisecond))
	// The images (built once, then cached; pushed to this cluster's
	// registry every time) while the manager builds and starts: the
	// traffic's first, the IDE's — the longest — on its own.
	var pushing sync.WaitGroup
	t.Cleanup(pushing.Wait) // before the cluster goes, however the test ends
	push := func(images ...string) chan error {
		done := make(chan error, 1)
		pushing.Add(1)
		go func() {
			defer pushing.Done()
			t1 := time.Now()
			_, err := e2ekit.Run(root, clusterEnv, nil, "hack/images.sh", images...)
			if err == nil {
				t.Logf("real node: images %s pushed in %s", strings.Join(images, ", "), time.Since(t1).Round(100*time.Millisecond))
			}
			done <- err
		}()
		return done
	}
	images, ide := push("nginx", "echoserver"), push("code-server")
	r := &realEnv{env: &env{t: t, kubeconfig: kubeconfig, clusterEnv: clusterEnv}, ide: ide}
	cfg := restConfig(t, kubeconfig)
	cfg.QPS, cfg.Burst = 500, 1000
	if r.c, err = client.New(cfg, client.Options{Scheme: scheme.New()}); err != nil {
		t.Fatal(err)
	}
	run(t, append([]string{"KUBECONFIG=" + kubeconfig}, clusterEnv...), "kubectl", "apply", "--server-side", "--force-conflicts", "-f", "config/crd/bases")
	waitFor(t, 2*time.Minute, "the CRDs to be established", func() bool {
		_, err := r.kubectl(context.Background(), "wait", "--for=condition=Established", "--timeout=10s", "crd", "--all")
		return err == nil
	})
	run(t, nil, "go", "build", "-o", "bin/manager", "./cmd/manager")
	r.metrics, r.probe = freePort(t), freePort(t)
	r.startManager()
	t.Cleanup(r.stopManager)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	keys, err := proof.Load(ctx, r.c, "kube-system", proof.DefaultSecretName)
	if err != nil {
		t.Fatal(err)
	}
	r.raw, r.c = r.c, testenv.AdmittingClient(r.c, r.c.Scheme(), keys)
	if err := <-images; err != nil {
		t.Fatal(err)
	}
	return r
}

// measureRealNode runs the real part: its cluster, the traffic, the
// PodSets, the Workspaces.
func measureRealNode(t *testing.T) RealFigures {
	start := time.Now()
	res := RealFigures{CPU: *realCPU, PointSeconds: *realSeconds, Pods: *realPods}
	if res.PointSeconds <= 0 {
		res.PointSeconds = float64(min(15, max(1, *webhookSeconds/4)))
	}
	if res.Pods <= 0 {
		res.Pods = min(50, max(10, *n/6))
	}
	if _, err := resource.ParseQuantity(res.CPU); err != nil {
		t.Fatalf("-perf.real-cpu %q: %v", res.CPU, err)
	}
	// A home for the warm-up Workspace, and a Workspace's and a plain
	// Pod's per run (the volumes are Retain: a claim deleted leaves its
	// volume Released).
	r := setupReal(t, 2*(*reps)+3)
	namespace(t, r.c, realNS)
	// The IDE image is pulled and run once before anything is measured,
	// while the traffic's Pods start.
	tr := r.startTraffic(res.CPU)
	if err := <-r.ide; err != nil {
		t.Fatal(err)
	}
	warmPod := r.warmedUp(r.startWarmWorkspace())
	tr.waitServing()
	res.SetupSeconds = time.Since(start).Seconds()
	t.Logf("real node: set up in %.1f s", res.SetupSeconds)

	t0 := time.Now()
	res.Traffic = tr.measure(time.Duration(res.PointSeconds*float64(time.Second)), *reps)
	tr.stop()
	t.Logf("real node: traffic measured in %s", time.Since(t0).Round(100*time.Millisecond))

	t0 = time.Now()
	res.PodFigures = r.measurePods(res.Pods, *reps)
	t.Logf("real node: pods measured in %s", time.Since(t0).Round(100*time.Millisecond))

	t0 = time.Now()
	res.Workspace = r.measureWorkspaces(warmPod, *reps)
	t.Logf("real node: workspaces measured in %s", time.Since(t0).Round(100*time.Millisecond))
	res.TotalSeconds = time.Since(start).Seconds()
	return res
}

// parseLoad reads the JSON lines `echoserver load` printed, one per
// target.
func parseLoad(out string, targets int) ([]loadResult, error) {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != targets {
		return nil, fmt.Errorf("echoserver load printed %d lines for %d targets: %q", len(lines), targets, out)
	}
	res := make([]loadResult, targets)
	for i, l := range lines {
		if err := json.Unmarshal([]byte(l), &res[i]); err != nil {
			return nil, fmt.Errorf("echoserver load printed %q: %w", out, err)
		}
	}
	return res, nil
}

// echoContainer is the echoserver with the traffic's CPU limit (and a
// small request, so that all of them fit the node).
func echoContainer(cpu string, args ...string) corev1.Container {
	return corev1.Container{
		Name: "echo", Image: echoImage, Args: args,
		Resources: cpuLimit(cpu),
	}
}

func cpuLimit(cpu string) corev1.ResourceRequirements {
	if cpu == "" {
		return corev1.ResourceRequirements{}
	}
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)},
	}
}

// onRealNode pins a Pod to the real node.
func onRealNode(spec corev1.PodSpec) corev1.PodSpec {
	spec.NodeSelector = map[string]string{realNodeLabel: "real"}
	spec.TerminationGracePeriodSeconds = new(int64(1))
	return spec
}

// commandContext is exec.CommandContext run from the repository's root.
func commandContext(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = root
	return cmd
}

// realGoals are the real part's figures with a goal, when it ran.
func realGoals(r RealFigures) []goal {
	var gs []goal
	for _, p := range r.Traffic {
		what := fmt.Sprintf("%s through a Balancer, %d %s", p.Protocol, p.Concurrency, concurrencyUnit(p))
		gs = append(gs,
			goalOf(what+": requests/s against a ClusterIP Service", p.Ratio.Median, 0.85, "×", true),
			goalOf(what+": p99 added over a ClusterIP Service", p.P99Added.Median, 1, " ms", false))
	}
	if len(r.Workspace.AddedAnswers.Runs) > 0 {
		gs = append(gs, goalOf("real node: Workspace create until its IDE answers /healthz, over a plain Pod's", r.Workspace.AddedAnswers.Median, 1, " s", false))
	}
	if len(r.PodSetRatio.Runs) > 0 {
		gs = append(gs, goalOf(fmt.Sprintf("real node: a PodSet of %d pods until Ready, against a Deployment", r.Pods), r.PodSetRatio.Median, 1.1, "×", false))
	}
	return gs
}

func concurrencyUnit(p TrafficPoint) string {
	unit := "connection"
	if p.Protocol == "UDP" {
		unit = "sender"
	}
	if p.Concurrency != 1 {
		unit += "s"
	}
	return unit
}

// realMarkdown is section 7 of the report.
func realMarkdown(r RealFigures) string {
	if len(r.Traffic) == 0 {
		return "Not run (`-perf.parts` without `real`).\n"
	}
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("On a cluster of its own (`hack/cluster.sh up` with `REAL_NODE=1`): the control plane as above, one fake node (tainted), and a real node on\n")
	p("this machine — kubelet, containerd, runc, kube-proxy in iptables mode, CoreDNS — running the images `hack/images.sh` builds here (nginx,\n")
	p("the echoserver test backend, code-server). The manager runs on this machine as above. Set up in %.0f s (cluster, images, manager,\n", r.SetupSeconds)
	p("the first Pods, the warm-up IDE); the part took %.0f s in all, the cluster's deletion aside.\n\n", r.TotalSeconds)

	p("### Balancer proxy against a ClusterIP Service\n\n")
	p("Two echoserver backend Pods (HTTP on 8080, a UDP echo on 9000); a Balancer of one backend selecting both (one nginx proxy Pod)\n")
	p("and a plain ClusterIP Service selecting the same two. A client Pod runs `echoserver load` (hack/echoserver) against either\n")
	p("Service's ClusterIP for %g s per point — HTTP: `GET /healthz` over keep-alive connections, one request at a time on each; UDP: a\n", r.PointSeconds)
	p("16-byte datagram and its echo, one at a time from each socket —, which target goes first alternating. The client, each backend\n")
	p("and the proxy (the Balancer's `spec.resources`) have the same CPU limit, %s (request 50m). Requests/s and the answered\n", r.CPU)
	p("requests' latency as the client saw it; the ratio and the p99 difference are taken within each run.\n\n")
	p("| | Balancer requests/s | ClusterIP requests/s | ratio | Balancer p50 / p99 | ClusterIP p50 / p99 | p99 added |\n|---|---|---|---|---|---|---|\n")
	var errs [2]int64
	for _, t := range r.Traffic {
		p("| %s, %d %s | %s | %s | %s — %s | %.3f / %.3f ms | %.3f / %.3f ms | %s — %s |\n", t.Protocol, t.Concurrency, concurrencyUnit(t),
			fInt(t.Balancer.RPS), fInt(t.ClusterIP.RPS), f(t.Ratio, "×"), goalOf("", t.Ratio.Median, 0.85, "×", true).verdict(),
			t.Balancer.P50ms.Median, t.Balancer.P99ms.Median, t.ClusterIP.P50ms.Median, t.ClusterIP.P99ms.Median,
			f(t.P99Added, " ms"), verdict(t.P99Added.Median, 1, " ms"))
		errs[0], errs[1] = errs[0]+t.Balancer.Errors, errs[1]+t.ClusterIP.Errors
	}
	p("\nRequests that failed (an error, or no answer within %s; more than 1%% fails the test): %d through the Balancer, %d\n", loadTimeout, errs[0], errs[1])
	p("through the ClusterIP Service. The p99 of the 8 and 32 points is mostly the CPU limit's throttling (CFS periods of 100 ms)\n")
	p("of whichever Pod ran out of quota first, and moves by milliseconds from run to run either way.\n")

	ws := r.Workspace
	p("\n### Workspace start against a plain Pod\n\n")
	p("A Workspace (code-server, 1Gi home) against a plain Pod with the Workspace Pod's own spec (image, env, readiness probe\n")
	p("`GET /healthz` every 2 s, security) and a claim of its own like the home; a warm-up Workspace pulled the image and ran\n")
	p("code-server once before. Seconds from create, as a poll every 50 ms saw them: until the IDE answers `GET /healthz` at the\n")
	p("Pod's address (asked by the harness: no probe period in it — the goal), and until the Workspace is `Running` / the plain Pod\n")
	p("Ready (the kubelet's probe answered: each waits for the probe's next 2 s tick, so one run's difference moves by up to 2 s).\n\n")
	p("| | Workspace | plain Pod | added by the Workspace |\n|---|---|---|---|\n")
	p("| create until the IDE answers /healthz | %s | %s | %s — %s |\n", f(ws.WorkspaceAnswers, " s"), f(ws.PodAnswers, " s"),
		f(ws.AddedAnswers, " s"), verdict(ws.AddedAnswers.Median, 1, " s"))
	p("| create until Running / Ready | %s | %s | %s |\n\n", f(ws.Workspace, " s"), f(ws.Pod, " s"), f(ws.Added, " s"))
	p("| the Workspace's start, split | |\n|---|---|\n")
	p("| until its Pod was seen (reconcile: password Secret with its argon2id hash, claim, Service, NetworkPolicy, Pod) | %s |\n", f(ws.BeforePod, " s"))
	p("| its Pod, from seen until Ready | %s |\n", f(ws.WorkspacePod, " s"))
	p("| from its Pod Ready until Running (reconcile, status write) | %s |\n", f(ws.AfterReady, " s"))
	p("| a stopped Workspace (home kept), from `started: true` until the IDE answers | %s |\n", f(ws.RestartAnswers, " s"))
	p("| — and until Running | %s |\n", f(ws.Restart, " s"))

	p("\n### Real PodSet pods against a Deployment's\n\n")
	p("One PodSet of %d replicas until Ready against one Deployment of %d until all are available, the echoserver pinned to the real\n", r.Pods, r.Pods)
	p("node (its image there already), which goes first alternating; each deleted and its pods gone before the next.\n\n| | |\n|---|---|\n")
	p("| a PodSet of %d pods until Ready | %s |\n", r.Pods, f(r.PodSetSeconds, " s"))
	p("| a Deployment of %d pods until available | %s |\n", r.Pods, f(r.DeploymentSeconds, " s"))
	p("| ratio within each run | %s — %s |\n", f(r.PodSetRatio, "×"), verdict(r.PodSetRatio.Median, 1.1, "×"))
	p("| the PodSet's: until its Deployment was seen (reconcile, create) | %s |\n", f(r.PodSetBefore, " s"))
	p("| the PodSet's: from its Deployment's pods all available until Ready (reconcile, status write) | %s |\n", f(r.PodSetAfter, " s"))
	p("| the manager's CPU while the PodSet's pods started, against while the Deployment's did | %s against %s |\n", f(r.PodSetManagerCPU, " s"), f(r.DeploymentManagerCPU, " s"))
	p("| the API server's CPU, the same | %s against %s |\n", f(r.PodSetAPIServerCPU, " s"), f(r.DeploymentAPIServerCPU, " s"))
	p("| the manager's reconciles and writes while the PodSet's pods started | %s reconciles, %s writes |\n", fInt(r.PodSetReconciles), fInt(r.PodSetWrites))
	return b.String()
}

// fInt is f for figures in the thousands: no decimals.
func fInt(s stats) string {
	if len(s.Runs) == 1 {
		return fmt.Sprintf("%.0f (one run)", s.Median)
	}
	return fmt.Sprintf("%.0f (min %.0f, max %.0f)", s.Median, s.Min, s.Max)
}
