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

package podset

import (
	"errors"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/conditions"
)

func dep(gen, observedGen int64, replicas, updated, ready, available int32, conds ...appsv1.DeploymentCondition) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Generation: gen},
		Status: appsv1.DeploymentStatus{
			ObservedGeneration: observedGen, Replicas: replicas, UpdatedReplicas: updated,
			ReadyReplicas: ready, AvailableReplicas: available, Conditions: conds,
		},
	}
}

func pod(name string, deleting bool) corev1.Pod {
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if deleting {
		p.DeletionTimestamp = &metav1.Time{}
	}
	return p
}

func TestComputeStatus(t *testing.T) {
	type want struct {
		ready, progressing, degraded bool
		readyReason                  string
	}
	cases := map[string]struct {
		replicas int32
		o        observed
		want     want
	}{
		"ready when every pod is updated and available": {
			replicas: 3, o: observed{deployment: dep(1, 1, 3, 3, 3, 3)},
			want: want{ready: true, readyReason: conditions.ReasonAvailable},
		},
		"progressing while the Deployment has not seen the new generation": {
			replicas: 3, o: observed{deployment: dep(2, 1, 3, 3, 3, 3)},
			want: want{progressing: true, readyReason: ReasonWaitingForPods},
		},
		"progressing while scaling up": {
			replicas: 3, o: observed{deployment: dep(1, 1, 1, 3, 1, 1)},
			want: want{progressing: true, readyReason: ReasonWaitingForPods},
		},
		"ready when scaled to zero": {
			replicas: 0, o: observed{deployment: dep(1, 1, 0, 0, 0, 0)},
			want: want{ready: true, readyReason: conditions.ReasonScaledToZero},
		},
		"degraded when the Deployment's rollout passed its deadline": {
			replicas: 3, o: observed{deployment: dep(1, 1, 3, 3, 1, 1, appsv1.DeploymentCondition{
				Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded",
			})},
			want: want{progressing: true, degraded: true, readyReason: ReasonWaitingForPods},
		},
		"degraded when pods cannot be created": {
			replicas: 3, o: observed{deployment: dep(1, 1, 0, 0, 0, 0, appsv1.DeploymentCondition{
				Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Message: "exceeded quota",
			})},
			want: want{progressing: true, degraded: true, readyReason: ReasonWaitingForPods},
		},
		"degraded with the apply error as reason": {
			replicas: 3, o: observed{applyErr: errors.New("boom")},
			want: want{degraded: true, readyReason: conditions.ReasonApplyFailed},
		},
		"degraded with an invalid spec": {
			replicas: 3, o: observed{invalid: errors.New("bad")},
			want: want{degraded: true, readyReason: conditions.ReasonInvalidSpec},
		},
		"progressing before the Deployment exists": {
			replicas: 3, o: observed{},
			want: want{progressing: true, readyReason: ReasonDeploymentAbsent},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ps := newPodSet()
			ps.Spec.Replicas = &tc.replicas
			computeStatus(ps, tc.o)
			c := ps.Status.Conditions
			if got := conditions.IsTrue(c, conditions.Ready); got != tc.want.ready {
				t.Errorf("Ready = %v, want %v", got, tc.want.ready)
			}
			if got := conditions.IsTrue(c, conditions.Progressing); got != tc.want.progressing {
				t.Errorf("Progressing = %v, want %v", got, tc.want.progressing)
			}
			if got := conditions.IsTrue(c, conditions.Degraded); got != tc.want.degraded {
				t.Errorf("Degraded = %v, want %v", got, tc.want.degraded)
			}
			if r := meta.FindStatusCondition(c, conditions.Ready).Reason; r != tc.want.readyReason {
				t.Errorf("Ready reason = %s, want %s", r, tc.want.readyReason)
			}
			for _, cond := range c {
				if cond.ObservedGeneration != ps.Generation {
					t.Errorf("%s observedGeneration = %d, want %d", cond.Type, cond.ObservedGeneration, ps.Generation)
				}
			}
		})
	}
}

func TestComputeStatusPodNamesAndCounts(t *testing.T) {
	ps := newPodSet()
	computeStatus(ps, observed{
		deployment: dep(1, 1, 3, 3, 2, 1),
		pods:       []corev1.Pod{pod("web-c", false), pod("web-a", false), pod("web-old", true), pod("web-b", false)},
	})
	s := ps.Status
	if got := s.PodNames; len(got) != 3 || got[0] != "web-a" || got[1] != "web-b" || got[2] != "web-c" {
		t.Errorf("podNames = %v, want [web-a web-b web-c]", got)
	}
	if s.Replicas != 3 || s.ReadyReplicas != 2 || s.AvailableReplicas != 1 {
		t.Errorf("counts = %d/%d/%d, want 3/2/1", s.Replicas, s.ReadyReplicas, s.AvailableReplicas)
	}
	if s.Selector != "apps.kubeforge.io/podset=web" || s.ObservedGeneration != 2 {
		t.Errorf("selector %q, observedGeneration %d", s.Selector, s.ObservedGeneration)
	}
}

func TestComputeStatusIsStable(t *testing.T) {
	ps := newPodSet()
	o := observed{deployment: dep(1, 1, 3, 3, 3, 3), pods: []corev1.Pod{pod("b", false), pod("a", false)}}
	computeStatus(ps, o)
	first := ps.Status.DeepCopy()
	computeStatus(ps, o)
	for i := range first.Conditions {
		if first.Conditions[i] != ps.Status.Conditions[i] {
			t.Fatalf("a second pass changed %s: %v -> %v", first.Conditions[i].Type, first.Conditions[i], ps.Status.Conditions[i])
		}
	}
}

// The Pods coming one by one are progress (written about once a second);
// the PodSet turning Ready, a new generation or a Deployment going missing
// is not (written at once).
func TestOnlyThePodsProgressIsPaced(t *testing.T) {
	three := []corev1.Pod{pod("a", false), pod("b", false), pod("c", false)}
	starting := newPodSet()
	computeStatus(starting, observed{deployment: dep(1, 1, 3, 3, 1, 1), pods: three[:1]})
	// What the next reconcile computes from the status written before.
	statusFor := func(gen int64, o observed) *appsv1alpha1.PodSet {
		ps := starting.DeepCopy()
		ps.Generation = gen
		computeStatus(ps, o)
		return ps
	}
	cases := []struct {
		name     string
		after    *appsv1alpha1.PodSet
		progress bool
	}{
		{"two more pods, one more ready", statusFor(2, observed{deployment: dep(1, 1, 3, 3, 2, 2), pods: three}), true},
		{"a pod going", statusFor(2, observed{deployment: dep(1, 1, 3, 3, 1, 1), pods: []corev1.Pod{pod("a", true)}}), true},
		{"every pod available: Ready", statusFor(2, observed{deployment: dep(1, 1, 3, 3, 3, 3), pods: three}), false},
		{"a new generation", statusFor(3, observed{deployment: dep(1, 1, 3, 3, 1, 1), pods: three[:1]}), false},
		{"the Deployment gone", statusFor(2, observed{pods: three[:1]}), false},
	}
	for _, c := range cases {
		if got := progressOnly(starting, c.after); got != c.progress {
			t.Errorf("%s: progress only = %v, want %v", c.name, got, c.progress)
		}
	}
}

func TestPodNamesStayWhenThePodsCouldNotBeListed(t *testing.T) {
	ps := newPodSet()
	computeStatus(ps, observed{deployment: dep(1, 1, 2, 2, 2, 2), pods: []corev1.Pod{pod("web-a", false), pod("web-b", false)}})
	computeStatus(ps, observed{deployment: dep(1, 1, 2, 2, 2, 2), podsUnknown: true})
	if got := ps.Status.PodNames; len(got) != 2 || got[0] != "web-a" || got[1] != "web-b" {
		t.Errorf("podNames after a failed list = %v, want the names reported before", got)
	}
}
