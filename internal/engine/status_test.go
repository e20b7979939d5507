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
	"slices"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/kubeforge/kubeforge/api/networking/v1alpha1"
)

// applyStatusPatch applies a status patch to the object before was read as.
func applyStatusPatch(t *testing.T, before client.Object, raw []byte) map[string]any {
	t.Helper()
	doc, err := json.Marshal(before)
	if err != nil {
		t.Fatal(err)
	}
	p, err := jsonpatch.DecodePatch(raw)
	if err != nil {
		t.Fatalf("patch %s: %v", raw, err)
	}
	out, err := p.Apply(doc)
	if err != nil {
		t.Fatalf("patch %s does not apply to what was read: %v", raw, err)
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	return got
}

func TestStatusPatchWritesZerosAndDropsRemovedFields(t *testing.T) {
	before := &networkingv1alpha1.Balancer{}
	before.UID = "read-uid"
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
	status, _ := applyStatusPatch(t, before, raw)["status"].(map[string]any)
	if v, ok := status["obsoleteBackends"]; !ok || v != float64(0) {
		t.Errorf("a counter that stays 0 must be written: %s", raw)
	}
	if status["selector"] != "new" {
		t.Errorf("selector not written: %s", raw)
	}
	if _, ok := status["backends"]; ok {
		t.Errorf("a dropped field must be gone: %s", raw)
	}
}

func TestStatusPatchTestsTheUIDReadAndWithALockHoldsTheResourceVersion(t *testing.T) {
	before := &networkingv1alpha1.Balancer{}
	before.ResourceVersion = "42"
	before.UID = "read-uid"
	obj := before.DeepCopy()
	obj.Status.Selector = "x"
	for _, lock := range []bool{false, true} {
		raw, err := statusPatch(before, obj, lock)
		if err != nil {
			t.Fatal(err)
		}
		var ops []struct {
			Op, Path string
			Value    any
		}
		if err := json.Unmarshal(raw, &ops); err != nil {
			t.Fatal(err)
		}
		if len(ops) == 0 || ops[0].Op != "test" || ops[0].Path != "/metadata/uid" || ops[0].Value != "read-uid" {
			t.Errorf("lock %v: patch %s must first test metadata.uid read-uid", lock, raw)
		}
		holds := slices.ContainsFunc(ops, func(o struct {
			Op, Path string
			Value    any
		}) bool {
			return o.Path == "/metadata/resourceVersion" && o.Value == "42"
		})
		if holds != lock {
			t.Errorf("lock %v: patch %s holds the resourceVersion: %v", lock, raw, holds)
		}
		anew := before.DeepCopy()
		anew.UID = "another"
		doc, _ := json.Marshal(anew)
		p, _ := jsonpatch.DecodePatch(raw)
		if _, err := p.Apply(doc); err == nil {
			t.Errorf("lock %v: patch %s applies to another object made under the name", lock, raw)
		}
	}
}
