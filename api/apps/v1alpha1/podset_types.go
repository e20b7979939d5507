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

package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// PodSetDefaultReplicas is the number of pods a PodSet runs when
	// spec.replicas is not given.
	PodSetDefaultReplicas int32 = 1
	// PodSetMaxReplicas is the largest spec.replicas a PodSet accepts.
	PodSetMaxReplicas int32 = 10000

	// PodSetNameLabel is set by the operator on every pod of a PodSet, with
	// the PodSet's name as value. The PodSet's selector is derived from it;
	// a pod template may not set it.
	PodSetNameLabel = "apps.kubeforge.io/podset"
)

// PodSetSpec is the desired state of a PodSet.
type PodSetSpec struct {
	// replicas is the number of identical pods to run. It is the field that
	// `kubectl scale` and a HorizontalPodAutoscaler change. Defaults to 1.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10000
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// template describes the pods to run. The operator adds the label
	// apps.kubeforge.io/podset=<name> and the app.kubernetes.io labels to it
	// and derives the selector from them, so the template needs no labels of
	// its own (at most 48). At least one container is required. A template below Pod
	// Security's restricted level takes the right to use the level it
	// passes: verb "use" on podsecuritylevels named "baseline" or
	// "privileged" in the kubeforge.io group, in the PodSet's namespace
	// (docs/podset.md).
	// +kubebuilder:validation:XValidation:rule="has(self.spec) && size(self.spec.containers) > 0",message="template.spec.containers must list at least one container"
	// +kubebuilder:validation:XValidation:rule="!has(self.metadata) || !has(self.metadata.labels) || !('apps.kubeforge.io/podset' in self.metadata.labels)",message="the label apps.kubeforge.io/podset is set by the operator and may not be set in the template"
	Template corev1.PodTemplateSpec `json:"template"`
}

// PodSetStatus is the observed state of a PodSet.
type PodSetStatus struct {
	// observedGeneration is the metadata.generation that this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// replicas is the number of pods that currently exist for this PodSet
	// (from its Deployment). It is the scale subresource's status replicas.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// readyReplicas is the number of pods whose Ready condition is true.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`

	// availableReplicas is the number of pods that have been ready for at
	// least the template's minReadySeconds.
	// +optional
	AvailableReplicas int32 `json:"availableReplicas,omitempty"`

	// podNames lists the names of the PodSet's active pods (not being
	// deleted, not Succeeded or Failed), sorted: those of its Deployment's
	// ReplicaSets (by their controllers' UIDs, as Kubernetes counts them),
	// not every pod that carries its labels.
	// +optional
	// +listType=atomic
	PodNames []string `json:"podNames,omitempty"`

	// selector is the label selector of the PodSet's pods in string form
	// (the scale subresource's selector, used by HorizontalPodAutoscalers).
	// +optional
	Selector string `json:"selector,omitempty"`

	// conditions: Ready (all desired pods are available and the rollout is
	// complete), Progressing (a rollout or scale is under way) and Degraded
	// (the PodSet cannot reach its desired state; the reason says why).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// PodSet runs a scalable set of identical pods (a Deployment underneath) and
// reports their names. It supports `kubectl scale` and HorizontalPodAutoscalers
// through the scale subresource.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:resource:shortName=pset,categories=kubeforge
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=`.spec.replicas`,description="Desired number of pods"
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.readyReplicas`,description="Pods that are ready"
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1,description="Reason of the Ready condition"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type PodSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the PodSet.
	// +required
	Spec PodSetSpec `json:"spec"`

	// status is the observed state of the PodSet, written by the operator.
	// +optional
	Status PodSetStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// PodSetList is a list of PodSets.
type PodSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PodSet `json:"items"`
}

func init() {
	SchemeBuilder.Register(&PodSet{}, &PodSetList{})
}
