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
	"k8s.io/apimachinery/pkg/util/validation/field"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
)

// PodSet returns every problem with a PodSet's spec.
func PodSet(ps *appsv1alpha1.PodSet) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if r := ps.Spec.Replicas; r != nil && (*r < 0 || *r > appsv1alpha1.PodSetMaxReplicas) {
		errs = append(errs, field.Invalid(spec.Child("replicas"), *r, "must be between 0 and 10000"))
	}
	errs = append(errs, PodTemplate(&ps.Spec.Template, spec.Child("template"), appsv1alpha1.PodSetNameLabel)...)
	return errs
}

// PodSetUpdate returns every problem with a change to a PodSet.
// Every field of a PodSet may change; the new spec must be valid.
func PodSetUpdate(_, newPS *appsv1alpha1.PodSet) field.ErrorList {
	return PodSet(newPS)
}
