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

package engine

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/kubeforge/kubeforge/internal/proof"
	"github.com/kubeforge/kubeforge/internal/scheme"
)

func TestControllersLeaveOutOnlyTheEngineOwnSealOfAnObjectItJustMade(t *testing.T) {
	keys, err := proof.NewKeyring(time.Now(), []byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	gk := schema.GroupKind{Kind: "Service"}
	owner := proof.Owner("owner-uid")
	created := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "svc-uid", ResourceVersion: "1",
		Labels: map[string]string{"a": "b"}}}
	created.Annotations = map[string]string{proof.Annotation: keys.PendingMark(sealed(gk, created), owner)}
	seal := func(o *corev1.Service, b proof.Binding) *corev1.Service {
		c := o.DeepCopy()
		c.ResourceVersion = "2"
		c.Annotations = map[string]string{proof.Annotation: keys.Seal(sealed(gk, c), b)}
		return c
	}
	p := notOwnSeal(scheme.New(), keys)
	passes := func(old, new client.Object) bool { return p.Update(event.UpdateEvent{ObjectOld: old, ObjectNew: new}) }

	if passes(created, seal(created, owner)) {
		t.Error("the engine's own seal brought the owner back")
	}
	relabelled := seal(created, owner)
	relabelled.Labels["a"] = "c"
	if !passes(created, relabelled) {
		t.Error("a seal written with another change was left out")
	}
	if !passes(created, seal(created, proof.Owner("someone-else"))) {
		t.Error("a seal for another owner was left out")
	}
	unsealed := seal(created, owner)
	unsealed.Annotations = nil
	if !passes(seal(created, owner), unsealed) {
		t.Error("a seal taken away was left out")
	}
	forged := seal(created, owner)
	forged.Annotations[proof.Annotation] = "not.a.seal.at-all"
	if !passes(created, forged) {
		t.Error("a seal that does not verify was left out")
	}
	again := seal(created, owner)
	again.ResourceVersion = "3"
	if !passes(seal(created, owner), again) {
		t.Error("an update after the seal was left out")
	}
	if !p.Create(event.CreateEvent{Object: created}) || !p.Delete(event.DeleteEvent{Object: created}) {
		t.Error("a create or delete was left out")
	}
}

func TestAPodsStatusDoesNotConcernAKindThatListsItsPodsItsLabelsControllerAndDeletionDo(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-1", Labels: map[string]string{"app": "web"}}}
	ready := pod.DeepCopy()
	ready.Spec.NodeName = "node-1"
	ready.Status.Phase = corev1.PodRunning
	ready.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	relabelled := pod.DeepCopy()
	relabelled.Labels = map[string]string{"app": "other"}
	deleting := pod.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	adopted := pod.DeepCopy()
	adopted.OwnerReferences = []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "web-1", UID: "rs-uid", Controller: new(true)}}
	otherOwner := adopted.DeepCopy()
	otherOwner.OwnerReferences[0].UID = "other-uid"
	for _, c := range []struct {
		name     string
		updated  *corev1.Pod
		concerns bool
	}{
		{"scheduled, running and ready", ready, false},
		{"a label changed", relabelled, true},
		{"its deletion started", deleting, true},
		{"adopted by a controller", adopted, true},
	} {
		if got := MembershipChanged(pod, c.updated); got != c.concerns {
			t.Errorf("%s: concerns = %v, want %v", c.name, got, c.concerns)
		}
	}
	for _, c := range []struct {
		name     string
		updated  *corev1.Pod
		concerns bool
	}{
		{"released by its controller", pod, true},
		{"claimed by another controller", otherOwner, true},
		{"its status only", adopted, false},
	} {
		if got := MembershipChanged(adopted, c.updated); got != c.concerns {
			t.Errorf("%s: concerns = %v, want %v", c.name, got, c.concerns)
		}
	}
}
