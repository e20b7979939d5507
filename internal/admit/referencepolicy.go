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

package admit

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubeforge/kubeforge/internal/proof"
	"github.com/kubeforge/kubeforge/internal/validation"
)

// The references a spec makes are checked also when the webhooks are not
// called — not installed, skipped, or their configurations deleted: one
// ValidatingAdmissionPolicy per kind, which the API server evaluates
// itself, asks its authorizer (CEL's authorizer, as the requester) what
// the webhook asks with SubjectAccessReviews, at every place of the spec
// where the walker finds a reference (validation.Sites: the same rules as
// validation.References, over the type instead of a value). So a field
// added to a type is checked by both, with no new code. The policies are
// made here, written to config/policy by `make manifests`, and applied by
// the manager under OLM (--ensure-admission-policy).
//
// When: on create, and on an update that changes the spec beyond the
// kind's harmless fields (a Workspace's started, a PodSet's replicas, a
// Platform component's replicas: what Kind.Harmless clears, at the top of
// the spec or in each item of a top-level list), a command annotation or
// the stamp — the webhook's rule — unless the mutating webhook (or the
// operator) stamped the request for itself (stampedForThisRequest, in
// conditions.go; what it asked is what these ask). Each distinct name is checked once, in an expression
// of its own (CEL's budget), at most MaxPolicyReferences. On an update by
// anyone but the recorded owner, what kubeforge made for the object is
// checked too (Kind.ImplicitCEL, as Kind.Implicit for the webhook). Not
// here: the exposures (Ingresses, Certificates, NodePort Services) and the
// owner record (OwnerRecordPolicy).

// ReferencePolicyName is the name of the policy (and binding) of the
// resource, e.g. kubeforge-references-platforms.
func ReferencePolicyName(resource string) string { return "kubeforge-references-" + resource }

// referenceSubject is what a kind's policy is made from.
type referenceSubject struct {
	group, resource string
	spec            reflect.Type
	// harmless are the top-level spec fields (JSON names) whose change
	// is harmless: the whole field when it maps to nil, else the fields
	// of each item of the list it holds.
	harmless map[string][]string
	commands []string
	// implicit is Kind.ImplicitCEL: what kubeforge made for the object,
	// checked on an update by anyone but its recorded owner.
	implicit map[string]string
}

func (k Kind[T]) referenceSubject() referenceSubject {
	t := reflect.TypeFor[T]().Elem()
	spec, _ := t.FieldByName("Spec")
	s := referenceSubject{group: k.GVK.Group, resource: strings.ToLower(k.GVK.Kind) + "s", spec: spec.Type, commands: k.Commands,
		harmless: map[string][]string{}, implicit: k.ImplicitCEL}
	if k.Harmless == nil {
		return s
	}
	// A field is harmless when Harmless clears it: a top-level one, or
	// one of each item of a top-level list (a Platform component's
	// replicas).
	clears := func(set func(spec reflect.Value) (reflect.Value, bool)) bool {
		obj := reflect.New(t)
		v, ok := set(obj.Elem().FieldByName("Spec"))
		if !ok {
			return false
		}
		k.Harmless(obj.Interface().(T))
		return v.IsZero()
	}
	for i := 0; i < spec.Type.NumField(); i++ {
		name, ok := jsonField(spec.Type.Field(i))
		if !ok {
			continue
		}
		if clears(func(sp reflect.Value) (reflect.Value, bool) { return sp.Field(i), setNonZero(sp.Field(i)) }) {
			s.harmless[name] = nil
			continue
		}
		if ft := spec.Type.Field(i).Type; ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct {
			for j := 0; j < ft.Elem().NumField(); j++ {
				inner, ok := jsonField(ft.Elem().Field(j))
				if !ok {
					continue
				}
				if clears(func(sp reflect.Value) (reflect.Value, bool) {
					sp.Field(i).Set(reflect.MakeSlice(ft, 1, 1))
					item := sp.Field(i).Index(0).Field(j)
					return item, setNonZero(item)
				}) {
					s.harmless[name] = append(s.harmless[name], inner)
				}
			}
		}
	}
	return s
}

// jsonField is a struct field's JSON name, and whether it has one.
func jsonField(f reflect.StructField) (string, bool) {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name, f.IsExported() && name != "" && name != "-"
}

// setNonZero gives v a value other than its zero, where it can.
func setNonZero(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.String:
		v.SetString("x")
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		m.SetMapIndex(reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem())
		v.Set(m)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() && setNonZero(v.Field(i)) {
				return true
			}
		}
		return false
	default:
		return false
	}
	return true
}

// ReferencePolicies returns each kind's policy and binding, in order; a
// kind whose spec names nothing (a Balancer today) has none until a field
// that does is added.
func ReferencePolicies() []client.Object {
	var out []client.Object
	for _, s := range []referenceSubject{PodSet.referenceSubject(), Platform.referenceSubject(), Balancer.referenceSubject(),
		Workspace.referenceSubject(), KubernetesCluster.referenceSubject()} {
		if len(validation.Sites(s.spec)) == 0 && len(s.implicit) == 0 {
			continue
		}
		p, b := s.policy()
		out = append(out, p, b)
	}
	return out
}

func (s referenceSubject) policy() (*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	name := ReferencePolicyName(s.resource)
	labels := map[string]string{"app.kubernetes.io/name": "kubeforge"}
	variables, validations := referenceChecks(validation.Sites(s.spec), s.implicit, name)
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{s.group}, APIVersions: []string{"*"}, Resources: []string{s.resource}},
				},
			}}},
			// The API server evaluates the checks for a request that can
			// change what they check (recheck: a create, a change of the
			// spec beyond its harmless fields, of a command or of the
			// stamp) unless the mutating webhook stamped it for this very
			// request.
			//   - That stamp is signed only after the webhook asked the
			//     same questions for the same requester (and held the same
			//     bound, MaxPolicyReferences): at a create, for the object
			//     whose creator record (which the stamp covers) is the
			//     requester; at an update, over the stored object the
			//     update changes (StampedOverAnnotation). A stamp a client
			//     writes while the webhooks are not called — made up, or
			//     another user's or an older one written back with the spec
			//     it approved — either names another creator or an older
			//     version, and the checks run, or verifies for nothing, and
			//     the reconcilers make nothing for the object.
			//   - Every other update (labels, other annotations, status
			//     writes of a client that updates the whole object) costs
			//     no evaluation of the checks below; and the checks do not
			//     ask it again, which would compare the specs a second time
			//     on every update they check.
			// One expression, the stamp first: the API server evaluates
			// every condition, where CEL's && stops at a stamp.
			MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "not-stamped-for-this-request-and-recheck",
				Expression: "!(" + stampedForThisRequest + ") && (" + s.recheck() + ")"}},
			Variables:   variables,
			Validations: validations,
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicyBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}
	return policy, binding
}

// recheck is whether the request must pass the reference checks: a
// create, or an update of anything in the spec but the harmless fields,
// of a command annotation, or of the stamp (StampAnnotation,
// StampedOverAnnotation) — a stamp written on its own can approve a spec
// stored earlier, so it is checked like the spec it approves.
func (s referenceSubject) recheck() string {
	changed := []string{"request.operation == 'CREATE'"}
	if len(s.harmless) == 0 {
		changed = append(changed, "object.spec != oldObject.spec")
	} else {
		for i := 0; i < s.spec.NumField(); i++ {
			f := s.spec.Field(i)
			name, ok := jsonField(f)
			if !ok || f.Anonymous {
				// A field compared here by its name: one without (inlined,
				// or not serialised) would never count as a change.
				panic(fmt.Sprintf("the references policy of %s cannot compare spec field %s: give it a JSON name", s.resource, f.Name))
			}
			inner, harmless := s.harmless[name]
			if harmless && len(inner) == 0 {
				continue
			}
			changed = append(changed, differs("object.spec", "oldObject.spec", name, s.spec.Field(i).Type, inner))
		}
	}
	for _, c := range append(slices.Clone(s.commands), StampAnnotation, StampedOverAnnotation) {
		annotation := func(obj string) string {
			return fmt.Sprintf("(has(%[1]s.metadata.annotations) && '%[2]s' in %[1]s.metadata.annotations ? %[1]s.metadata.annotations['%[2]s'] : '')", obj, c)
		}
		changed = append(changed, annotation("object")+" != "+annotation("oldObject"))
	}
	return strings.Join(changed, " || ")
}

// differs is the CEL that field name of the structs a and b differs; for
// a list of structs, ignoring the fields except of each item (an item of a
// differs when no item of b equals it but for those).
func differs(a, b, name string, t reflect.Type, except []string) string {
	f := celField(name)
	present := fmt.Sprintf("has(%[1]s.%[3]s) != has(%[2]s.%[3]s)", a, b, f)
	if len(except) == 0 {
		return fmt.Sprintf("%[1]s || (has(%[2]s.%[4]s) && %[2]s.%[4]s != %[3]s.%[4]s)", present, a, b, f)
	}
	var same []string
	elem := t.Elem()
	for j := 0; j < elem.NumField(); j++ {
		inner, ok := jsonField(elem.Field(j))
		if !ok || slices.Contains(except, inner) {
			continue
		}
		g := celField(inner)
		same = append(same, fmt.Sprintf("has(n.%[1]s) == has(o.%[1]s) && (!has(n.%[1]s) || n.%[1]s == o.%[1]s)", g))
	}
	return fmt.Sprintf("%[1]s || (has(%[2]s.%[4]s) && (%[2]s.%[4]s.size() != %[3]s.%[4]s.size() || %[2]s.%[4]s.exists(n, !%[3]s.%[4]s.exists(o, %[5]s))))",
		present, a, b, f, strings.Join(same, " && "))
}

// MaxPolicyReferences is how many distinct objects one object may name
// where the references policies are installed. Each authorization check
// costs 350,000 of CEL's budget of 10,000,000 per request (the API
// server's fixed cost, which allows two checks per expression), so the
// policy checks each distinct name in an expression of its own and can
// afford about 28 in all; past this bound an object is refused with a
// message that says so, rather than admitted unchecked.
const MaxPolicyReferences = 24

// referenceKind is one kind of reference the policy checks: the variable
// holding the distinct names the spec gives it, and the check of one.
type referenceKind struct {
	variable, kind string
	check          func(name string) string
}

var referenceKinds = []referenceKind{
	{"secrets", validation.RefSecret, func(n string) string { return get("", "secrets", n) }},
	{"configMaps", validation.RefConfigMap, func(n string) string { return get("", "configmaps", n) }},
	// Reading a claim's data is mounting it, which creating Pods allows.
	{"claims", validation.RefClaim, func(n string) string { return get("", "persistentvolumeclaims", n) + " && variables.createPods" }},
	{"resourceClaims", validation.RefResourceClaim, func(n string) string { return get("resource.k8s.io", "resourceclaims", n) }},
	{"resourceClaimTemplates", validation.RefResourceClaimTemplate, func(n string) string {
		return get("resource.k8s.io", "resourceclaimtemplates", n)
	}},
	{"serviceAccounts", validation.RefServiceAccount, func(n string) string {
		return "variables.createPods || authorizer.group('').resource('serviceaccounts').namespace(request.namespace).name(" + n + ").check('impersonate').allowed()"
	}},
	// Restoring a snapshot is reading the claim's data it holds.
	{"volumeSnapshots", "VolumeSnapshot", func(n string) string {
		return get("snapshot.storage.k8s.io", "volumesnapshots", n) + " && variables.createPods"
	}},
}

// referenceChecks are the policy's variables and validations for sites:
// for each kind of reference, the distinct names the spec gives it (every
// site of that kind, flattened), and one expression per name slot, so
// that no expression makes more than one authorization check; a claim's
// data source counts as the claim or snapshot it names; a reference to
// another namespace, or of a kind no rule knows, is refused outright.
func referenceChecks(sites []validation.Site, implicit map[string]string, policy string) ([]admissionregistrationv1.Variable, []admissionregistrationv1.Validation) {
	byKind := map[string][]string{}
	var vars []admissionregistrationv1.Variable
	if len(implicit) > 0 {
		// What kubeforge made for the object is its owner's: anyone else who
		// changes the spec must be allowed to use it too (access.go).
		owner := func(key string) string {
			return fmt.Sprintf("(has(oldObject.metadata.annotations) && '%[1]s' in oldObject.metadata.annotations ? oldObject.metadata.annotations['%[1]s'] : '')", key)
		}
		vars = append(vars, admissionregistrationv1.Variable{Name: "nonOwner", Expression: fmt.Sprintf(
			"request.operation == 'UPDATE' && request.userInfo.username != (%s != '' ? %s : %s)",
			owner(proof.OwnerAnnotation), owner(proof.OwnerAnnotation), owner(proof.CreatedByAnnotation))})
		for _, k := range referenceKinds {
			if list, ok := implicit[k.variable]; ok {
				byKind[k.kind] = append(byKind[k.kind], "(variables.nonOwner ? ("+list+") : [])")
			}
		}
	}
	var dynamic, namespaced, unknown []string
	for _, site := range sites {
		switch {
		case site.Dynamic:
			dynamic = append(dynamic, siteList(site, true))
		case site.Kind == "":
			unknown = append(unknown, siteList(site, false))
		default:
			byKind[site.Kind] = append(byKind[site.Kind], siteList(site, false))
		}
		if site.Namespace {
			namespaced = append(namespaced, siteList(site, true))
		}
	}
	var checks []admissionregistrationv1.Validation
	deny := func(expr, msg string) {
		checks = append(checks, admissionregistrationv1.Validation{Expression: expr, Message: msg,
			Reason: ptr.To(metav1.StatusReasonForbidden)})
	}
	concat := func(lists []string) string {
		if len(lists) == 0 {
			return "[]"
		}
		return strings.Join(lists, " + ")
	}
	if len(dynamic) > 0 {
		vars = append(vars, admissionregistrationv1.Variable{Name: "dataSources", Expression: concat(dynamic)})
		deny("variables.dataSources.all(r, !has(r.name) || r.name == '' || "+dataSourceKind("r", "PersistentVolumeClaim", "")+" || "+
			dataSourceKind("r", "VolumeSnapshot", "snapshot.storage.k8s.io")+")",
			"a claim's data source names a kind kubeforge does not use: a PersistentVolumeClaim or a VolumeSnapshot ("+policy+")")
		byKind[validation.RefClaim] = append(byKind[validation.RefClaim],
			"variables.dataSources.filter(r, has(r.name) && "+dataSourceKind("r", "PersistentVolumeClaim", "")+").map(r, r.name)")
		byKind["VolumeSnapshot"] = append(byKind["VolumeSnapshot"],
			"variables.dataSources.filter(r, has(r.name) && "+dataSourceKind("r", "VolumeSnapshot", "snapshot.storage.k8s.io")+").map(r, r.name)")
	}
	if len(namespaced) > 0 {
		ns := celField("namespace")
		deny(fmt.Sprintf("(%s).all(r, !has(r.%[2]s) || r.%[2]s == '' || r.%[2]s == request.namespace)", concat(namespaced), ns),
			"a reference names another namespace: kubeforge uses objects of the object's own namespace only ("+policy+")")
	}
	if len(unknown) > 0 {
		deny("("+concat(unknown)+").all(n, n == '')", "a reference no rule knows the kind of ("+policy+")")
	}
	// Every name the spec gives, of every kind, in one list of [kind,
	// name] pairs, checked one slot per expression: each expression makes
	// at most one name's checks (the budget, MaxPolicyReferences), and the
	// API server evaluates MaxPolicyReferences expressions instead of as
	// many per kind.
	needPods := false
	var refs, present []string
	for _, k := range referenceKinds {
		lists, ok := byKind[k.kind]
		if !ok {
			continue
		}
		skip := "n != ''"
		if k.kind == validation.RefServiceAccount {
			skip += " && n != 'default'" // every Pod may run as default
		}
		if k.kind == validation.RefClaim || k.kind == validation.RefServiceAccount || k.kind == "VolumeSnapshot" {
			needPods = true
		}
		vars = append(vars, admissionregistrationv1.Variable{Name: k.variable, Expression: "(" + concat(lists) + ").filter(n, " + skip + ").distinct()"})
		refs = append(refs, fmt.Sprintf("variables.%s.map(n, ['%s', string(n)])", k.variable, k.kind))
		present = append(present, k.kind)
	}
	if len(refs) == 0 {
		return vars, checks
	}
	vars = append(vars, admissionregistrationv1.Variable{Name: "refs", Expression: concat(refs)})
	if needPods {
		vars = append(vars, admissionregistrationv1.Variable{Name: "createPods",
			Expression: "authorizer.group('').resource('pods').namespace(request.namespace).check('create').allowed()"})
	}
	// First: past the bound, no name slot is reached.
	checks = append([]admissionregistrationv1.Validation{{
		Expression: fmt.Sprintf("size(variables.refs) <= %d", MaxPolicyReferences),
		Message: fmt.Sprintf("the spec names more than %d distinct Secrets, ConfigMaps, claims and ServiceAccounts: the API server checks "+
			"at most %d in one request (%s); name fewer, e.g. one Secret with several keys", MaxPolicyReferences, MaxPolicyReferences, policy),
		Reason: ptr.To(metav1.StatusReasonForbidden),
	}}, checks...)
	for i := range MaxPolicyReferences {
		kind, name := fmt.Sprintf("variables.refs[%d][0]", i), fmt.Sprintf("variables.refs[%d][1]", i)
		check, may := "false", "'get it'"
		for j := len(referenceKinds) - 1; j >= 0; j-- {
			k := referenceKinds[j]
			if !slices.Contains(present, k.kind) {
				continue
			}
			check = fmt.Sprintf("%s == '%s' ? %s : %s", kind, k.kind, k.check(name), wrap(check))
			if m := mayWhat(k.kind); m != "get it" {
				may = fmt.Sprintf("%s == '%s' ? '%s' : %s", kind, k.kind, m, wrap(may))
			}
		}
		checks = append(checks, admissionregistrationv1.Validation{
			Expression: fmt.Sprintf("size(variables.refs) <= %d || (%s)", i, check),
			MessageExpression: fmt.Sprintf("request.userInfo.username + ' may not have kubeforge use the ' + %s + ' ' + %s + ' (%s: ' + (%s) + ')'",
				kind, name, policy, may),
			Message: fmt.Sprintf("the spec names an object that the requester may not have kubeforge use (%s)", policy),
			Reason:  ptr.To(metav1.StatusReasonForbidden),
		})
	}
	return vars, checks
}

// wrap parenthesises a conditional that is another's else branch.
func wrap(expr string) string {
	if strings.Contains(expr, "?") {
		return "(" + expr + ")"
	}
	return expr
}

// mayWhat says what the requester needs for a kind.
func mayWhat(kind string) string {
	switch kind {
	case validation.RefClaim:
		return "get persistentvolumeclaims and create pods"
	case validation.RefServiceAccount:
		return "create pods, or impersonate the ServiceAccount"
	}
	return "get it"
}

func dataSourceKind(r, kind, group string) string {
	return fmt.Sprintf("(has(%[1]s.kind) && %[1]s.kind == '%[2]s') && (has(%[1]s.apiGroup) ? %[1]s.apiGroup : '') == '%[3]s'", r, kind, group)
}

// siteList is the CEL list of what site holds in object.spec: the names
// (strings), or with structs the reference structs themselves (a data
// source's kind and group, a reference's namespace).
func siteList(site validation.Site, structs bool) string {
	n := 0
	var at func(cur string, i int) string
	at = func(cur string, i int) string {
		if i == len(site.Steps) {
			switch {
			case structs || site.NameField == "":
				return "[" + cur + "]"
			default:
				f := cur + "." + celField(site.NameField)
				return fmt.Sprintf("(has(%s) ? [%s] : [])", f, f)
			}
		}
		switch st := site.Steps[i]; {
		case st.List:
			n++
			x := fmt.Sprintf("x%d", n)
			return fmt.Sprintf("%s.map(%s, %s).flatten()", cur, x, at(x, i+1))
		case st.Map:
			n++
			k := fmt.Sprintf("k%d", n)
			return fmt.Sprintf("%s.map(%s, %s).flatten()", cur, k, at(cur+"["+k+"]", i+1))
		default:
			next := cur + "." + celField(st.Field)
			return fmt.Sprintf("(has(%s) ? %s : [])", next, at(next, i+1))
		}
	}
	return "(has(object.spec) ? " + at("object.spec", 0) + " : [])"
}

func get(group, resource, name string) string {
	return fmt.Sprintf("authorizer.group('%s').resource('%s').namespace(request.namespace).name(%s).check('get').allowed()", group, resource, name)
}

// celReserved are CEL's reserved words, which a field name must be
// escaped from (Kubernetes' CEL: __name__).
var celReserved = map[string]bool{
	"true": true, "false": true, "null": true, "in": true, "as": true, "break": true, "const": true, "continue": true,
	"else": true, "for": true, "function": true, "if": true, "import": true, "let": true, "loop": true, "package": true,
	"namespace": true, "return": true, "var": true, "void": true, "while": true,
}

// celField is a JSON field name as CEL reads it.
func celField(name string) string {
	if celReserved[name] {
		return "__" + name + "__"
	}
	return name
}
