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
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
)

// PodTemplate validates what a user writes in a pod template that the
// operator turns into a workload: at least one container, container names
// that are unique DNS labels, an image for each, sane ports and resources,
// and valid labels that do not use any of the reserved keys.
func PodTemplate(t *corev1.PodTemplateSpec, path *field.Path, reservedLabels ...string) field.ErrorList {
	var errs field.ErrorList
	mdPath := path.Child("metadata", "labels")
	errs = append(errs, PodLabels(t.Labels, mdPath)...)
	for _, key := range reservedLabels {
		if _, set := t.Labels[key]; set {
			errs = append(errs, field.Forbidden(mdPath.Key(key), "is set by the operator"))
		}
	}
	specPath := path.Child("spec")
	if len(t.Spec.Containers) == 0 {
		errs = append(errs, field.Required(specPath.Child("containers"), "at least one container is required"))
	}
	names := sets.New[string]()
	errs = append(errs, Containers(t.Spec.InitContainers, specPath.Child("initContainers"), names)...)
	errs = append(errs, Containers(t.Spec.Containers, specPath.Child("containers"), names)...)
	return errs
}

// MaxPodLabels is how many labels a user may give the pods kubeforge
// runs: with the few the operator and Kubernetes add, a Pod stays within
// the labels the manager's cache keeps of a Pod it reads
// (engine.MaxReadLabels, 64), so that its selectors find it.
const MaxPodLabels = 48

// PodLabels validates labels a user gives the pods kubeforge runs.
func PodLabels(labels map[string]string, path *field.Path) field.ErrorList {
	errs := metav1validation.ValidateLabels(labels, path)
	if len(labels) > MaxPodLabels {
		errs = append(errs, field.TooMany(path, len(labels), MaxPodLabels))
	}
	return errs
}

// Containers validates a list of containers. names collects the names seen
// so far, so that init containers and containers share one namespace.
func Containers(cs []corev1.Container, path *field.Path, names sets.Set[string]) field.ErrorList {
	var errs field.ErrorList
	for i := range cs {
		c := &cs[i]
		p := path.Index(i)
		switch {
		case c.Name == "":
			errs = append(errs, field.Required(p.Child("name"), "a container needs a name"))
		case names.Has(c.Name):
			errs = append(errs, field.Duplicate(p.Child("name"), c.Name))
		default:
			for _, msg := range utilvalidation.IsDNS1123Label(c.Name) {
				errs = append(errs, field.Invalid(p.Child("name"), c.Name, msg))
			}
		}
		names.Insert(c.Name)
		if c.Image == "" {
			errs = append(errs, field.Required(p.Child("image"), "a container needs an image"))
		}
		portNames := sets.New[string]()
		for j, port := range c.Ports {
			pp := p.Child("ports").Index(j)
			for _, msg := range utilvalidation.IsValidPortNum(int(port.ContainerPort)) {
				errs = append(errs, field.Invalid(pp.Child("containerPort"), port.ContainerPort, msg))
			}
			if port.Name != "" {
				if portNames.Has(port.Name) {
					errs = append(errs, field.Duplicate(pp.Child("name"), port.Name))
				}
				portNames.Insert(port.Name)
				for _, msg := range utilvalidation.IsValidPortName(port.Name) {
					errs = append(errs, field.Invalid(pp.Child("name"), port.Name, msg))
				}
			}
		}
		errs = append(errs, Resources(&c.Resources, p.Child("resources"))...)
	}
	return errs
}

// Resources checks that no quantity is negative and that no request is
// larger than its limit.
func Resources(r *corev1.ResourceRequirements, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for name, q := range r.Requests {
		if q.Sign() < 0 {
			errs = append(errs, field.Invalid(path.Child("requests").Key(string(name)), q.String(), "must not be negative"))
		}
		if limit, ok := r.Limits[name]; ok && q.Cmp(limit) > 0 {
			errs = append(errs, field.Invalid(path.Child("requests").Key(string(name)), q.String(),
				"must be less than or equal to the limit "+limit.String()))
		}
	}
	for name, q := range r.Limits {
		if q.Sign() < 0 {
			errs = append(errs, field.Invalid(path.Child("limits").Key(string(name)), q.String(), "must not be negative"))
		}
	}
	return errs
}

// NameAtMost refuses an object name longer than max: the names the
// operator derives from it (with a suffix such as -proxy or -home) must
// stay valid.
func NameAtMost(name string, max int) field.ErrorList {
	if len(name) > max {
		return field.ErrorList{field.TooLong(field.NewPath("metadata", "name"), name, max)}
	}
	return nil
}

// ReservedPodLabel says why a label a spec asks for on the Pods kubeforge
// makes is not allowed ("" when it is): kubeforge's own (kubeforge.io/*,
// *.kubeforge.io/*), which its Services, NetworkPolicies and status select
// Pods by — a Pod labelled ide.kubeforge.io/workspace=alice would join
// alice's IDE Service — and the Job controller's, which tie a Pod to a
// Job. The builders drop such labels too, for objects stored before the
// rule.
func ReservedPodLabel(key string) string {
	prefix, name, found := strings.Cut(key, "/")
	if !found {
		name, prefix = prefix, ""
	}
	switch {
	case prefix == "kubeforge.io" || strings.HasSuffix(prefix, ".kubeforge.io"):
		return "kubeforge selects its own Pods by its labels; they are set by kubeforge only"
	case prefix == "batch.kubernetes.io" || (prefix == "" && (name == "job-name" || name == "controller-uid")):
		return "the Job controller's labels tie a Pod to a Job; they are set by Kubernetes only"
	}
	return ""
}

// ReservedPodLabels returns a field error for each reserved label in
// labels that was not already in before with the same value.
func ReservedPodLabels(labels, before map[string]string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		if why := ReservedPodLabel(k); why != "" {
			if old, ok := before[k]; ok && old == labels[k] {
				continue
			}
			errs = append(errs, field.Forbidden(p.Key(k), why))
		}
	}
	return errs
}

// PodSetTransition are the rules a new PodSet, or a change of its pod
// labels, must pass while PodSets stored before them stay valid: no
// reserved Pod label (the builder drops those of a stored one).
func PodSetTransition(oldPS, newPS *appsv1alpha1.PodSet) field.ErrorList {
	var before map[string]string
	if oldPS != nil {
		before = oldPS.Spec.Template.Labels
	}
	return ReservedPodLabels(newPS.Spec.Template.Labels, before, field.NewPath("spec", "template", "metadata", "labels"))
}
