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
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
)

// realTemplate is the pods of the PodSet and the Deployment: the
// echoserver (its image on the node since the traffic ran), pinned to the
// real node, no probe (Ready once started).
func realTemplate(kind string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"perf-pods": kind}},
		Spec:       onRealNode(corev1.PodSpec{Containers: []corev1.Container{{Name: "echo", Image: echoImage}}}),
	}
}

// measurePods times one PodSet of n replicas until Ready against one
// Deployment of n until all are available, on the real node, which goes
// first alternating between runs; each is deleted, its Pods gone, before
// the next starts. Around each start it reads the CPU time the manager
// and the API server used, and the manager's reconciles and writes: what
// the PodSet costs the machine beside the pods' own start.
func (r *realEnv) measurePods(n, reps int) PodFigures {
	var psSecs, depSecs, ratios, befores, afters []float64
	var psMgr, depMgr, psAPI, depAPI, psRec, psWrites []float64
	apiServer := apiServerPID(r.t, realClusterName)
	for rep := range reps {
		var p podSetTimes
		var d time.Duration
		var pu, du cpuUse
		var pw, pr float64
		// Read when the start is over, before the deletion.
		podSet := func() {
			u0 := r.cpuUse(apiServer)
			w0, r0 := r.scrape()
			p = r.podSetPods(n, func() {
				w1, r1 := r.scrape()
				pu, pw, pr = r.cpuUse(apiServer).since(u0), w1-w0, r1-r0
			})
		}
		deployment := func() {
			u0 := r.cpuUse(apiServer)
			d = r.deploymentPods(n, func() { du = r.cpuUse(apiServer).since(u0) })
		}
		if rep%2 == 0 {
			podSet()
			deployment()
		} else {
			deployment()
			podSet()
		}
		psSecs, depSecs, ratios = append(psSecs, p.ready.Seconds()), append(depSecs, d.Seconds()), append(ratios, p.ready.Seconds()/d.Seconds())
		befores, afters = append(befores, p.deployment.Seconds()), append(afters, (p.ready-p.available).Seconds())
		psMgr, depMgr = append(psMgr, pu.manager), append(depMgr, du.manager)
		psAPI, depAPI = append(psAPI, pu.apiServer), append(depAPI, du.apiServer)
		psRec, psWrites = append(psRec, pr), append(psWrites, pw)
		r.t.Logf("run %d: a PodSet of %d real pods Ready in %s (its Deployment seen after %s, available at %s), a Deployment of %d in %s (ratio %.2f); "+
			"CPU of the manager %.2f s against %.2f s, of the API server %.2f s against %.2f s; the manager's reconciles %.0f, writes %.0f",
			rep+1, n, p.ready.Round(time.Millisecond), p.deployment.Round(time.Millisecond), p.available.Round(time.Millisecond),
			n, d.Round(time.Millisecond), p.ready.Seconds()/d.Seconds(), pu.manager, du.manager, pu.apiServer, du.apiServer, pr, pw)
	}
	return PodFigures{PodSetSeconds: summarize(psSecs), DeploymentSeconds: summarize(depSecs), PodSetRatio: summarize(ratios),
		PodSetBefore: summarize(befores), PodSetAfter: summarize(afters),
		PodSetManagerCPU: summarize(psMgr), DeploymentManagerCPU: summarize(depMgr),
		PodSetAPIServerCPU: summarize(psAPI), DeploymentAPIServerCPU: summarize(depAPI),
		PodSetReconciles: summarize(psRec), PodSetWrites: summarize(psWrites)}
}

type podSetTimes struct{ deployment, available, ready time.Duration }

// podSetPods creates a PodSet of n pods, waits until it is Ready, calls
// ready, deletes it and waits until its pods are gone.
func (r *realEnv) podSetPods(n int, ready func()) podSetTimes {
	ctx := context.Background()
	ps := &appsv1alpha1.PodSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: realNS, Name: "ps"},
		Spec:       appsv1alpha1.PodSetSpec{Replicas: new(int32(n)), Template: realTemplate("podset")},
	}
	start := time.Now()
	if err := r.c.Create(ctx, ps); err != nil {
		r.t.Fatal(err)
	}
	var pt podSetTimes
	waitFor(r.t, 10*time.Minute, fmt.Sprintf("a PodSet of %d real pods to be Ready", n), func() bool {
		d := &appsv1.Deployment{}
		if err := r.raw.Get(ctx, client.ObjectKeyFromObject(ps), d); err == nil {
			if pt.deployment == 0 {
				pt.deployment = time.Since(start)
			}
			if pt.available == 0 && d.Status.AvailableReplicas == int32(n) && d.Status.ObservedGeneration == d.Generation {
				pt.available = time.Since(start)
			}
		}
		got := &appsv1alpha1.PodSet{}
		if err := r.raw.Get(ctx, client.ObjectKeyFromObject(ps), got); err != nil {
			return false
		}
		return meta.IsStatusConditionTrue(got.Status.Conditions, "Ready") && got.Status.ObservedGeneration == got.Generation &&
			got.Status.ReadyReplicas == int32(n)
	})
	pt.ready = time.Since(start)
	ready()
	if pt.available == 0 {
		pt.available = pt.ready // available between the two reads
	}
	if err := r.raw.Delete(ctx, ps); err != nil {
		r.t.Fatal(err)
	}
	r.waitNoPods("the PodSet's pods to go", map[string]string{"perf-pods": "podset"})
	// Its name, and its Deployment's, are free again for the next run.
	r.waitGone("the PodSet and its Deployment to go", ps, &appsv1.Deployment{ObjectMeta: ps.ObjectMeta})
	return pt
}

// deploymentPods is podSetPods for a Deployment: until it is available.
func (r *realEnv) deploymentPods(n int, ready func()) time.Duration {
	ctx := context.Background()
	tmpl := realTemplate("deployment")
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: realNS, Name: "dep"},
		Spec:       appsv1.DeploymentSpec{Replicas: new(int32(n)), Selector: &metav1.LabelSelector{MatchLabels: tmpl.Labels}, Template: tmpl},
	}
	start := time.Now()
	if err := r.c.Create(ctx, d); err != nil {
		r.t.Fatal(err)
	}
	waitFor(r.t, 10*time.Minute, fmt.Sprintf("a Deployment of %d real pods to be Available", n), func() bool {
		got := &appsv1.Deployment{}
		if err := r.raw.Get(ctx, client.ObjectKeyFromObject(d), got); err != nil {
			return false
		}
		return got.Status.AvailableReplicas == int32(n) && got.Status.ObservedGeneration == got.Generation
	})
	took := time.Since(start)
	ready()
	if err := r.raw.Delete(ctx, d, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		r.t.Fatal(err)
	}
	r.waitNoPods("the Deployment's pods to go", map[string]string{"perf-pods": "deployment"})
	r.waitGone("the Deployment to go", d)
	return took
}

// waitGone waits until the objects are deleted; each is read into.
func (r *realEnv) waitGone(what string, objs ...client.Object) {
	waitFor(r.t, 2*time.Minute, what, func() bool {
		for _, o := range objs {
			if !apierrors.IsNotFound(r.raw.Get(context.Background(), client.ObjectKeyFromObject(o), o)) {
				return false
			}
		}
		return true
	})
}
