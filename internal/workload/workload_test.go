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

package workload

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubeforge/kubeforge/internal/conditions"
)

func deployment(gen, seen int64, replicas, updated, available int32, conds ...appsv1.DeploymentCondition) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Generation: gen},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](3)},
		Status: appsv1.DeploymentStatus{ObservedGeneration: seen, Replicas: replicas, UpdatedReplicas: updated,
			ReadyReplicas: available, AvailableReplicas: available, Conditions: conds},
	}
}

func TestDeployment(t *testing.T) {
	deadline := appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: ReasonProgressDeadline, Message: "too slow"}
	quota := appsv1.DeploymentCondition{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Message: "exceeded quota"}
	cases := map[string]struct {
		d                         *appsv1.Deployment
		upToDate, settled, failed bool
		reason, progress, progMsg string
		progressing               bool
	}{
		"settled when the current template runs on every wanted pod, all available": {
			d: deployment(2, 2, 3, 3, 3), upToDate: true, settled: true,
			progMsg: "3 of 3 pods updated and available",
		},
		"not up to date while the controller has not seen the spec": {
			d: deployment(3, 2, 3, 3, 3), progress: "3 of 3 pods updated and available",
			progressing: true, reason: ReasonRollingOut, progMsg: "3 of 3 pods updated",
		},
		"up to date but scaling while a pod is missing": {
			d: deployment(2, 2, 2, 3, 2), upToDate: true, progress: "2 of 3 pods updated and available",
			progressing: true, reason: "Scaling", progMsg: "2 pods, 2 available, 3 desired",
		},
		"failed when the rollout passed its deadline": {
			d: deployment(2, 2, 3, 1, 1, deadline), failed: true, progress: "1 of 3 pods updated and available",
			progressing: true, reason: ReasonRollingOut, progMsg: "1 of 3 pods updated",
		},
		"failed when a replica cannot be created": {
			d: deployment(2, 2, 2, 3, 2, quota), upToDate: true, failed: true, progress: "2 of 3 pods updated and available",
			progressing: true, reason: "Scaling", progMsg: "2 pods, 2 available, 3 desired",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := Deployment(tc.d, 3)
			if r.UpToDate != tc.upToDate || r.Settled != tc.settled || r.Failed != tc.failed || r.Progress != tc.progress {
				t.Fatalf("got upToDate %v settled %v failed %v progress %q", r.UpToDate, r.Settled, r.Failed, r.Progress)
			}
			p, reason, msg := r.Progressing("pods", "Scaling")
			wantReason := tc.reason
			if tc.settled {
				wantReason = conditions.ReasonRolloutDone
			}
			if p != tc.progressing || reason != wantReason || msg != tc.progMsg {
				t.Fatalf("Progressing = %v %s %q", p, reason, msg)
			}
		})
	}
	if r := Deployment(deployment(1, 1, 3, 3, 3, quota), 3); r.Reason != ReasonReplicaFailure || r.Message != "exceeded quota" {
		t.Errorf("reason %s message %q", r.Reason, r.Message)
	}
}

func TestStatefulSetAndDaemonSet(t *testing.T) {
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Generation: 1}, Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](2)},
		Status: appsv1.StatefulSetStatus{ObservedGeneration: 1, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2, CurrentRevision: "a", UpdateRevision: "b"}}
	if r, _ := Of(sts); r.Settled || r.Progress != "2 of 2 pods updated and ready" {
		t.Errorf("a StatefulSet whose pods run the old revision is not settled: %+v", r)
	}
	sts.Status.CurrentRevision = "b"
	if r, _ := Of(sts); !r.Settled || r.Desired != 2 || r.Ready != 2 {
		t.Errorf("on the update revision, ready and available, it is settled: %+v", r)
	}
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Generation: 1},
		Status: appsv1.DaemonSetStatus{ObservedGeneration: 1, DesiredNumberScheduled: 3, UpdatedNumberScheduled: 3, NumberAvailable: 2, NumberReady: 2}}
	if r, _ := Of(ds); r.Settled || r.Desired != 3 || r.Ready != 2 {
		t.Errorf("a DaemonSet with a node not available is not settled: %+v", r)
	}
	ds.Status.NumberAvailable = 3
	if r, _ := Of(ds); !r.Settled || r.Progress != "" {
		t.Errorf("settled: %+v", r)
	}
	if _, ok := Of(&corev1.Pod{}); ok {
		t.Error("a Pod is not a workload")
	}
}

func TestDeploymentPodsAreThoseOfItsOwnReplicaSetsByUID(t *testing.T) {
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", UID: "dep-uid"}}
	controlled := func(name string, uid, owner types.UID, kind string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, UID: uid, Labels: map[string]string{"app": "web"},
			OwnerReferences: []metav1.OwnerReference{{Kind: kind, Name: "x", UID: owner, Controller: ptr.To(true)}}}
	}
	sets := []metav1.PartialObjectMetadata{
		{ObjectMeta: controlled("web-1", "rs-1", "dep-uid", "Deployment")},
		{ObjectMeta: controlled("web-2", "rs-2", "dep-uid", "Deployment")},
		// Planted beside them with the same labels: it names another
		// Deployment, or none, or names the Deployment and is held in
		// deletion (its controller no longer scales it).
		{ObjectMeta: controlled("web-3", "rs-3", "other-uid", "Deployment")},
		{ObjectMeta: metav1.ObjectMeta{Name: "web-4", UID: "rs-4", Labels: map[string]string{"app": "web"}}},
		{ObjectMeta: controlled("web-5", "rs-5", "dep-uid", "Deployment")},
	}
	sets[4].DeletionTimestamp, sets[4].Finalizers = &metav1.Time{}, []string{"example.com/hold"}
	pods := []corev1.Pod{
		{ObjectMeta: controlled("a", "p-a", "rs-1", "ReplicaSet")},
		{ObjectMeta: controlled("b", "p-b", "rs-2", "ReplicaSet")},
		{ObjectMeta: controlled("planted-labels-only", "p-c", "", "")},
		{ObjectMeta: controlled("planted-other-set", "p-d", "rs-3", "ReplicaSet")},
		{ObjectMeta: controlled("planted-unowned-set", "p-e", "rs-4", "ReplicaSet")},
		{ObjectMeta: controlled("planted-names-the-deployment", "p-f", "dep-uid", "Deployment")},
		{ObjectMeta: metav1.ObjectMeta{Name: "planted-no-owner", UID: "p-g", Labels: map[string]string{"app": "web"}}},
		{ObjectMeta: controlled("planted-held-set", "p-h", "rs-5", "ReplicaSet")},
		// Claims a real ReplicaSet, finished: the ReplicaSet does not count it.
		{ObjectMeta: controlled("planted-finished", "p-i", "rs-1", "ReplicaSet"), Status: corev1.PodStatus{Phase: corev1.PodSucceeded}},
		{ObjectMeta: controlled("evicted", "p-j", "rs-2", "ReplicaSet"), Status: corev1.PodStatus{Phase: corev1.PodFailed}},
	}
	pods[2].OwnerReferences = nil
	var names []string
	for _, p := range DeploymentPods(pods, sets, dep) {
		names = append(names, p.Name)
	}
	if len(names) != 2 || names[0] != "a" || names[1] != "b" {
		t.Fatalf("got %v, want the pods of web's own ReplicaSets only: [a b]", names)
	}
	if got := DeploymentPods(pods, sets, nil); got != nil {
		t.Fatalf("without a Deployment: got %d pods, want none", len(got))
	}
}

func TestServiceSlicesAreThoseItsEndpointSliceControllerKeeps(t *testing.T) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web-v1", UID: "svc-uid"}}
	slice := func(name string, owner types.UID, managedBy string) discoveryv1.EndpointSlice {
		s := discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: name,
			Labels: map[string]string{discoveryv1.LabelServiceName: "web-v1"}}}
		if owner != "" {
			s.OwnerReferences = []metav1.OwnerReference{{Kind: "Service", Name: "web-v1", UID: owner, Controller: ptr.To(true)}}
		}
		if managedBy != "" {
			s.Labels[discoveryv1.LabelManagedBy] = managedBy
		}
		return s
	}
	got := ServiceSlices([]discoveryv1.EndpointSlice{
		slice("own", "svc-uid", EndpointSliceControllerName),
		slice("labels-only", "", EndpointSliceControllerName),
		// Claims the Service but not the controller's label: the
		// controller never lists it, so never corrects or removes it.
		slice("claims-unmanaged", "svc-uid", ""),
		slice("claims-other-manager", "svc-uid", "someone-else"),
		slice("other-service", "other-uid", EndpointSliceControllerName),
	}, svc)
	if len(got) != 1 || got[0].Name != "own" {
		t.Fatalf("got %d slices (%v), want the Service's own only", len(got), got)
	}
}
