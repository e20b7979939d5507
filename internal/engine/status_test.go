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
	"encoding/json"
	"testing"

	networkingv1alpha1 "github.com/kubeforge/kubeforge/api/networking/v1alpha1"
)

func TestStatusPatchWritesZerosAndDropsRemovedFields(t *testing.T) {
	before := &networkingv1alpha1.Balancer{}
	before.Status.Selector = "old"
	before.Status.Backends = []networkingv1alpha1.BalancerBackendStatus{{Name: "a", Weight: 1}}
	obj := before.DeepCopy()
	obj.Status.Selector = "new"
	obj.Status.Backends = nil // gone
	obj.Status.ActiveBackends = 0

	raw, err := statusPatch(before, obj, false)
	if err != nil {
		t.Fatal(err)
	}
	var patch struct {
		Status map[string]any `json:"status"`
	}
	if err := json.Unmarshal(raw, &patch); err != nil {
		t.Fatal(err)
	}
	if v, ok := patch.Status["obsoleteBackends"]; !ok || v != float64(0) {
		t.Errorf("a counter that stays 0 must be written: %s", raw)
	}
	if patch.Status["selector"] != "new" {
		t.Errorf("selector not written: %s", raw)
	}
	if v, ok := patch.Status["backends"]; !ok || v != nil {
		t.Errorf("a dropped field must be set to null: %s", raw)
	}
}

func TestStatusPatchWithALockCarriesTheResourceVersion(t *testing.T) {
	before := &networkingv1alpha1.Balancer{}
	before.ResourceVersion = "42"
	obj := before.DeepCopy()
	obj.Status.Selector = "x"
	raw, err := statusPatch(before, obj, true)
	if err != nil {
		t.Fatal(err)
	}
	var patch struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &patch); err != nil || patch.Metadata.ResourceVersion != "42" {
		t.Fatalf("patch %s: want metadata.resourceVersion 42", raw)
	}
}
