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

package platform

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/conditions"
	"github.com/kubeforge/kubeforge/internal/engine"
)

// An apply that waits for an object being made anew is progress, not a
// failure: the Platform is not Degraded and its phase follows its
// components; an apply that fails makes it Degraded with the reason.
func TestAnApplyThatWaitsIsNotDegradedAndOneThatFailsIs(t *testing.T) {
	wait := errors.Join(fmt.Errorf("applying Platform objects: %w",
		fmt.Errorf("Secret/acme-api-db is gone since it was looked at: made anew on the next pass: %w", engine.ErrMadeAnew)))
	observe := func(apply error) *appsv1alpha1.Platform {
		p := platform("1.0", "db", "api:db")
		o := observed{live: map[string]Live{"db": ready("db", "1.0"), "api": rolling("api", "1.0")}, apply: apply}
		steps, err := Plan(p, o.live, nil)
		if err != nil {
			t.Fatal(err)
		}
		o.steps = steps
		computeStatus(p, o)
		return p
	}

	p := observe(wait)
	if c := apimeta.FindStatusCondition(p.Status.Conditions, conditions.Degraded); c == nil || c.Status != metav1.ConditionFalse {
		t.Fatalf("Degraded = %+v after a wait, want False", c)
	}
	if p.Status.Phase == appsv1alpha1.PlatformDegraded {
		t.Fatalf("phase %s after a wait, want the components' phase", p.Status.Phase)
	}

	p = observe(errors.New("the API server refused it"))
	if c := apimeta.FindStatusCondition(p.Status.Conditions, conditions.Degraded); c == nil || c.Status != metav1.ConditionTrue || c.Reason != conditions.ReasonApplyFailed {
		t.Fatalf("Degraded = %+v after a failed apply, want True with %s", c, conditions.ReasonApplyFailed)
	}
	if p.Status.Phase != appsv1alpha1.PlatformDegraded {
		t.Fatalf("phase %s after a failed apply, want %s", p.Status.Phase, appsv1alpha1.PlatformDegraded)
	}
}

// A pass that ends before its plan — a generated Secret being made anew
// (a wait) or refused (a failure) — leaves what the status says of the
// components and the version as they were: no "0 of 0 Ready", no
// bootstrap record lost; a wait claims no new generation observed, a
// failure is said as Degraded of this generation.
func TestAPassThatEndsBeforeItsPlanKeepsTheComponentsStatus(t *testing.T) {
	wait := fmt.Errorf("Secret/acme-session is gone since it was looked at: made anew on the next pass: %w", engine.ErrMadeAnew)
	for _, c := range []struct {
		name     string
		apply    error
		degraded bool
	}{
		{"a wait", wait, false},
		{"a failure", errors.New("Secret/acme-session exists and is not this Platform's"), true},
	} {
		p := platform("2.0", "db", "api:db")
		p.Generation = 3
		p.Status = appsv1alpha1.PlatformStatus{ObservedGeneration: 2, Phase: appsv1alpha1.PlatformUpgrading, Version: "1.0", Ready: "1/2",
			Components: []appsv1alpha1.ComponentStatus{{Name: "db", Phase: appsv1alpha1.ComponentReady, Bootstrapped: true},
				{Name: "api", Phase: appsv1alpha1.ComponentDeploying}}}
		was := p.Status.DeepCopy()
		computeStatus(p, observed{apply: c.apply})

		if p.Status.Version != was.Version || p.Status.Ready != was.Ready || !reflect.DeepEqual(p.Status.Components, was.Components) {
			t.Errorf("%s: status %+v, want the components, version and count kept from %+v", c.name, p.Status, *was)
		}
		if observed := map[bool]int64{false: 2, true: 3}[c.degraded]; p.Status.ObservedGeneration != observed {
			t.Errorf("%s: observedGeneration %d, want %d (a wait claims no new generation; a failure is of this one)", c.name, p.Status.ObservedGeneration, observed)
		}
		d := apimeta.FindStatusCondition(p.Status.Conditions, conditions.Degraded)
		switch {
		case c.degraded && (d == nil || d.Status != metav1.ConditionTrue || p.Status.Phase != appsv1alpha1.PlatformDegraded):
			t.Errorf("%s: Degraded %+v, phase %s; want Degraded", c.name, d, p.Status.Phase)
		case !c.degraded && (p.Status.Phase != was.Phase || apimeta.IsStatusConditionTrue(p.Status.Conditions, conditions.Ready)):
			t.Errorf("%s: phase %s, conditions %+v; want the phase kept and not Ready", c.name, p.Status.Phase, p.Status.Conditions)
		}
	}
}
