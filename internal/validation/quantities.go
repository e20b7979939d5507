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

// Package validation holds validation rules that several kinds share:
// pod templates, containers, resource quantities, labels.
package validation

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// RawQuantityErrors finds every resource quantity in a raw JSON object
// (any "requests" or "limits" map inside a "resources" object) that does
// not parse as it is written, spaces included, and returns a field error
// for each one with its full path.
//
// Typed decoding stops at the first bad quantity with a message that names
// no field; admission runs this on the raw request first so the user learns
// which field is wrong.
func RawQuantityErrors(raw []byte) field.ErrorList {
	if len(raw) == 0 {
		return nil
	}
	// Only a "requests" or "limits" map inside a "resources" object is
	// checked. JSON writes a letter either as itself or as a \u escape, so
	// a document that has none of those names written plainly and no \u
	// has nothing to find (most requests: a container's resources are
	// often {}), and is not decoded a second time for this walk. An invalid
	// one is walked, for its error; a valid one the walk could not decode
	// (a number beyond float64, which no object the API server sends
	// holds) is left to the typed decoding to refuse.
	if !bytes.Contains(raw, []byte(`\u`)) && (!bytes.Contains(raw, []byte(`"resources"`)) ||
		!bytes.Contains(raw, []byte(`"requests"`)) && !bytes.Contains(raw, []byte(`"limits"`))) && json.Valid(raw) {
		return nil
	}
	return walkRawQuantities(raw)
}

// walkRawQuantities is RawQuantityErrors without its shortcut.
func walkRawQuantities(raw []byte) field.ErrorList {
	// An object's metadata holds no quantity (the API server keeps only
	// ObjectMeta's fields), and its managed fields are often the most of
	// it: the walk leaves it out.
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		var doc any
		if err := json.Unmarshal(raw, &doc); err != nil {
			return field.ErrorList{field.Invalid(field.NewPath("object"), "", fmt.Sprintf("not valid JSON: %v", err))}
		}
		// Valid JSON, not an object: walked whole, as any document.
		var errs field.ErrorList
		walkQuantities(doc, nil, false, &errs)
		return errs
	}
	doc := make(map[string]any, len(top))
	for k, v := range top {
		if k == "metadata" {
			continue
		}
		var value any
		if err := json.Unmarshal(v, &value); err != nil {
			return field.ErrorList{field.Invalid(field.NewPath("object"), "", fmt.Sprintf("not valid JSON: %v", err))}
		}
		doc[k] = value
	}
	var errs field.ErrorList
	walkQuantities(doc, nil, false, &errs)
	return errs
}

func walkQuantities(v any, path *field.Path, inResources bool, errs *field.ErrorList) {
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			child := childPath(path, k)
			if inResources && (k == "requests" || k == "limits") {
				if m, ok := t[k].(map[string]any); ok {
					checkQuantityMap(m, child, errs)
					continue
				}
			}
			walkQuantities(t[k], child, k == "resources", errs)
		}
	case []any:
		for i, item := range t {
			walkQuantities(item, path.Index(i), false, errs)
		}
	}
}

func checkQuantityMap(m map[string]any, path *field.Path, errs *field.ErrorList) {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		var s string
		switch q := m[name].(type) {
		case string:
			s = q
		case float64:
			s = strconv.FormatFloat(q, 'f', -1, 64)
		default:
			*errs = append(*errs, field.Invalid(path.Key(name), m[name], "must be a quantity such as 500m, 2 or 1Gi"))
			continue
		}
		if _, err := resource.ParseQuantity(s); err != nil {
			*errs = append(*errs, field.Invalid(path.Key(name), s, "must be a quantity such as 500m, 2 or 1Gi"))
		}
	}
}

func childPath(p *field.Path, name string) *field.Path {
	if p == nil {
		return field.NewPath(name)
	}
	return p.Child(name)
}
