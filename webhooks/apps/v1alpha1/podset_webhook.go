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

// Package v1alpha1 holds the admission webhooks of the apps.kubeforge.io
// kinds: a defaulter and a validator per kind, as pure functions, and the
// thin adapter that serves them.
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/admit"
	"github.com/kubeforge/kubeforge/internal/validation"
)

// +kubebuilder:webhook:path=/mutate-apps-kubeforge-io-v1alpha1-podset,mutating=true,failurePolicy=fail,sideEffects=None,groups=apps.kubeforge.io,resources=podsets,verbs=create;update,versions=v1alpha1,name=mpodset-v1alpha1.kubeforge.io,admissionReviewVersions=v1,timeoutSeconds=5
// +kubebuilder:webhook:path=/validate-apps-kubeforge-io-v1alpha1-podset,mutating=false,failurePolicy=fail,sideEffects=None,groups=apps.kubeforge.io,resources=podsets,verbs=create;update,versions=v1alpha1,name=vpodset-v1alpha1.kubeforge.io,admissionReviewVersions=v1,timeoutSeconds=5

// SetupPodSetWebhookWithManager serves the PodSet webhooks.
func SetupPodSetWebhookWithManager(mgr ctrl.Manager) error {
	return admit.Register(mgr, &appsv1alpha1.PodSet{}, admit.Kind[*appsv1alpha1.PodSet]{
		Default:        DefaultPodSet,
		ValidateCreate: ValidatePodSet,
		ValidateUpdate: ValidatePodSetUpdate,
	}, "/mutate-apps-kubeforge-io-v1alpha1-podset", "/validate-apps-kubeforge-io-v1alpha1-podset")
}

// DefaultPodSet fills in the defaults of a PodSet: replicas.
func DefaultPodSet(ps *appsv1alpha1.PodSet) {
	if ps.Spec.Replicas == nil {
		r := appsv1alpha1.PodSetDefaultReplicas
		ps.Spec.Replicas = &r
	}
}

// ValidatePodSet returns every problem with a PodSet's spec.
func ValidatePodSet(ps *appsv1alpha1.PodSet) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if r := ps.Spec.Replicas; r != nil && (*r < 0 || *r > appsv1alpha1.PodSetMaxReplicas) {
		errs = append(errs, field.Invalid(spec.Child("replicas"), *r, "must be between 0 and 10000"))
	}
	errs = append(errs, validation.PodTemplate(&ps.Spec.Template, spec.Child("template"), appsv1alpha1.PodSetNameLabel)...)
	return errs
}

// ValidatePodSetUpdate returns every problem with a change to a PodSet.
// Every field of a PodSet may change; the new spec must be valid.
func ValidatePodSetUpdate(_, newPS *appsv1alpha1.PodSet) field.ErrorList {
	return ValidatePodSet(newPS)
}
