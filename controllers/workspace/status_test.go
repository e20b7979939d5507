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

package workspace

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
)

func podWith(mutate func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "ws"}}
	p.Status.Phase = corev1.PodPending
	mutate(p)
	return p
}

func scheduled(p *corev1.Pod) { p.Spec.NodeName = "node-1" }

func waiting(reason string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		scheduled(p)
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "ide", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}}}
	}
}

func TestPhase(t *testing.T) {
	now := metav1.Now()
	cases := []struct {
		name    string
		started bool
		pod     *corev1.Pod
		phase   idev1alpha1.WorkspacePhase
		reason  string
	}{
		{"started without a Pod yet is Pending", true, nil, idev1alpha1.PhasePending, ReasonCreatingPod},
		{"an unscheduled Pod is Pending", true, podWith(func(*corev1.Pod) {}), idev1alpha1.PhasePending, ReasonUnscheduled},
		{"a Pod the scheduler cannot place yet is Pending/Unschedulable (a volume binding or a node coming resolves it)", true, podWith(func(p *corev1.Pod) {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: "0/3 nodes are available"}}
		}), idev1alpha1.PhasePending, ReasonUnschedulable},
		{"a scheduled Pod pulling its image is Starting", true, podWith(waiting("ContainerCreating")), idev1alpha1.PhaseStarting, ReasonContainerCreating},
		{"a container whose Secret the kubelet cannot read yet is Starting/CreateContainerConfigError (the kubelet retries)", true,
			podWith(waiting("CreateContainerConfigError")), idev1alpha1.PhaseStarting, ReasonCreateContainerConfigError},
		{"an image that cannot be pulled is Failed/ImagePullBackOff", true, podWith(waiting("ImagePullBackOff")), idev1alpha1.PhaseFailed, "ImagePullBackOff"},
		{"a bad image name is Failed/InvalidImageName", true, podWith(waiting("InvalidImageName")), idev1alpha1.PhaseFailed, "InvalidImageName"},
		{"a crashing IDE is Failed/CrashLoopBackOff", true, podWith(func(p *corev1.Pod) {
			waiting("CrashLoopBackOff")(p)
			p.Status.Phase = corev1.PodRunning
		}), idev1alpha1.PhaseFailed, "CrashLoopBackOff"},
		{"a running Pod that does not answer yet is Starting, not Running", true, podWith(func(p *corev1.Pod) {
			scheduled(p)
			p.Status.Phase = corev1.PodRunning
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
		}), idev1alpha1.PhaseStarting, ReasonNotAnswering},
		{"a Ready Pod is Running", true, podWith(func(p *corev1.Pod) {
			scheduled(p)
			p.Status.Phase = corev1.PodRunning
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		}), idev1alpha1.PhaseRunning, ReasonIDEAnswering},
		{"an evicted Pod is Failed/Evicted", true, podWith(func(p *corev1.Pod) {
			scheduled(p)
			p.Status.Phase, p.Status.Reason = corev1.PodFailed, "Evicted"
		}), idev1alpha1.PhaseFailed, "Evicted"},
		{"a Pod being replaced is Pending", true, podWith(func(p *corev1.Pod) { p.DeletionTimestamp = &now }), idev1alpha1.PhasePending, ReasonPodDeleting},
		{"stopped with the Pod still there is Stopping", false, podWith(scheduled), idev1alpha1.PhaseStopping, ReasonStopping},
		{"stopped without a Pod is Stopped", false, nil, idev1alpha1.PhaseStopped, ReasonStopped},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			phase, reason, msg := Phase(tc.started, tc.pod)
			if phase != tc.phase || reason != tc.reason {
				t.Fatalf("Phase = %s/%s, want %s/%s", phase, reason, tc.phase, tc.reason)
			}
			if msg == "" {
				t.Fatal("every phase comes with a message")
			}
		})
	}
}

func TestStartupSecondsRunsFromCreationToReady(t *testing.T) {
	created := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	p := podWith(func(p *corev1.Pod) {
		p.CreationTimestamp = metav1.NewTime(created)
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(created.Add(7 * time.Second))}}
	})
	if s := startupSeconds(p); s == nil || *s != 7 {
		t.Fatalf("startupSeconds = %v, want 7", s)
	}
	p.Status.Conditions[0].Status = corev1.ConditionFalse
	if s := startupSeconds(p); s != nil {
		t.Fatalf("a Pod that is not Ready has no startup time, got %d", *s)
	}
}
