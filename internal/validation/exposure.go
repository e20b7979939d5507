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

package validation

import (
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/pod-security-admission/api"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
)

// What a kubeforge object exposes outside its namespace through objects
// the operator makes for it — an Ingress (and its host), a cert-manager
// Certificate (and its issuer), a Service of type NodePort or LoadBalancer
// — is the requester's right, not the operator's: admission asks whether
// the requester may create such objects themselves, and the
// administrator's Policy can narrow hosts and issuers further. Found by
// rule over the API types, like References:
//
//   - a struct whose type name ends in "Ingress" with a Host: an Ingress;
//   - an IssuerReference: a Certificate from that issuer;
//   - a corev1.ServiceType field set to NodePort or LoadBalancer;
//   - a PodSecurity field (appsv1alpha1) set to Baseline: pods that run
//     as their images say, not restricted, which takes the right to "use"
//     the level (PodSecurityLevelResource), as PodSecurityPolicies once
//     took "use" of a policy;
//   - a pod or a pod template the spec writes whole (a PodSet's) that does
//     not pass Pod Security's restricted level: the right to "use" the
//     level it passes, baseline or privileged (podsecurity.go);
//   - a struct whose WorkloadType field is StatefulSet and whose Storage
//     field is set: a StatefulSet's volumes, claims its controller finds
//     by name (data-<workload>-<ordinal>) or makes — any claim of that
//     name, which kubeforge cannot prove it made (a claim kept from a
//     deleted Platform, one another tenant made). Its pods may mount only
//     what the requester could mount themselves: it takes the rights to
//     get any claim of the namespace and to create pods there;
//   - an InstallerVariables (clusterv1alpha1) variable that is not plain
//     (PlainInstallerVariable): the installer's playbooks run commands,
//     include files and delegate to hosts that their variables name —
//     code in the installer's Pod. Such a variable takes the right to
//     create pods in the namespace, which runs any code anyway;
//   - a claim whose binding the spec chooses — a struct with a
//     StorageClassName (*string) set to "", or a VolumeName or a Selector
//     beside it set (a PersistentVolumeClaimSpec, such as an ephemeral
//     volume's; a Workspace's or a Platform component's storage): it binds
//     a volume that exists already, with the data on it, where a claim
//     without them gets a new one. Which volume a claim binds is the right
//     of who may create claims: it takes the right to create
//     persistentvolumeclaims in the namespace.

// Exposure is one thing a spec exposes.
type Exposure struct {
	// Group and Resource are what the operator creates for it, or, with
	// Verb and Name, the right it takes (verb on that named object).
	Group, Resource string
	Verb, Name      string
	// OrNames are other names of Resource whose Verb grants it as well:
	// a higher Pod Security level grants a lower one.
	OrNames []string
	// Host is an Ingress's host; Issuer a Certificate's "Kind/name";
	// ServiceType a Service's type.
	Host, Issuer, ServiceType string
	// Why says, for a right (Verb), what the operator would do with it.
	Why  string
	Path *field.Path
}

var issuerReference = reflect.TypeFor[idev1alpha1.IssuerReference]()
var serviceType = reflect.TypeFor[corev1.ServiceType]()
var podSecurity = reflect.TypeFor[appsv1alpha1.PodSecurity]()
var workloadType = reflect.TypeFor[appsv1alpha1.WorkloadType]()
var installerVariables = reflect.TypeFor[clusterv1alpha1.InstallerVariables]()
var stringPointer = reflect.TypeFor[*string]()
var labelSelectorPointer = reflect.TypeFor[*metav1.LabelSelector]()

// bindingPlan is where a struct type holds a claim's binding: its
// StorageClassName (*string), and beside it a VolumeName (string) and a
// Selector (*metav1.LabelSelector), each -1 when it has none; ok when it
// has the first. The JSON names are for the field paths.
type bindingPlan struct {
	class, volume, selector             int
	className, volumeName, selectorName string
	ok                                  bool
}

// bindingPlans are, per struct type, its bindingPlan.
var bindingPlans = &typePlans[bindingPlan]{MakePlan: func(t reflect.Type) bindingPlan {
	p := bindingPlan{class: -1, volume: -1, selector: -1}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _ := jsonName0(f)
		switch {
		case f.Name == "StorageClassName" && f.Type == stringPointer:
			p.class, p.className = i, name
		case f.Name == "VolumeName" && f.Type.Kind() == reflect.String:
			p.volume, p.volumeName = i, name
		case f.Name == "Selector" && f.Type == labelSelectorPointer:
			p.selector, p.selectorName = i, name
		}
	}
	p.ok = p.class >= 0 && p.className != ""
	return p
}}

// boundVolumes returns the exposures of struct v's claim binding: the
// fields of it that choose a volume that exists.
func boundVolumes(v reflect.Value, p *field.Path) []Exposure {
	plan := bindingPlans.Of(v.Type())
	if !plan.ok {
		return nil
	}
	const why = "which choosing the volume a claim binds takes: an empty storageClassName, a volumeName or a selector " +
		"binds a volume that exists already, with its data, so may not set it (leave them out for a new volume of the class, or the default class)"
	var out []Exposure
	if c := v.Field(plan.class); !c.IsNil() && c.Elem().String() == "" {
		out = append(out, Exposure{Resource: "persistentvolumeclaims", Verb: "create", Why: why, Path: p.Child(plan.className)})
	}
	if plan.volume >= 0 && plan.volumeName != "" && v.Field(plan.volume).String() != "" {
		out = append(out, Exposure{Resource: "persistentvolumeclaims", Verb: "create", Why: why, Path: p.Child(plan.volumeName)})
	}
	if plan.selector >= 0 && plan.selectorName != "" && !v.Field(plan.selector).IsNil() {
		out = append(out, Exposure{Resource: "persistentvolumeclaims", Verb: "create", Why: why, Path: p.Child(plan.selectorName)})
	}
	return out
}

var volumeSource = reflect.TypeFor[corev1.VolumeSource]()

// ClaimVolumeSources are the sources of a Pod's volume (JSON names) that
// mount no storage that exists already except through a claim, or that
// only project the namespace's own objects: those Pod Security's
// restricted level allows, but csi. Any other source — an inline csi
// volume (an NFS share its attributes name), nfs, hostPath, iscsi, a cloud
// disk — mounts storage directly, with no claim for the namespace's quota
// and RBAC to stand between: only who may create pods may have one.
var ClaimVolumeSources = []string{"configMap", "downwardAPI", "emptyDir", "ephemeral", "image", "persistentVolumeClaim", "projected", "secret"}

// volumeSourceFields are VolumeSource's fields, one per source.
var volumeSourceFields = serialisedFields(volumeSource, func(reflect.Type) bool { return true })

// directVolumes returns the exposures of a VolumeSource v: a source that
// is not one of ClaimVolumeSources takes the right to create pods.
func directVolumes(v reflect.Value, p *field.Path) []Exposure {
	var out []Exposure
	for _, f := range volumeSourceFields {
		fv := v.Field(f.index)
		if fv.Kind() != reflect.Pointer || fv.IsNil() || slices.Contains(ClaimVolumeSources, f.name) {
			continue
		}
		out = append(out, Exposure{Resource: "pods", Verb: "create", Path: p.Child(f.name),
			Why: "which a volume that mounts storage directly takes: a " + f.name + " volume mounts what it names with no claim, " +
				"so may not have kubeforge mount one (use a claim, or an ephemeral volume of a storage class)"})
	}
	return out
}

// claimTemplateMetadata is the claim-binding exposure of a claim (or a
// claim template) whose metadata carries labels or annotations: the
// legacy class annotation (volume.beta.kubernetes.io/storage-class, read
// before spec.storageClassName; "" binds any Available volume without a
// class), and what provisioners read to place a volume — a path pattern
// of ${.PVC.annotations...} or ${.PVC.labels...} (nfs-subdir, local-path)
// reuses a directory that exists, with its data. Who may create claims
// may write them; a claim made for the spec gets none otherwise.
func claimTemplateMetadata(v reflect.Value, p *field.Path) []Exposure {
	if !claimTemplate(v.Type()) {
		return nil
	}
	const why = "which choosing the volume a claim binds takes: a claim's labels and annotations name its class (the legacy class annotation) " +
		"or where a provisioner places its volume (a directory that exists, with its data), so may not set them (name a class in spec.storageClassName)"
	meta := v.FieldByName("ObjectMeta").Interface().(metav1.ObjectMeta)
	var out []Exposure
	for _, k := range slices.Sorted(maps.Keys(meta.Annotations)) {
		out = append(out, Exposure{Resource: "persistentvolumeclaims", Verb: "create", Path: p.Child("metadata", "annotations").Key(k), Why: why})
	}
	for _, k := range slices.Sorted(maps.Keys(meta.Labels)) {
		out = append(out, Exposure{Resource: "persistentvolumeclaims", Verb: "create", Path: p.Child("metadata", "labels").Key(k), Why: why})
	}
	return out
}

// claimTemplate reports whether t is a claim or a claim template: an
// ObjectMeta beside a PersistentVolumeClaimSpec Spec.
func claimTemplate(t reflect.Type) bool { return objectOf(t, claimSpecType) }

// objectOf reports whether struct type t is an object (or an object's
// template) of spec type spec: an ObjectMeta beside a Spec of that type.
func objectOf(t reflect.Type, spec reflect.Type) bool {
	m, ok := t.FieldByName("ObjectMeta")
	if !ok || m.Type != objectMetaType {
		return false
	}
	s, ok := t.FieldByName("Spec")
	return ok && s.Type == spec
}

var (
	objectMetaType = reflect.TypeFor[metav1.ObjectMeta]()
	claimSpecType  = reflect.TypeFor[corev1.PersistentVolumeClaimSpec]()
)

// PlainInstallerVariables are the installer variables that are data to
// kubespray and kubeforge's own playbooks — a choice among built-in
// alternatives, a number, a switch — never a command, a file, a URL or a
// host: with a plain value (plainInstallerValue) anyone who may create
// the cluster may set them.
var PlainInstallerVariables = []string{
	"container_manager", "kube_proxy_mode", "kube_proxy_strict_arp", "dns_mode", "enable_nodelocaldns",
	"etcd_deployment_type", "kubelet_max_pods", "kube_network_node_prefix", "auto_renew_certificates",
	"minimal_master_memory_mb", "minimal_node_memory_mb", "kubeforge_min_disk_gb", "kubeforge_max_clock_skew_seconds",
}

// plainInstallerValue is a plain variable's value: one word, no path.
var plainInstallerValue = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

// PlainInstallerVariable reports whether the installer variable name,
// set to value, is plain: one of PlainInstallerVariables, with a plain value.
func PlainInstallerVariable(name, value string) bool {
	return slices.Contains(PlainInstallerVariables, name) && plainInstallerValue.MatchString(value)
}

// statefulPlan is where a struct type holds what makes it a StatefulSet
// with storage: its WorkloadType field and its Storage pointer (ok when it
// has both), and the Storage field's JSON name.
type statefulPlan struct {
	workload, storage int
	name              string
	ok                bool
}

// statefulPlans are, per struct type, its statefulPlan: the fields are
// looked up once per type, not on every walk.
var statefulPlans = &typePlans[statefulPlan]{MakePlan: func(t reflect.Type) statefulPlan {
	p := statefulPlan{workload: -1, storage: -1}
	for i := 0; i < t.NumField(); i++ {
		switch f := t.Field(i); {
		case f.Type == workloadType && p.workload < 0:
			p.workload = i
		case f.Name == "Storage" && f.Type.Kind() == reflect.Pointer:
			p.storage = i
			p.name, _ = jsonName0(f)
		}
	}
	p.ok = p.workload >= 0 && p.storage >= 0 && p.name != ""
	return p
}}

// statefulStorage reports whether struct v runs as a StatefulSet with
// storage (its WorkloadType field set to StatefulSet, its Storage field
// set), and the Storage field's JSON name.
func statefulStorage(v reflect.Value) (string, bool) {
	p := statefulPlans.Of(v.Type())
	if !p.ok || appsv1alpha1.WorkloadType(v.Field(p.workload).String()) != appsv1alpha1.WorkloadStatefulSet || v.Field(p.storage).IsNil() {
		return "", false
	}
	return p.name, true
}

// PodSecurityLevelGroup and PodSecurityLevelResource name the right to
// have kubeforge run pods at a level below restricted: verb "use" on the
// level's name in lower case ("baseline"), in the object's namespace. No
// such resource is served; RBAC grants it as it grants any verb.
const (
	PodSecurityLevelGroup    = "kubeforge.io"
	PodSecurityLevelResource = "podsecuritylevels"
)

// Exposures walks v (a spec) and returns what it exposes.
func Exposures(v any, root *field.Path) []Exposure {
	var out []Exposure
	exposures(reflect.ValueOf(v), root, &out)
	return out
}

func exposures(v reflect.Value, p *field.Path, out *[]Exposure) {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			exposures(v.Index(i), p.Index(i), out)
		}
	case reflect.Map:
		if v.Type() != installerVariables {
			return
		}
		vars := v.Interface().(clusterv1alpha1.InstallerVariables)
		for _, name := range slices.Sorted(maps.Keys(vars)) {
			if !PlainInstallerVariable(name, vars[name]) {
				*out = append(*out, Exposure{Resource: "pods", Verb: "create", Path: p.Key(name),
					Why: "which an installer variable that is not a plain setting takes: the installer's playbooks run what their variables name, " +
						"so may not set it (plain: " + strings.Join(PlainInstallerVariables, ", ") + ", each to one word)"})
			}
		}
	case reflect.String:
		switch v.Type() {
		case serviceType:
			if t := corev1.ServiceType(v.String()); t == corev1.ServiceTypeNodePort || t == corev1.ServiceTypeLoadBalancer {
				*out = append(*out, Exposure{Group: "", Resource: "services", ServiceType: string(t), Path: p})
			}
		case podSecurity:
			// Unset is a component stored before the field, which runs as
			// Baseline (admission makes every new one Restricted): a change
			// of it takes what Baseline takes, so that nobody without the
			// right changes what runs as root.
			switch l := appsv1alpha1.PodSecurity(v.String()); l {
			case appsv1alpha1.PodSecurityBaseline:
				*out = append(*out, Exposure{Group: PodSecurityLevelGroup, Resource: PodSecurityLevelResource,
					Verb: "use", Name: strings.ToLower(string(l)), OrNames: levelsAbove(api.LevelBaseline), Path: p,
					Why: "so may not have kubeforge run pods below Pod Security's restricted level"})
			case "":
				*out = append(*out, Exposure{Group: PodSecurityLevelGroup, Resource: PodSecurityLevelResource,
					Verb: "use", Name: strings.ToLower(string(appsv1alpha1.PodSecurityBaseline)), OrNames: levelsAbove(api.LevelBaseline), Path: p,
					Why: "which a component without podSecurity (stored before the field) runs as, so may not change what it runs: " +
						"set podSecurity: Restricted"})
			}
		}
	case reflect.Struct:
		t := v.Type()
		switch {
		case t == issuerReference:
			ref := v.Interface().(idev1alpha1.IssuerReference)
			kind := ref.Kind
			if kind == "" {
				kind = "Issuer"
			}
			*out = append(*out, Exposure{Group: "cert-manager.io", Resource: "certificates", Issuer: kind + "/" + ref.Name, Path: p})
			return
		case strings.HasSuffix(t.Name(), "Ingress"):
			if h := v.FieldByName("Host"); h.IsValid() && h.Kind() == reflect.String {
				*out = append(*out, Exposure{Group: "networking.k8s.io", Resource: "ingresses", Host: h.String(), Path: p.Child("host")})
			}
			// Hosts an ingress controller serves besides the Ingress's
			// own, named in its annotations: hosts all the same.
			// (One that is refused never reaches the controller: nothing to ask.)
			if f := v.FieldByName("Annotations"); f.IsValid() && f.CanInterface() && f.Type() == reflect.TypeFor[map[string]string]() {
				a := f.Interface().(map[string]string)
				for _, k := range slices.Sorted(maps.Keys(a)) {
					if !IngressHostAnnotation(k) || ForbiddenIngressAnnotation(k, a[k]) != "" {
						continue
					}
					for _, h := range annotationHosts(a[k]) {
						*out = append(*out, Exposure{Group: "networking.k8s.io", Resource: "ingresses", Host: h, Path: p.Child("annotations").Key(k)})
					}
				}
			}
		}
		switch {
		case podTemplate(t):
			// The pod's own metadata counts (its AppArmor annotations), so
			// it is held to Pod Security here, and its spec's fields walked
			// without being held again.
			meta, spec := v.FieldByName("ObjectMeta").Interface().(metav1.ObjectMeta), v.FieldByName("Spec").Interface().(corev1.PodSpec)
			*out = append(*out, podBelowRestricted(&meta, &spec, p.Child("spec"))...)
			for _, f := range exposurePlan(t) {
				fv, fp := v.Field(f.index), p
				if !f.inline {
					fp = p.Child(f.name)
				}
				if fv.Type() == podSpecType {
					exposureFields(fv, fp, out)
					continue
				}
				exposures(fv, fp, out)
			}
			return
		case t == podSpecType:
			spec := v.Interface().(corev1.PodSpec)
			*out = append(*out, podBelowRestricted(&metav1.ObjectMeta{}, &spec, p)...)
		}
		*out = append(*out, boundVolumes(v, p)...)
		*out = append(*out, claimTemplateMetadata(v, p)...)
		if t == volumeSource {
			*out = append(*out, directVolumes(v, p)...)
		}
		if name, ok := statefulStorage(v); ok {
			why := "which a StatefulSet's volumes take: its controller mounts any claim named data-<workload>-<ordinal>, " +
				"which kubeforge cannot prove it made, so may not have kubeforge run a StatefulSet with storage"
			*out = append(*out,
				Exposure{Resource: "persistentvolumeclaims", Verb: "get", Why: why, Path: p.Child(name)},
				Exposure{Resource: "pods", Verb: "create", Why: why, Path: p.Child(name)})
		}
		exposureFields(v, p, out)
	}
}

// exposureFields walks the fields of struct v (at p) that can hold an
// exposure.
func exposureFields(v reflect.Value, p *field.Path, out *[]Exposure) {
	for _, f := range exposurePlan(v.Type()) {
		fp := p
		if !f.inline {
			fp = p.Child(f.name)
		}
		exposures(v.Field(f.index), fp, out)
	}
}

// exposureField is a field of a struct type that can hold an exposure.
type exposureField struct {
	index  int
	name   string
	inline bool
}

// exposurePlans are, per struct type, its exported, serialised fields
// whose values can hold an exposure: the walker visits only those.
var exposurePlans = &typePlans[[]exposureField]{}

func init() { exposurePlans.MakePlan = planExposures }

// exposurePlan is struct type t's plan.
func exposurePlan(t reflect.Type) []exposureField { return exposurePlans.Of(t) }

// planExposures makes t's plan (exposurePlans.mu held).
func planExposures(t reflect.Type) []exposureField { return serialisedFields(t, canExpose) }

// serialisedFields are struct type t's exported, serialised fields whose
// type keep takes.
func serialisedFields(t reflect.Type, keep func(reflect.Type) bool) []exposureField {
	var out []exposureField
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, inline := jsonName0(f)
		if name == "-" || !keep(f.Type) {
			continue
		}
		out = append(out, exposureField{index: i, name: name, inline: inline})
	}
	return out
}

// canExpose reports whether a value of type t can hold an exposure, as
// exposures walks it (maps it does not walk); exposurePlans.mu is held.
func canExpose(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Map:
		return t == installerVariables
	case reflect.String:
		return t == serviceType || t == podSecurity
	case reflect.Interface:
		return true
	case reflect.Struct:
		// A recursive type still being planned can.
		if t == issuerReference || t == volumeSource || t == podSpecType || strings.HasSuffix(t.Name(), "Ingress") || statefulPlans.Of(t).ok || bindingPlans.Of(t).ok ||
			claimTemplate(t) || podTemplate(t) || exposurePlans.Planning(t) {
			return true
		}
		return len(exposurePlans.Locked(t)) > 0
	}
	return false
}

// Policy is what the operator's administrator allows beyond each
// requester's own rights (manager flags, docs/operations.md).
type Policy struct {
	// IngressHosts are the host patterns Ingresses may use ("*.example.com"
	// matches a name of one label or more under example.com); empty allows
	// any host, wildcard hosts included.
	IngressHosts []string
	// WildcardHosts are the wildcard hosts ("*.team-a.example.com")
	// Ingresses may use when IngressHosts is set, each exactly as listed:
	// a pattern of IngressHosts grants names, not wildcards. A wildcard
	// host serves every name under it no other Ingress claims, and its
	// certificate is valid for every other tenant's host there.
	WildcardHosts []string
	// Issuers are the cert-manager issuers ("ClusterIssuer/letsencrypt",
	// "Issuer/name") Certificates may come from; empty allows any.
	Issuers []string
	// AnonymousIngress lets a Workspace with auth.mode None have an Ingress.
	AnonymousIngress bool
}

// Rules returns the policy as field rules on a spec (for admit's With).
func (pol Policy) Rules(spec any, root *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, e := range Exposures(spec, root) {
		switch {
		case e.Host != "" && len(pol.IngressHosts) > 0 && strings.HasPrefix(e.Host, "*."):
			// Granted by name only, whatever the patterns.
			if slices.Contains(lower(pol.WildcardHosts), strings.ToLower(e.Host)) {
				continue
			}
			allowed := "none"
			if len(pol.WildcardHosts) > 0 {
				allowed = strings.Join(pol.WildcardHosts, ", ") + " only"
			}
			errs = append(errs, field.Forbidden(e.Path, "a wildcard host serves every name under it and takes a certificate valid for all of them: "+
				"the administrator allows the wildcard hosts "+allowed+" (a pattern of the Ingress hosts, "+strings.Join(pol.IngressHosts, ", ")+", grants names, not wildcards)"))
		case e.Host != "" && len(pol.IngressHosts) > 0 && !hostAllowed(pol.IngressHosts, e.Host):
			errs = append(errs, field.Forbidden(e.Path, "the administrator allows Ingress hosts "+strings.Join(pol.IngressHosts, ", ")+" only"))
		case e.Issuer != "" && len(pol.Issuers) > 0 && !slices.Contains(pol.Issuers, e.Issuer):
			errs = append(errs, field.Forbidden(e.Path, "the administrator allows the issuers "+strings.Join(pol.Issuers, ", ")+" only"))
		}
	}
	return errs
}

func lower(list []string) []string {
	out := make([]string, len(list))
	for i, v := range list {
		out[i] = strings.ToLower(v)
	}
	return out
}

// hostAllowed reports whether host, a DNS name (a "*." wildcard allowed),
// matches one of patterns. Anything else — a regular expression an
// ingress controller would take as a pattern of hosts — matches none.
func hostAllowed(patterns []string, host string) bool {
	if !dnsHost(host) {
		return false
	}
	host = strings.ToLower(host)
	for _, p := range patterns {
		p = strings.ToLower(p)
		if rest, ok := strings.CutPrefix(p, "*."); ok {
			if strings.HasSuffix(host, "."+rest) {
				return true
			}
			continue
		}
		if p == host {
			return true
		}
	}
	return false
}

// IngressHostAnnotation reports whether an Ingress annotation's value is
// hosts an ingress controller serves besides the Ingress's own: any key
// whose name (after the prefix) says "alias" — ingress-nginx's and
// HAProxy's server-alias (and -regex), Kong's host-aliases, the legacy
// ingress.kubernetes.io/server-alias — whatever the controller. Each host
// is an Ingress host for admission and the administrator's Policy, and
// must be a DNS name (ForbiddenIngressAnnotation). A name that is just
// "alias" is a switch, not hosts (external-dns's alias: "true").
func IngressHostAnnotation(key string) bool {
	name := strings.ToLower(annotationName(key))
	return strings.Contains(name, "alias") && name != "alias"
}

// annotationHosts are the hosts of a host annotation's value, separated
// by commas or spaces.
func annotationHosts(value string) []string {
	return strings.FieldsFunc(value, func(r rune) bool { return r == ',' || r == ' ' })
}

// dnsHost reports whether host is a DNS name, or "*." and one.
func dnsHost(host string) bool {
	return len(utilvalidation.IsDNS1123Subdomain(strings.ToLower(strings.TrimPrefix(host, "*.")))) == 0
}

func annotationName(key string) string {
	if _, name, ok := strings.Cut(key, "/"); ok {
		return name
	}
	return key
}

// ForbiddenIngressAnnotation reports why an Ingress annotation (key set
// to value) a spec asks for is refused, "" when it is allowed:
//   - kubeforge's own (kubeforge.io/*);
//   - snippets (*snippet*), which run as configuration of the shared
//     ingress controller;
//   - those that have a certificate issued past admission's check of the
//     issuer: a name with "issuer" (cert-manager's issuer, cluster-issuer,
//     issuer-kind, issuer-group), "acme" (kubernetes.io/tls-acme, which
//     cert-manager and others take as "issue one from the default
//     issuer"), "certresolver" or "tls.domains" (Traefik's ACME
//     resolvers). acme.cert-manager.io/http01-* only places a challenge
//     solver and stays allowed;
//   - a name with "regex", and a host annotation (IngressHostAnnotation)
//     with a value that is not DNS names: a regular expression would
//     match hosts no Policy can hold it to.
//
// The Ingress builders drop such annotations too, so that a value stored
// before the rule never reaches the controller.
func ForbiddenIngressAnnotation(key, value string) string {
	prefix, _, _ := strings.Cut(key, "/")
	if prefix == key {
		prefix = ""
	}
	name := strings.ToLower(annotationName(key))
	switch {
	case prefix == "kubeforge.io" || strings.HasSuffix(prefix, ".kubeforge.io"):
		return "kubeforge's own annotations are set by kubeforge only"
	case strings.Contains(name, "snippet"):
		return "snippet annotations run as configuration of the shared ingress controller"
	case strings.Contains(name, "regex"):
		return "a regular expression of hosts (server-alias-regex) matches hosts no Policy can hold it to: name the hosts"
	case strings.Contains(name, "issuer") || strings.Contains(name, "acme") || strings.Contains(name, "certresolver") || strings.Contains(name, "tls.domains"):
		return "an annotation that has the ingress controller or cert-manager issue a certificate would do it past admission's checks of the issuer: " +
			"use ingress.tls.issuerRef, which is checked"
	case IngressHostAnnotation(key):
		hosts := annotationHosts(value)
		if len(hosts) == 0 {
			return "names no host: hosts, separated by commas"
		}
		for _, h := range hosts {
			if !dnsHost(h) {
				return fmt.Sprintf("%q is not a DNS name (a leading \"*.\" allowed): the hosts an ingress controller serves by annotation "+
					"are held to the same rules as ingress.host, which a pattern escapes", h)
			}
		}
	}
	return ""
}
