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
	"crypto/tls"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
	idev1 "github.com/kubeforge/kubeforge/internal/apiserver/idev1"
	"github.com/kubeforge/kubeforge/internal/scheme"
)

// WorkspaceFigures are the workspace-start part of the report, in
// milliseconds: per Workspace, the create-and-wait call, the Pod's own
// time (created → Ready, as a watch sees it) and the rest — what the
// operator and its API add: before the Pod exists (API call, webhooks,
// reconcile) and after it is Ready (reconcile, status write, the wait
// noticing).
type WorkspaceFigures struct {
	Workspaces, Parallel  int
	Call, Pod, Overhead   stats
	BeforePod, AfterReady stats
	// BeforePod split: the API call until a watch sees the Workspace,
	// and from there until it sees the Pod.
	UntilWorkspace, UntilPod stats
}

// podTimes watches the Workspace Pods of ns and records, by Workspace,
// when each was first seen and first seen Ready.
type podTimes struct {
	mu                        sync.Mutex
	workspace, created, ready map[string]time.Time
}

func watchPods(t *testing.T, kubeconfig, ns string) (*podTimes, func()) {
	cfg := restConfig(t, kubeconfig)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w, err := cs.CoreV1().Pods(ns).Watch(context.Background(), metav1.ListOptions{LabelSelector: idev1alpha1.WorkspaceLabel})
	if err != nil {
		t.Fatal(err)
	}
	pt := &podTimes{workspace: map[string]time.Time{}, created: map[string]time.Time{}, ready: map[string]time.Time{}}
	wc, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	ww, err := wc.Watch(context.Background(), &idev1alpha1.WorkspaceList{}, client.InNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for ev := range ww.ResultChan() {
			now := time.Now()
			if ws, ok := ev.Object.(*idev1alpha1.Workspace); ok {
				pt.mu.Lock()
				if _, seen := pt.workspace[ws.Name]; !seen {
					pt.workspace[ws.Name] = now
				}
				pt.mu.Unlock()
			}
		}
	}()
	go func() {
		for ev := range w.ResultChan() {
			now := time.Now()
			pod, ok := ev.Object.(*corev1.Pod)
			if !ok || ev.Type == watch.Deleted {
				continue
			}
			ws := pod.Labels[idev1alpha1.WorkspaceLabel]
			pt.mu.Lock()
			if _, seen := pt.created[ws]; !seen {
				pt.created[ws] = now
			}
			for _, c := range pod.Status.Conditions {
				if _, seen := pt.ready[ws]; !seen && c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
					pt.ready[ws] = now
				}
			}
			pt.mu.Unlock()
		}
	}()
	return pt, func() { w.Stop(); ww.Stop() }
}

// measureWorkspaces creates n Workspaces through the API's gRPC
// create-and-wait, parallel at a time, and compares each call with its
// Pod's start.
func measureWorkspaces(t *testing.T, e *env, apiPort, n, parallel int) WorkspaceFigures {
	const ns = "ws"
	namespace(t, e.c, ns)
	kube := []string{"KUBECONFIG=" + e.kubeconfig}
	run(t, kube, "kubectl", "create", "serviceaccount", "portal", "-n", ns)
	run(t, kube, "kubectl", "create", "role", "portal", "-n", ns, "--verb=create,get,list", "--resource=workspaces.ide.kubeforge.io")
	run(t, kube, "kubectl", "create", "rolebinding", "portal", "-n", ns, "--role=portal", "--serviceaccount="+ns+":portal")
	token := strings.TrimSpace(run(t, kube, "kubectl", "create", "token", "portal", "-n", ns, "--audience", "kubeforge"))
	pods, stop := watchPods(t, e.kubeconfig, ns)
	defer stop()
	// The manager was just restarted with its webhooks and API: its first
	// pass over what the cluster holds (at N = 300, hundreds of owners)
	// would otherwise share the cores with the first Workspaces.
	e.settle(t)

	insecure := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the manager's API certificate is self-signed here
	conn, err := grpc.NewClient(fmt.Sprintf("127.0.0.1:%d", apiPort), grpc.WithTransportCredentials(credentials.NewTLS(insecure)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ide := idev1.NewCloudIdeServiceClient(conn)
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+token)
	// One call first, so that the connection, the token's review and the
	// first SubjectAccessReviews are not in the figures.
	warm, cancel := context.WithTimeout(ctx, 2*time.Minute)
	if _, err := ide.CreateSpaceAndWaitForRunning(warm, &idev1.PodInfo{Namespace: ns, Name: "warm", User: "warm", Storage: "1Gi"}); err != nil {
		t.Fatalf("create-and-wait: %v", err)
	}
	cancel()

	started, returned := make([]time.Time, n), make([]time.Time, n)
	inParallel(t, n, parallel, func(i int) error {
		c, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		started[i] = time.Now()
		info, err := ide.CreateSpaceAndWaitForRunning(c, &idev1.PodInfo{Namespace: ns, Name: fmt.Sprintf("w-%d", i), User: fmt.Sprintf("u%d", i), Storage: "1Gi"})
		returned[i] = time.Now()
		if err != nil {
			return fmt.Errorf("create-and-wait: %w", err)
		}
		if info.GetPhase() != string(idev1alpha1.PhaseRunning) {
			return fmt.Errorf("w-%d returned in phase %s", i, info.GetPhase())
		}
		return nil
	})
	// The watch may see the last Ready a moment after the call returned.
	time.Sleep(time.Second)
	pods.mu.Lock()
	defer pods.mu.Unlock()
	var call, pod, overhead, before, after, untilWS, untilPod []float64
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	for i := range n {
		name := fmt.Sprintf("w-%d", i)
		created, ok1 := pods.created[name]
		ready, ok2 := pods.ready[name]
		seen, ok3 := pods.workspace[name]
		if !ok1 || !ok2 || !ok3 {
			t.Fatalf("the watch never saw %s's Pod Ready", name)
		}
		call = append(call, ms(returned[i].Sub(started[i])))
		pod = append(pod, ms(ready.Sub(created)))
		overhead = append(overhead, call[i]-pod[i])
		before = append(before, ms(created.Sub(started[i])))
		after = append(after, ms(returned[i].Sub(ready)))
		untilWS = append(untilWS, ms(seen.Sub(started[i])))
		untilPod = append(untilPod, ms(created.Sub(seen)))
	}
	return WorkspaceFigures{Workspaces: n, Parallel: parallel, Call: summarize(call), Pod: summarize(pod),
		Overhead: summarize(overhead), BeforePod: summarize(before), AfterReady: summarize(after),
		UntilWorkspace: summarize(untilWS), UntilPod: summarize(untilPod)}
}
