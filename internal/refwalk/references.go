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

// Package refwalk is the reference walker: it finds, by rule over the
// API types, every object a value names in its namespace (References),
// and every place in a type where one may be named (Sites). It knows no
// kubeforge kind, so that the shared engine holds every kind's applies to
// it (engine's order check) and admission every kind's specs
// (internal/validation), with one set of rules.
package refwalk

import (
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// One walker finds every reference a kubeforge object's spec makes to
// another object in its namespace — what the operator would read, mount
// or run as on the requester's behalf — by rule, over the API types by
// reflection, so that a field added later (a git credentials Secret, a
// backup destination's Secret) is found without anyone listing it:
//
//   - by Go type: the Kubernetes types that name a Secret, ConfigMap,
//     claim or other object (SecretKeySelector, SecretVolumeSource,
//     PersistentVolumeClaimVolumeSource, SecretReference,
//     TypedLocalObjectReference, ... in typeRules);
//   - by field name, for the generic LocalObjectReference and for names
//     held in strings or small structs: *Secret*/*SecretRef → Secret,
//     *ConfigMap* → ConfigMap, serviceAccount[Name] → ServiceAccount,
//     claimName → PersistentVolumeClaim, resourceClaimName → ResourceClaim;
//   - by the struct tag `kubeforge:"ref=<Kind>"` where a field of ours is
//     a reference whose name does not say so.
//
// A LocalObjectReference no rule classifies is reported with an empty
// Kind: the completeness test (internal/validation/references_test.go) fails on it, and
// admission refuses it rather than guess.

// Reference is one object a spec names.
type Reference struct {
	// Kind is what is named: Secret, ConfigMap, PersistentVolumeClaim,
	// ServiceAccount, ResourceClaim, ResourceClaimTemplate, or for a data
	// source the kind it gives (with Group); "" when no rule knows.
	Kind  string
	Group string
	Name  string
	// Namespace is set only when the reference names one (a
	// SecretReference); empty means the object's own.
	Namespace string
	Path      *field.Path
}

// The kinds of reference the walker reports.
const (
	RefSecret                = "Secret"
	RefConfigMap             = "ConfigMap"
	RefClaim                 = "PersistentVolumeClaim"
	RefServiceAccount        = "ServiceAccount"
	RefResourceClaim         = "ResourceClaim"
	RefResourceClaimTemplate = "ResourceClaimTemplate"
)

// typeRules: Kubernetes types that are references, and the field that
// holds the name.
var typeRules = map[reflect.Type]struct{ kind, nameField string }{
	reflect.TypeFor[corev1.SecretKeySelector]():                 {RefSecret, "Name"},
	reflect.TypeFor[corev1.SecretEnvSource]():                   {RefSecret, "Name"},
	reflect.TypeFor[corev1.SecretVolumeSource]():                {RefSecret, "SecretName"},
	reflect.TypeFor[corev1.SecretProjection]():                  {RefSecret, "Name"},
	reflect.TypeFor[corev1.SecretReference]():                   {RefSecret, "Name"},
	reflect.TypeFor[corev1.AzureFileVolumeSource]():             {RefSecret, "SecretName"},
	reflect.TypeFor[corev1.ConfigMapKeySelector]():              {RefConfigMap, "Name"},
	reflect.TypeFor[corev1.ConfigMapEnvSource]():                {RefConfigMap, "Name"},
	reflect.TypeFor[corev1.ConfigMapVolumeSource]():             {RefConfigMap, "Name"},
	reflect.TypeFor[corev1.ConfigMapProjection]():               {RefConfigMap, "Name"},
	reflect.TypeFor[corev1.PersistentVolumeClaimVolumeSource](): {RefClaim, "ClaimName"},
	// The kind is in the reference (a claim's dataSource).
	reflect.TypeFor[corev1.TypedLocalObjectReference](): {"", "Name"},
	reflect.TypeFor[corev1.TypedObjectReference]():      {"", "Name"},
	reflect.TypeFor[corev1.ObjectReference]():           {"", "Name"},
	// The kind is in the name of the field that holds it.
	reflect.TypeFor[corev1.LocalObjectReference](): {"", "Name"},
}

// The field-name rules, on the Go name or the JSON name.
var (
	secretName     = regexp.MustCompile(`(?i)secret`)
	configMapName  = regexp.MustCompile(`(?i)configmap`)
	serviceAccount = regexp.MustCompile(`(?i)^serviceaccount(name)?$`)
	claimName      = regexp.MustCompile(`(?i)^claimname$`)
	resourceClaim  = regexp.MustCompile(`(?i)^resourceclaimname$`)
	claimTemplate  = regexp.MustCompile(`(?i)^resourceclaimtemplatename$`)
	refSuffix      = regexp.MustCompile(`(?i)(secret|configmap)(ref|reference)$`)
)

// kindByName classifies a reference by the name of the field holding it.
func kindByName(goName, jsonName string) string {
	for _, n := range []string{goName, jsonName} {
		switch {
		case serviceAccount.MatchString(n):
			return RefServiceAccount
		case claimName.MatchString(n):
			return RefClaim
		case resourceClaim.MatchString(n):
			return RefResourceClaim
		case claimTemplate.MatchString(n):
			return RefResourceClaimTemplate
		case configMapName.MatchString(n):
			return RefConfigMap
		case secretName.MatchString(n):
			return RefSecret
		}
	}
	return ""
}

var localObjectReference = reflect.TypeFor[corev1.LocalObjectReference]()

// References walks v (a spec, or any value of the API types) and returns
// every reference it makes, with the field path of each, root first.
func References(v any, root *field.Path) []Reference {
	var out []Reference
	walk(reflect.ValueOf(v), root, "", "", "", nil, &out)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path.String() < out[j].Path.String() })
	return out
}

// walk visits v at path p. goName and jsonName are the field that holds
// v, tagKind the kind its struct tag gives; f, when not nil, is that
// field's plan, which holds what the names decide.
func walk(v reflect.Value, p *field.Path, goName, jsonName, tagKind string, f *fieldPlan, out *[]Reference) {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			walk(v.Index(i), p.Index(i), goName, jsonName, tagKind, f, out)
		}
	case reflect.Map:
		keys := v.MapKeys()
		for _, k := range keys {
			if k.Kind() == reflect.String {
				walk(v.MapIndex(k), p.Key(k.String()), goName, jsonName, tagKind, f, out)
			}
		}
	case reflect.String:
		kind := ""
		if f != nil {
			kind = f.stringKind
		} else {
			kind = stringKind(goName, jsonName, tagKind)
		}
		if kind != "" && v.String() != "" {
			*out = append(*out, Reference{Kind: kind, Name: v.String(), Path: p})
		}
	case reflect.Struct:
		var rule structRule
		if f != nil && f.elem == v.Type() {
			rule = f.rule
		} else {
			rule.kind, rule.nameField, rule.dynamic, rule.ok = structKind(v.Type(), goName, jsonName, tagKind)
		}
		walkStruct(v, p, rule, out)
	}
}

func walkStruct(v reflect.Value, p *field.Path, rule structRule, out *[]Reference) {
	t := v.Type()
	if rule.ok {
		kind := rule.kind
		if rule.dynamic {
			kind = v.FieldByName("Kind").String()
		}
		ref := Reference{Kind: kind, Name: v.FieldByName(rule.nameField).String(), Path: p.Child(jsonOf(t, rule.nameField))}
		if g := v.FieldByName("APIGroup"); g.IsValid() {
			if g.Kind() == reflect.Pointer && !g.IsNil() {
				ref.Group = g.Elem().String()
			}
		}
		if ns := v.FieldByName("Namespace"); ns.IsValid() && ns.Kind() == reflect.String {
			ref.Namespace = ns.String()
		} else if ns.IsValid() && ns.Kind() == reflect.Pointer && !ns.IsNil() {
			ref.Namespace = ns.Elem().String()
		}
		if ref.Name != "" || ref.Kind == "" {
			*out = append(*out, ref)
		}
	}
	plan := planOf(t)
	for i := range plan {
		f := &plan[i]
		if !f.reaches {
			continue
		}
		fp := p
		if !f.inline {
			fp = p.Child(f.jsonName)
		}
		walk(v.FieldByIndex(f.index), fp, f.goName, f.jsonName, f.tagKind, f, out)
	}
}

// structRule is structKind's answer.
type structRule struct {
	kind, nameField string
	dynamic, ok     bool
}

// fieldPlan is what the walker needs of one field of a struct type, read
// from the types once (planOf): its names, what a string below it names,
// what a struct below it is, and whether anything below it can be a
// reference at all. A spec's value is walked on every admission request;
// its types do not change.
type fieldPlan struct {
	index                     []int
	goName, jsonName, tagKind string
	inline                    bool
	// stringKind is stringKind of the field's names.
	stringKind string
	// elem is the struct type below the field (pointers, slices, arrays and
	// maps taken away), and rule structKind of it in this field.
	elem reflect.Type
	rule structRule
	// reaches is false when no value of the field can hold a reference:
	// the walker does not visit it.
	reaches bool
}

// fieldPlans are the walker's plans; reachable records, per struct type
// and with fieldPlans.mu held, whether a value of it can hold a reference.
var (
	fieldPlans = &TypePlans[[]fieldPlan]{}
	reachable  = map[reflect.Type]bool{}
)

func init() { fieldPlans.MakePlan = planFields }

// planOf is the plan of struct type t's fields, in eachField's order.
func planOf(t reflect.Type) []fieldPlan { return fieldPlans.Of(t) }

// planFields makes t's plan (fieldPlans.mu held).
func planFields(t reflect.Type) []fieldPlan {
	var out []fieldPlan
	eachField(t, func(sf reflect.StructField, name string, inline bool, tk string) {
		f := fieldPlan{index: sf.Index, goName: sf.Name, jsonName: name, tagKind: tk, inline: inline,
			stringKind: stringKind(sf.Name, name, tk)}
		below := sf.Type
		for {
			switch below.Kind() {
			case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
				below = below.Elem()
				continue
			}
			break
		}
		switch below.Kind() {
		case reflect.String:
			f.reaches = f.stringKind != ""
		case reflect.Struct:
			f.elem = below
			f.rule.kind, f.rule.nameField, f.rule.dynamic, f.rule.ok = structKind(below, sf.Name, name, tk)
			f.reaches = f.rule.ok || reaches(below)
		case reflect.Interface:
			// Whatever it holds is decided when it is walked.
			f.reaches = true
		}
		out = append(out, f)
	})
	return out
}

// reaches reports whether a value of struct type t can hold a reference
// below it (fieldPlans.mu held); a recursive type still being planned can.
func reaches(t reflect.Type) bool {
	if r, ok := reachable[t]; ok {
		return r
	}
	if fieldPlans.Planning(t) {
		return true
	}
	r := false
	for _, f := range fieldPlans.Locked(t) {
		r = r || f.reaches
	}
	reachable[t] = r
	return r
}

func hasNameField(t reflect.Type) bool {
	f, ok := t.FieldByName("Name")
	return ok && f.Type.Kind() == reflect.String
}

// JSONName is a field's JSON name, and whether it is inlined.
func JSONName(f reflect.StructField) (string, bool) { return jsonName0(f) }

// jsonName0 is a field's JSON name, and whether it is inlined.
func jsonName0(f reflect.StructField) (string, bool) {
	tag := f.Tag.Get("json")
	name, opts, _ := strings.Cut(tag, ",")
	if strings.Contains(","+opts+",", ",inline,") || (f.Anonymous && name == "") {
		return "", true
	}
	if name == "" {
		name = f.Name
	}
	return name, false
}

func jsonOf(t reflect.Type, goField string) string {
	f, ok := t.FieldByName(goField)
	if !ok {
		return goField
	}
	name, _ := jsonName0(f)
	if name == "" {
		return goField
	}
	return name
}

// String is a reference as people read it: "Secret db-admin".
func (r Reference) String() string {
	kind := r.Kind
	if r.Group != "" {
		kind += "." + r.Group
	}
	if r.Namespace != "" {
		return fmt.Sprintf("%s %s/%s", kind, r.Namespace, r.Name)
	}
	return kind + " " + r.Name
}
