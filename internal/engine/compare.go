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
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"

	"k8s.io/apimachinery/pkg/runtime"
)

// toComparable turns a typed object into the plain map that we send with
// server-side apply: status, nil values, empty maps and empty lists dropped,
// because the API server drops them too and they would otherwise look like
// differences forever.
func toComparable(obj runtime.Object) (map[string]any, error) {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("converting %T to unstructured: %w", obj, err)
	}
	delete(u, "status")
	if md, ok := u["metadata"].(map[string]any); ok {
		delete(md, "creationTimestamp")
		delete(md, "resourceVersion")
		delete(md, "managedFields")
	}
	pruned, _ := pruneEmpty(u).(map[string]any)
	if pruned == nil {
		pruned = map[string]any{}
	}
	return pruned, nil
}

// pruneEmpty removes nil values, empty maps and empty lists, recursively.
// It returns nil when v itself ends up empty.
func pruneEmpty(v any) any {
	switch t := v.(type) {
	case nil:
		return nil
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, val := range t {
			if p := pruneEmpty(val); p != nil {
				out[k] = p
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case []any:
		if len(t) == 0 {
			return nil
		}
		out := make([]any, 0, len(t))
		for _, val := range t {
			p := pruneEmpty(val)
			if p == nil {
				// Keep list positions stable: an empty element is still an element.
				p = map[string]any{}
			}
			out = append(out, p)
		}
		return out
	default:
		return v
	}
}

// difference returns the path of the first field of want that have lacks or
// holds with another value, or "" when have contains want. Maps may carry
// extra keys in have (the API server's defaults, other controllers'
// annotations). A list of objects keyed by name (or, for volume mounts, by
// mountPath) may carry extra items in have: server-side apply merges such
// lists by key and leaves the items others added — the service account
// token volume and mount that admission adds to every Pod — so they are
// no difference an apply could remove. Any other list must have the same
// length and match element by element, since we own it whole.
func difference(have, want any, path string) string {
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return orRoot(path)
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			hv, ok := h[k]
			if !ok {
				return path + "." + k
			}
			if d := difference(hv, w[k], path+"."+k); d != "" {
				return d
			}
		}
		return ""
	case []any:
		h, ok := have.([]any)
		if !ok {
			return orRoot(path)
		}
		if len(h) > len(w) {
			if key := listKey(w); key != "" {
				return keyedDifference(h, w, key, path)
			}
		}
		if len(h) != len(w) {
			return orRoot(path)
		}
		for i := range w {
			if d := difference(h[i], w[i], fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
		return ""
	default:
		if reflect.DeepEqual(normalizeNumber(have), normalizeNumber(want)) {
			return ""
		}
		return orRoot(path)
	}
}

// listKey is the key a list of objects is merged by: "name", or
// "mountPath", when every item has a distinct string value for it; else
// "" (an empty list too: it keys nothing).
func listKey(items []any) string {
	if len(items) == 0 {
		return ""
	}
	for _, key := range []string{"name", "mountPath"} {
		seen := make(map[string]bool, len(items))
		for _, it := range items {
			m, ok := it.(map[string]any)
			if !ok {
				return ""
			}
			v, ok := m[key].(string)
			if !ok || seen[v] {
				seen = nil
				break
			}
			seen[v] = true
		}
		if seen != nil {
			return key
		}
	}
	return ""
}

// keyedDifference compares a keyed list item by item, by key: every item
// of want must be in have and match it; have's other items are not ours.
func keyedDifference(have, want []any, key, path string) string {
	byKey := make(map[string]any, len(have))
	for _, it := range have {
		if m, ok := it.(map[string]any); ok {
			if v, ok := m[key].(string); ok {
				byKey[v] = it
			}
		}
	}
	for i, it := range want {
		p := fmt.Sprintf("%s[%d]", path, i)
		h, ok := byKey[it.(map[string]any)[key].(string)]
		if !ok {
			return p
		}
		if d := difference(h, it, p); d != "" {
			return d
		}
	}
	return ""
}

// overlay lays want over base: maps are merged key by key, any other
// value (lists included) is taken from want.
func overlay(base, want any) any {
	w, ok := want.(map[string]any)
	if !ok {
		return want
	}
	b, ok := base.(map[string]any)
	if !ok {
		return want
	}
	out := make(map[string]any, len(b)+len(w))
	for k, v := range b {
		out[k] = v
	}
	for k, v := range w {
		out[k] = overlay(b[k], v)
	}
	return out
}

func orRoot(path string) string {
	if path == "" {
		return "."
	}
	return path
}

func normalizeNumber(v any) any {
	switch n := v.(type) {
	case int:
		return float64(n)
	case int32:
		return float64(n)
	case int64:
		return float64(n)
	case float32:
		return float64(n)
	default:
		return v
	}
}

// hashOf is a short, stable digest of a comparable object. It records what
// we last applied, so that a field dropped from the desired object (which
// difference() cannot see) still leads to an apply.
func hashOf(m map[string]any) (string, error) {
	b, err := json.Marshal(m) // map keys are sorted by encoding/json
	if err != nil {
		return "", fmt.Errorf("hashing desired object: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8]), nil
}
