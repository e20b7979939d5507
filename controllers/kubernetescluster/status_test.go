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

package kubernetescluster

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/conditions"
	"github.com/kubeforge/kubeforge/internal/engine"
)

// A cluster stored with a value admission now refuses says so in a
// condition, and the condition goes once the value is changed.
func TestAStoredTemplateInAValueIsReportedAsPassedAsText(t *testing.T) {
	kc := cluster(func(kc *clusterv1alpha1.KubernetesCluster) {
		kc.Spec.Installer.ExtraVars = map[string]string{"x": "{{ lookup('pipe','id') }}"}
	})
	computeStatus(kc, observed{})
	c := apimeta.FindStatusCondition(kc.Status.Conditions, ConditionValuesAsText)
	if c == nil || c.Reason != ReasonTemplateInValue || !strings.Contains(c.Message, "extraVars[x]") {
		t.Fatalf("condition = %+v, want %s naming spec.installer.extraVars[x]", c, ReasonTemplateInValue)
	}
	kc.Spec.Installer.ExtraVars["x"] = "plain"
	computeStatus(kc, observed{})
	if c := apimeta.FindStatusCondition(kc.Status.Conditions, ConditionValuesAsText); c != nil {
		t.Fatalf("condition stays after the value changed: %+v", c)
	}
}

// A name made from an address never takes one given to another host.
func TestAGeneratedHostNameNeverTakesAGivenOne(t *testing.T) {
	kc := cluster(func(kc *clusterv1alpha1.KubernetesCluster) {
		kc.Spec.Nodes = []clusterv1alpha1.Host{{Address: "10.0.0.21", Name: "node-10-0-0-22"}, {Address: "10.0.0.22"}}
	})
	if got := HostName(kc, kc.Spec.Nodes[1]); got != "node-10-0-0-22-2" {
		t.Fatalf("HostName = %q, want node-10-0-0-22-2 (node-10-0-0-22 is given to 10.0.0.21)", got)
	}
	inv, err := Inventory(kc, kc.Spec.Version, kc.Spec.Nodes)
	if err != nil || strings.Count(inv, "node-10-0-0-22:") != 2 || !strings.Contains(inv, "node-10-0-0-22-2:") {
		t.Fatalf("inventory (%v):\n%s", err, inv)
	}
}

// An apply that waits for an object being made anew is progress, not a
// failure: Degraded stays false; an apply that fails sets it.
func TestAnApplyThatWaitsIsNotDegradedAndOneThatFailsIs(t *testing.T) {
	wait := fmt.Errorf("starting operation install-1: %w",
		fmt.Errorf("Secret/c-kubeconfig is gone since it was looked at: made anew on the next pass: %w", engine.ErrMadeAnew))
	kc := cluster(nil)
	computeStatus(kc, observed{applyErr: wait})
	if c := apimeta.FindStatusCondition(kc.Status.Conditions, conditions.Degraded); c == nil || c.Status != metav1.ConditionFalse {
		t.Fatalf("Degraded = %+v after a wait, want False", c)
	}
	computeStatus(kc, observed{applyErr: errors.New("the API server refused it")})
	if c := apimeta.FindStatusCondition(kc.Status.Conditions, conditions.Degraded); c == nil || c.Status != metav1.ConditionTrue || c.Reason != conditions.ReasonApplyFailed {
		t.Fatalf("Degraded = %+v after a failed apply, want True with %s", c, conditions.ReasonApplyFailed)
	}
}
