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
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/scheme"
)

// A change of the ready count is progress here; anything else is not.
func countOnly(before, obj client.Object) bool {
	a, b := before.(*appsv1alpha1.PodSet).DeepCopy(), obj.(*appsv1alpha1.PodSet).DeepCopy()
	a.Status.ReadyReplicas, b.Status.ReadyReplicas = 0, 0
	return a.Status.ObservedGeneration == b.Status.ObservedGeneration && len(a.Status.Conditions) == len(b.Status.Conditions) &&
		(len(a.Status.Conditions) == 0 || a.Status.Conditions[0].Status == b.Status.Conditions[0].Status)
}

func TestThePacerHoldsBackProgressForASecondAndWritesEveryOtherChangeAtOnce(t *testing.T) {
	ps := &appsv1alpha1.PodSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "u1"}}
	writes := 0
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(ps).WithStatusSubresource(ps).
		WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			writes++
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		}}).Build()
	ctx := context.Background()
	clock := time.Unix(1000, 0)
	p := &Pacer{now: func() time.Time { return clock }}
	stored := func() *appsv1alpha1.PodSet {
		got := &appsv1alpha1.PodSet{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(ps), got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	step := func(what string, change func(*appsv1alpha1.PodSet), wantWrites int, wantWait time.Duration) {
		t.Helper()
		before := stored()
		obj := before.DeepCopy()
		change(obj)
		wait, err := p.Patch(ctx, c, before, obj, countOnly)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if writes != wantWrites || wait != wantWait {
			t.Errorf("%s: %d writes and a wait of %s, want %d and %s", what, writes, wait, wantWrites, wantWait)
		}
	}
	progress := func(n int32) func(*appsv1alpha1.PodSet) {
		return func(ps *appsv1alpha1.PodSet) { ps.Status.ReadyReplicas = n }
	}
	step("the first write, progress as it is", progress(1), 1, 0)
	clock = clock.Add(300 * time.Millisecond)
	step("progress 0.3 s after a write", progress(2), 1, 700*time.Millisecond)
	if got := stored().Status.ReadyReplicas; got != 1 {
		t.Errorf("the held-back count was written: %d", got)
	}
	step("a condition's change, with the progress so far", func(ps *appsv1alpha1.PodSet) {
		ps.Status.ReadyReplicas = 3
		ps.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "WaitingForPods", LastTransitionTime: metav1.NewTime(clock)}}
	}, 2, 0)
	if got := stored().Status.ReadyReplicas; got != 3 {
		t.Errorf("the progress was not written with the condition: %d", got)
	}
	clock = clock.Add(999 * time.Millisecond)
	step("progress 0.999 s after the last write", progress(4), 2, time.Millisecond)
	clock = clock.Add(time.Millisecond)
	step("progress a second after it", progress(4), 3, 0)
	step("nothing changed", func(*appsv1alpha1.PodSet) {}, 3, 0)

	// Another object is paced on its own.
	other := &appsv1alpha1.PodSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "api", UID: "u2"}}
	if err := c.Create(ctx, other); err != nil {
		t.Fatal(err)
	}
	after := other.DeepCopy()
	after.Status.ReadyReplicas = 1
	if wait, err := p.Patch(ctx, c, other, after, countOnly); err != nil || wait != 0 || writes != 4 {
		t.Errorf("another object's first progress: wait %s, %d writes, %v; want it written at once", wait, writes, err)
	}

	// An object deleted meanwhile is nothing to report on, and forgotten.
	before := stored()
	if err := c.Delete(ctx, before); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(time.Second)
	gone := before.DeepCopy()
	gone.Status.ReadyReplicas = 9
	if wait, err := p.Patch(ctx, c, before, gone, countOnly); err != nil || wait != 0 {
		t.Errorf("a deleted object's status: wait %s, %v", wait, err)
	}
	if _, kept := p.last[ps.UID]; kept {
		t.Error("the Pacer still remembers a deleted object")
	}
}
