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

	"k8s.io/apimachinery/pkg/types"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
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
// other, longer than the limit, as the error they are until a reconcile
// ends otherwise; then the next wait is a wait again. Another object's
// waits are counted on their own.
func TestWaitsThatLastLongerThanTheLimitAreReportedAsErrors(t *testing.T) {
	wait := fmt.Errorf("Pod/x is being deleted to be made anew: %w", ErrMadeAnew)
	clock := time.Unix(0, 0)
	var next error
	r := waits(reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, next }),
		time.Minute, func() time.Time { return clock })
	a := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "a"}}
	b := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "b"}}
	pass := func(req reconcile.Request, err error, after time.Duration) error {
		t.Helper()
		clock = clock.Add(after)
		next = err
		_, got := r.Reconcile(context.Background(), req)
		return got
	}

	if err := pass(a, wait, 0); err != nil {
		t.Fatalf("first wait: %v, want none", err)
	}
	if err := pass(a, wait, 59*time.Second); err != nil {
		t.Fatalf("a wait within the limit: %v, want none", err)
	}
	if err := pass(b, wait, 2*time.Second); err != nil {
		t.Fatalf("another object's first wait: %v, want none", err)
	}
	err := pass(a, wait, 0)
	if err == nil || !errors.Is(err, ErrMadeAnew) {
		t.Fatalf("a wait 61 s after the first: %v, want it reported", err)
	}
	if err := pass(a, nil, time.Second); err != nil {
		t.Fatalf("success: %v", err)
	}
	if err := pass(a, wait, time.Hour); err != nil {
		t.Fatalf("a wait after a reconcile that ended otherwise: %v, want none", err)
	}
	if err := pass(b, wait, 0); err == nil {
		t.Fatalf("b has waited an hour: want it reported")
	}
}
