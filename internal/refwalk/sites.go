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

package refwalk

import (
	"reflect"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Sites is the walker (References) run over a type instead of a value:
// every place in a spec of type t where a value may name another object,
// with the same rules, so that what admission checks in code (the
// webhooks, over References) and what the API server checks by itself
// (the ValidatingAdmissionPolicy generated from Sites, admit.ReferencePolicy)
// are the same list. A field added to a type joins both at once.
func Sites(t reflect.Type) []Site {
	var out []Site
	walkType(t, nil, "", "", "", map[reflect.Type]bool{}, &out)
	sort.SliceStable(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// Site is one place where a spec may name an object.
type Site struct {
	// Kind is what is named (RefSecret, ...); "" when the reference says
	// it (Dynamic) or no rule knows (as References reports it).
	Kind string
	// Dynamic: the reference holds the kind and group of what it names
	// (fields kind, apiGroup), as a volume claim's dataSource does.
	Dynamic bool
	// Steps lead from the spec to the value: fields, and every item of a
	// list or map.
	Steps []Step
	// NameField is the field of the reference struct holding the name;
	// "" when the value at Steps is the name itself (a string).
	NameField string
	// Namespace: the reference may name a namespace (field namespace).
	Namespace bool
}

// Step is one step of a Site's way: a field (by its JSON name), or every
// item of a list or of a map.
type Step struct {
	Field     string
	List, Map bool
}

// String is the site's path below spec, lists and maps as [*]:
// "components[*].env[*].valueFrom.secretKeyRef.name".
func (s Site) String() string {
	var b strings.Builder
	for _, st := range s.Steps {
		switch {
		case st.List, st.Map:
			b.WriteString("[*]")
		default:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(st.Field)
		}
	}
	if s.NameField != "" {
		b.WriteString("." + s.NameField)
	}
	return b.String()
}

func walkType(t reflect.Type, steps []Step, goName, jsonName, tagKind string, seen map[reflect.Type]bool, out *[]Site) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	with := func(s Step) []Step { return append(append([]Step(nil), steps...), s) }
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return // bytes
		}
		walkType(t.Elem(), with(Step{List: true}), goName, jsonName, tagKind, seen, out)
	case reflect.Map:
		if t.Key().Kind() == reflect.String {
			walkType(t.Elem(), with(Step{Map: true}), goName, jsonName, tagKind, seen, out)
		}
	case reflect.String:
		if kind := stringKind(goName, jsonName, tagKind); kind != "" {
			*out = append(*out, Site{Kind: kind, Steps: steps})
		}
	case reflect.Struct:
		if seen[t] {
			return // a type within itself: its sites are those found above
		}
		seen[t] = true
		defer delete(seen, t)
		if kind, nameField, dynamic, ok := structKind(t, goName, jsonName, tagKind); ok {
			_, ns := t.FieldByName("Namespace")
			*out = append(*out, Site{Kind: kind, Dynamic: dynamic, Steps: steps, NameField: jsonOf(t, nameField), Namespace: ns})
		}
		eachField(t, func(f reflect.StructField, name string, inline bool, tk string) {
			s := steps
			if !inline {
				s = with(Step{Field: name})
			}
			walkType(f.Type, s, f.Name, name, tk, seen, out)
		})
	}
}

// stringKind is the kind a string field names, "" when none: by its
// struct tag, or by the field-name rules for names held in strings.
func stringKind(goName, jsonName, tagKind string) string {
	if tagKind != "" {
		return tagKind
	}
	if serviceAccount.MatchString(goName) || serviceAccount.MatchString(jsonName) ||
		claimName.MatchString(jsonName) || resourceClaim.MatchString(jsonName) || claimTemplate.MatchString(jsonName) {
		return kindByName(goName, jsonName)
	}
	return ""
}

// structKind says whether a struct of type t, held in the field goName /
// jsonName (tagKind from its tag), is a reference: the kind it names, the
// Go field holding the name, and whether the kind is in the reference
// itself (dynamic).
func structKind(t reflect.Type, goName, jsonName, tagKind string) (kind, nameField string, dynamic, ok bool) {
	rule, isRule := typeRules[t]
	if !isRule && tagKind == "" && !(refSuffix.MatchString(goName) && hasNameField(t)) {
		return "", "", false, false
	}
	kind, nameField = rule.kind, rule.nameField
	if !isRule {
		kind, nameField = tagKind, "Name"
		if kind == "" {
			kind = kindByName(goName, jsonName)
		}
	}
	switch t {
	case localObjectReference:
		kind = tagKind
		if kind == "" {
			kind = kindByName(goName, jsonName)
		}
	case reflect.TypeFor[corev1.TypedLocalObjectReference](), reflect.TypeFor[corev1.TypedObjectReference](), reflect.TypeFor[corev1.ObjectReference]():
		kind, dynamic = "", true
	}
	return kind, nameField, dynamic, true
}

// eachField calls f for every exported field of struct type t that the
// walker visits: its JSON name, whether it is inlined, and the kind its
// kubeforge struct tag gives. The name field of a reference (reported as
// the reference) and an embedded LocalObjectReference (the name of the
// selector around it) are not visited.
func eachField(t reflect.Type, f func(sf reflect.StructField, name string, inline bool, tagKind string)) {
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		name, inline := jsonName0(sf)
		if name == "-" {
			continue
		}
		if rule, isRule := typeRules[t]; isRule && sf.Name == rule.nameField {
			continue
		}
		if sf.Anonymous && sf.Type == localObjectReference {
			continue
		}
		tk := ""
		if tag, ok := sf.Tag.Lookup("kubeforge"); ok {
			tk, _ = strings.CutPrefix(tag, "ref=")
		}
		f(sf, name, inline, tk)
	}
}
