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
	"fmt"
	"net"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
)

// The Workspaces: code-server (hack/images.sh code-server) as the sample
// runs it but for its size, against a plain Pod with the Workspace Pod's
// own spec (image, env, probe, security) and a claim of its own like the
// Workspace's home. A warm-up Workspace pulls the image and starts
// code-server once before anything is measured; its Pod is the plain
// Pods' model, and it is the one stopped and started again.

const warmWorkspace = "warm"

// warmUp is what the warm-up Workspace left: its Pod and home claim.
type warmUp struct {
	pod *corev1.Pod
	pvc *corev1.PersistentVolumeClaim
}

func workspace(name string) *idev1alpha1.Workspace {
	return &idev1alpha1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Namespace: realNS, Name: name},
		Spec: idev1alpha1.WorkspaceSpec{User: name,
			Storage: idev1alpha1.WorkspaceStorage{Size: new(resource.MustParse("1Gi"))}},
	}
}

// startWarmWorkspace creates the warm-up Workspace; warmedUp waits until
// it runs and stops it again.
func (r *realEnv) startWarmWorkspace() *idev1alpha1.Workspace {
	ws := workspace(warmWorkspace)
	if err := r.c.Create(context.Background(), ws); err != nil {
		r.t.Fatal(err)
	}
	return ws
}

func (r *realEnv) warmedUp(ws *idev1alpha1.Workspace) warmUp {
	ctx := context.Background()
	r.waitRunning(ws.Name, 5*time.Minute)
	w := warmUp{pod: &corev1.Pod{}, pvc: &corev1.PersistentVolumeClaim{}}
	if err := r.raw.Get(ctx, client.ObjectKey{Namespace: realNS, Name: ws.Name}, w.pod); err != nil {
		r.t.Fatal(err)
	}
	for _, v := range w.pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			if err := r.raw.Get(ctx, client.ObjectKey{Namespace: realNS, Name: v.PersistentVolumeClaim.ClaimName}, w.pvc); err != nil {
				r.t.Fatal(err)
			}
		}
	}
	if w.pvc.Name == "" {
		r.t.Fatalf("the Workspace's Pod mounts no claim: %+v", w.pod.Spec.Volumes)
	}
	r.stopWorkspace(ws.Name)
	return w
}

// waitRunning waits until the Workspace is Running, and says where it
// stood if it does not get there.
func (r *realEnv) waitRunning(name string, timeout time.Duration) {
	ws := &idev1alpha1.Workspace{}
	deadline := time.Now().Add(timeout)
	for {
		err := r.raw.Get(context.Background(), client.ObjectKey{Namespace: realNS, Name: name}, ws)
		if err == nil && ws.Status.Phase == idev1alpha1.PhaseRunning && ws.Status.ObservedGeneration == ws.Generation {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("timed out after %s waiting for Workspace %s to be Running: %s %s: %s (%v)", timeout, name,
				ws.Status.Phase, ws.Status.Reason, ws.Status.Message, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// setStarted sets spec.started, signed as the webhook would.
func (r *realEnv) setStarted(name string, started bool) {
	waitFor(r.t, time.Minute, fmt.Sprintf("Workspace %s's started to be set to %v", name, started), func() bool {
		ws := &idev1alpha1.Workspace{}
		if err := r.raw.Get(context.Background(), client.ObjectKey{Namespace: realNS, Name: name}, ws); err != nil {
			return false
		}
		ws.Spec.Started = new(started)
		return r.c.Update(context.Background(), ws) == nil
	})
}

// stopWorkspace stops the Workspace and waits until it is Stopped and its
// Pod gone.
func (r *realEnv) stopWorkspace(name string) {
	r.setStarted(name, false)
	waitFor(r.t, 2*time.Minute, fmt.Sprintf("Workspace %s to be Stopped", name), func() bool {
		ws := &idev1alpha1.Workspace{}
		if err := r.raw.Get(context.Background(), client.ObjectKey{Namespace: realNS, Name: name}, ws); err != nil {
			return false
		}
		return ws.Status.Phase == idev1alpha1.PhaseStopped && ws.Status.ObservedGeneration == ws.Generation &&
			apierrors.IsNotFound(r.raw.Get(context.Background(), client.ObjectKey{Namespace: realNS, Name: name}, &corev1.Pod{}))
	})
}

// startTimes are what a poll every 50 ms saw of one start, from the
// create (or started: true): the Pod first seen, the IDE first answering
// GET /healthz at the Pod's address (asked by the harness, so without the
// probe's period), the Pod Ready (the kubelet's probe answered), and for
// a Workspace Running.
type startTimes struct{ seen, answered, ready, running time.Duration }

// ideClient asks an IDE's /healthz from this machine, which reaches the
// real node's Pod addresses.
var ideClient = &http.Client{Timeout: 200 * time.Millisecond, Transport: &http.Transport{DisableKeepAlives: true}}

// pollStart polls the Pod name (and the Workspace of that name, when
// workspace) until the IDE answered and the Pod is Ready (the Workspace
// Running), and returns when each happened after start.
func (r *realEnv) pollStart(name string, workspace bool, start time.Time, probe *corev1.HTTPGetAction) startTimes {
	ctx := context.Background()
	key := client.ObjectKey{Namespace: realNS, Name: name}
	var seen, answered, ready, running time.Time
	for deadline := start.Add(3 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		pod := &corev1.Pod{}
		if err := r.raw.Get(ctx, key, pod); err == nil && pod.DeletionTimestamp == nil {
			now := time.Now()
			if seen.IsZero() {
				seen = now
			}
			if answered.IsZero() && pod.Status.PodIP != "" {
				u := fmt.Sprintf("http://%s%s", net.JoinHostPort(pod.Status.PodIP, probe.Port.String()), probe.Path)
				if resp, err := ideClient.Get(u); err == nil {
					resp.Body.Close()
					if resp.StatusCode < 400 {
						answered = time.Now()
					}
				}
			}
			if ready.IsZero() && podReady(pod) {
				ready = now
			}
		}
		ws := &idev1alpha1.Workspace{}
		if workspace && running.IsZero() {
			if err := r.raw.Get(ctx, key, ws); err == nil && ws.Status.Phase == idev1alpha1.PhaseRunning && ws.Status.ObservedGeneration == ws.Generation {
				running = time.Now()
				if ready.IsZero() {
					ready = running // Ready between the two reads
				}
			}
		}
		if !answered.IsZero() && !ready.IsZero() && (!workspace || !running.IsZero()) {
			st := startTimes{seen: seen.Sub(start), answered: answered.Sub(start), ready: ready.Sub(start)}
			if workspace {
				st.running = running.Sub(start)
			}
			return st
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("timed out waiting for %s to start: Pod seen %v, answered %v, Ready %v; Workspace %s %s: %s", name,
				!seen.IsZero(), !answered.IsZero(), !ready.IsZero(), ws.Status.Phase, ws.Status.Reason, ws.Status.Message)
		}
	}
}

// timeWorkspace creates a Workspace and times its start, then deletes it
// and waits until its Pod is gone.
func (r *realEnv) timeWorkspace(name string, w warmUp) startTimes {
	ctx := context.Background()
	ws := workspace(name)
	start := time.Now()
	if err := r.c.Create(ctx, ws); err != nil {
		r.t.Fatal(err)
	}
	st := r.pollStart(name, true, start, w.probe())
	if err := r.raw.Delete(ctx, ws); err != nil {
		r.t.Fatal(err)
	}
	r.waitGone(fmt.Sprintf("Workspace %s and its Pod to go", name), ws, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: realNS, Name: name}})
	return st
}

// probe is the IDE's readiness probe, which the harness asks too.
func (w warmUp) probe() *corev1.HTTPGetAction {
	return w.pod.Spec.Containers[0].ReadinessProbe.HTTPGet
}

// timePlainPod creates a claim like the Workspace's home and a Pod with
// the warm-up Workspace's Pod's spec on it, and times the Pod's start;
// then deletes both and waits until the Pod is gone.
func (r *realEnv) timePlainPod(name string, w warmUp) startTimes {
	ctx := context.Background()
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: realNS, Name: name + "-home"}, Spec: *w.pvc.Spec.DeepCopy()}
	pvc.Spec.VolumeName = ""
	spec := w.pod.Spec.DeepCopy()
	spec.NodeName, spec.Priority = "", nil
	if spec.Hostname != "" {
		spec.Hostname = name
	}
	for i := range spec.Volumes {
		if spec.Volumes[i].PersistentVolumeClaim != nil {
			spec.Volumes[i].PersistentVolumeClaim.ClaimName = pvc.Name
		}
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: realNS, Name: name, Labels: map[string]string{"perf-plain": name}}, Spec: *spec}
	start := time.Now()
	if err := r.raw.Create(ctx, pvc); err != nil {
		r.t.Fatal(err)
	}
	if err := r.raw.Create(ctx, pod); err != nil {
		r.t.Fatal(err)
	}
	st := r.pollStart(name, false, start, w.probe())
	if err := r.raw.Delete(ctx, pod); err != nil {
		r.t.Fatal(err)
	}
	if err := r.raw.Delete(ctx, pvc); err != nil {
		r.t.Fatal(err)
	}
	r.waitGone(fmt.Sprintf("Pod %s to go", name), pod)
	return st
}

// measureWorkspaces times reps Workspaces against as many plain Pods
// (which goes first alternating), then the warm-up Workspace from
// started: true until Running, reps times, stopping it in between.
func (r *realEnv) measureWorkspaces(w warmUp, reps int) RealWorkspaceFigures {
	var fig struct{ ws, pod, added, wsAnswers, podAnswers, addedAnswers, before, own, after, restart, restartAnswers []float64 }
	for rep := range reps {
		var ws, p startTimes
		wsName, podName := fmt.Sprintf("ws-%d", rep), fmt.Sprintf("pod-%d", rep)
		if rep%2 == 0 {
			ws, p = r.timeWorkspace(wsName, w), r.timePlainPod(podName, w)
		} else {
			p, ws = r.timePlainPod(podName, w), r.timeWorkspace(wsName, w)
		}
		fig.ws, fig.pod, fig.added = append(fig.ws, ws.running.Seconds()), append(fig.pod, p.ready.Seconds()), append(fig.added, (ws.running-p.ready).Seconds())
		fig.wsAnswers, fig.podAnswers = append(fig.wsAnswers, ws.answered.Seconds()), append(fig.podAnswers, p.answered.Seconds())
		fig.addedAnswers = append(fig.addedAnswers, (ws.answered - p.answered).Seconds())
		fig.before, fig.own, fig.after = append(fig.before, ws.seen.Seconds()), append(fig.own, (ws.ready-ws.seen).Seconds()), append(fig.after, (ws.running-ws.ready).Seconds())
		r.t.Logf("run %d: a Workspace's IDE answered %.2f s after create (its Pod seen after %.2f s, Ready at %.2f s, the Workspace Running at %.2f s), "+
			"a plain Pod's %.2f s (Ready at %.2f s): %+.2f s to answer, %+.2f s to Running against Ready", rep+1, ws.answered.Seconds(), ws.seen.Seconds(),
			ws.ready.Seconds(), ws.running.Seconds(), p.answered.Seconds(), p.ready.Seconds(), (ws.answered - p.answered).Seconds(), (ws.running - p.ready).Seconds())
	}
	for rep := range reps {
		start := time.Now()
		r.setStarted(warmWorkspace, true)
		st := r.pollStart(warmWorkspace, true, start, w.probe())
		fig.restart, fig.restartAnswers = append(fig.restart, st.running.Seconds()), append(fig.restartAnswers, st.answered.Seconds())
		r.t.Logf("run %d: the stopped Workspace's IDE answered again %.2f s after started: true, Running at %.2f s", rep+1, st.answered.Seconds(), st.running.Seconds())
		if rep < reps-1 { // the last one goes with the cluster
			r.stopWorkspace(warmWorkspace)
		}
	}
	return RealWorkspaceFigures{Workspace: summarize(fig.ws), Pod: summarize(fig.pod), Added: summarize(fig.added),
		WorkspaceAnswers: summarize(fig.wsAnswers), PodAnswers: summarize(fig.podAnswers), AddedAnswers: summarize(fig.addedAnswers),
		BeforePod: summarize(fig.before), WorkspacePod: summarize(fig.own), AfterReady: summarize(fig.after),
		Restart: summarize(fig.restart), RestartAnswers: summarize(fig.restartAnswers)}
}
