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
	"errors"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// An error is a wait only when everything in it is one: joined, wrapped
// or aggregated, a failure beside a wait makes it a failure.
func TestWaitingIsTrueOnlyWhenEveryErrorInItIsAWait(t *testing.T) {
	wait := func(key string) error { return fmt.Errorf("%s is gone since it was looked at: %w", key, ErrMadeAnew) }
	boom := errors.New("the API server refused it")
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"a failure", boom, false},
		{"a wait", wait("Pod/a"), true},
		{"a wrapped wait", fmt.Errorf("applying PodSet objects: %w", wait("Pod/a")), true},
		{"a write refused for an object changed since it was read", fmt.Errorf("removing the finalizer f: %w", ErrChangedSinceRead), true},
		{"an aggregate of waits", kerrors.NewAggregate([]error{wait("Pod/a"), wait("Secret/b")}), true},
		{"an aggregate with a failure", kerrors.NewAggregate([]error{wait("Pod/a"), boom}), false},
		{"a wrapped aggregate with a failure", fmt.Errorf("applying: %w", kerrors.NewAggregate([]error{boom, wait("Pod/a")})), false},
		{"a join of one wrapped wait", errors.Join(fmt.Errorf("applying Platform objects: %w", wait("Job/j")), nil), true},
		{"a join of a wait and a failure", errors.Join(wait("Job/j"), boom), false},
		{"a wait and a failure in one Errorf", fmt.Errorf("%w; %w", wait("Pod/a"), boom), false},
		{"a join of nothing", joined{}, false},
		{"a wrapped join of nothing", fmt.Errorf("x: %w", joined{}), false},
	} {
		if got := Waiting(c.err); got != c.want {
			t.Errorf("%s: Waiting(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
}

// joined is an error with no errors in it (errors.Join and
// kerrors.NewAggregate make none: they give nil).
type joined []error

func (j joined) Error() string   { return "nothing" }
func (j joined) Unwrap() []error { return j }

// A reconciler that ends in a wait comes back after WaitRequeue (or the
// sooner time it asked for) with no error, so controller-runtime neither
// backs off nor logs a "Reconciler error"; anything else passes as it was.
func TestWaitsTurnsAWaitIntoAShortRequeueAndLeavesEverythingElse(t *testing.T) {
	wait := fmt.Errorf("applying Balancer objects: %w", fmt.Errorf("Pod/x is being deleted to be made anew: %w", ErrMadeAnew))
	boom := errors.New("the API server refused it")
	for _, c := range []struct {
		name    string
		res     reconcile.Result
		err     error
		want    reconcile.Result
		wantErr error
	}{
		{"a wait", reconcile.Result{}, wait, reconcile.Result{RequeueAfter: WaitRequeue}, nil},
		{"a wait with a later requeue", reconcile.Result{RequeueAfter: time.Minute}, wait, reconcile.Result{RequeueAfter: WaitRequeue}, nil},
		{"a wait with a sooner requeue", reconcile.Result{RequeueAfter: 100 * time.Millisecond}, wait, reconcile.Result{RequeueAfter: 100 * time.Millisecond}, nil},
		{"a failure", reconcile.Result{}, boom, reconcile.Result{}, boom},
		{"a wait beside a failure", reconcile.Result{}, errors.Join(wait, boom), reconcile.Result{}, errors.Join(wait, boom)},
		{"success", reconcile.Result{RequeueAfter: time.Hour}, nil, reconcile.Result{RequeueAfter: time.Hour}, nil},
	} {
		r := Waits(reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return c.res, c.err }))
		res, err := r.Reconcile(context.Background(), reconcile.Request{})
		if res != c.want || (err == nil) != (c.wantErr == nil) || err != nil && err.Error() != c.wantErr.Error() {
			t.Errorf("%s: Reconcile = %+v, %v; want %+v, %v", c.name, res, err, c.want, c.wantErr)
		}
	}
}

// Waits that do not clear are reported: one object's, one after the
// other, longer than the limit, as the error they are — once, and once a
// limit after that, waited on in between — until a reconcile ends
// otherwise; then the next wait is a wait again. Another object's waits
// are counted on their own.
func TestWaitsThatLastLongerThanTheLimitAreReportedOnceALimit(t *testing.T) {
	wait := fmt.Errorf("Pod/x is being deleted to be made anew: %w", ErrMadeAnew)
	clock := time.Unix(0, 0)
	var next error
	r := waits(reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, next }),
		time.Minute, func() time.Time { return clock })
	a := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "a"}}
	b := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "b"}}
	pass := func(req reconcile.Request, err error, after time.Duration) (reconcile.Result, error) {
		t.Helper()
		clock = clock.Add(after)
		next = err
		return r.Reconcile(context.Background(), req)
	}
	quiet := func(what string, res reconcile.Result, err error) {
		t.Helper()
		if err != nil || res.RequeueAfter != WaitRequeue {
			t.Fatalf("%s: %+v, %v; want a requeue after %s and no error", what, res, err, WaitRequeue)
		}
	}
	reported := func(what string, _ reconcile.Result, err error) {
		t.Helper()
		if err == nil || !errors.Is(err, ErrMadeAnew) {
			t.Fatalf("%s: %v, want the wait reported as an error", what, err)
		}
	}

	res, err := pass(a, wait, 0)
	quiet("a's first wait", res, err)
	res, err = pass(a, wait, 59*time.Second)
	quiet("a wait within the limit", res, err)
	res, err = pass(b, wait, 2*time.Second)
	quiet("b's first wait", res, err)
	res, err = pass(a, wait, 0)
	reported("a's wait 61 s after its first", res, err)
	res, err = pass(a, wait, 5*time.Millisecond)
	quiet("a's wait right after it was reported (no burst of errors)", res, err)
	res, err = pass(a, wait, 59*time.Second)
	quiet("a's wait within a limit of the report", res, err)
	res, err = pass(a, wait, 2*time.Second)
	reported("a's wait a limit after the report", res, err)
	if _, err := pass(a, nil, time.Second); err != nil {
		t.Fatalf("success: %v", err)
	}
	res, err = pass(a, wait, time.Hour)
	quiet("a wait after a reconcile that ended otherwise", res, err)
	res, err = pass(b, wait, 0)
	reported("b has waited an hour", res, err)
}

// A JSON patch that does not apply (a failed test, an index past the
// end) is told apart from a refusal by validation or admission, which
// SyncFinalizer must not take for a list that changed.
func TestAPatchThatDoesNotApplyIsToldApartFromAValidationRefusal(t *testing.T) {
	gr := schema.GroupResource{Resource: "configmaps"}
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"a failed test", apierrors.NewGenericServerResponse(422, "patch", schema.GroupResource{}, "", "testing value /metadata/finalizers/0 failed: test failed", 0, false), true},
		{"a wrapped failed test", fmt.Errorf("x: %w", apierrors.NewGenericServerResponse(422, "", schema.GroupResource{}, "", "doc is missing path", 0, false)), true},
		{"a validation refusal", apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "c", field.ErrorList{field.Invalid(field.NewPath("metadata", "finalizers"), "x", "bad")}), false},
		{"a conflict", apierrors.NewConflict(gr, "c", errors.New("changed")), false},
		{"another error", errors.New("connection refused"), false},
	} {
		if got := patchDidNotApply(c.err); got != c.want {
			t.Errorf("%s: patchDidNotApply(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
}
