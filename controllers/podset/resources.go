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

package podset

import (
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/engine"
	"github.com/kubeforge/kubeforge/internal/validation"
)

// component is the app.kubernetes.io/component of a PodSet's objects.
const component = "podset"

// SelectorLabels are the labels that select a PodSet's pods. They derive
// from the name alone, so the Deployment's (immutable) selector never changes.
func SelectorLabels(ps *appsv1alpha1.PodSet) map[string]string {
	return map[string]string{appsv1alpha1.PodSetNameLabel: ps.Name}
}

// Selector is SelectorLabels in string form, as the scale subresource wants it.
func Selector(ps *appsv1alpha1.PodSet) string {
	return labels.SelectorFromSet(SelectorLabels(ps)).String()
}

// DesiredObjects are the objects a PodSet owns: one Deployment.
func DesiredObjects(ps *appsv1alpha1.PodSet) []client.Object {
	return []client.Object{Deployment(ps)}
}

// Deployment builds the PodSet's Deployment: the user's pod template with
// the operator's labels added, and the selector derived from the name.
// ps is defaulted (admit.Prepare).
func Deployment(ps *appsv1alpha1.PodSet) *appsv1.Deployment {
	replicas := *ps.Spec.Replicas
	tmpl := ps.Spec.Template.DeepCopy()
	// Only labels and annotations of the template's metadata reach the
	// Pods (the CRD keeps no more; this holds if it ever did).
	tmpl.ObjectMeta = metav1.ObjectMeta{Labels: tmpl.Labels, Annotations: tmpl.Annotations}
	podLabels := map[string]string{}
	for k, v := range tmpl.Labels {
		if validation.ReservedPodLabel(k) == "" { // kubeforge's and the Job controller's labels are theirs
			podLabels[k] = v
		}
	}
	for k, v := range engine.CommonLabels(ps, component) {
		podLabels[k] = v
	}
	for k, v := range SelectorLabels(ps) {
		podLabels[k] = v
	}
	tmpl.Labels = podLabels

	return &appsv1.Deployment{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      ps.Name,
			Namespace: ps.Namespace,
			Labels:    engine.CommonLabels(ps, component),
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: SelectorLabels(ps)},
			Template: *tmpl,
		},
	}
}
