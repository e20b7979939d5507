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
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

const (
	// BalancerDefaultImage is the nginx image of the proxy when spec.image
	// is not given. Its nginx has the stream module built in.
	BalancerDefaultImage = "docker.io/library/nginx:1.27.3-alpine"
	// BalancerDefaultReplicas is the number of proxy pods when
	// spec.replicas is not given.
	BalancerDefaultReplicas int32 = 1
	// BalancerDefaultWeight is a backend's weight when it is not given.
	BalancerDefaultWeight int32 = 1
	// BalancerMaxWeight is the largest weight of one backend.
	BalancerMaxWeight int32 = 1000
	// BalancerDefaultMaxFails is how many failed connection attempts to a
	// backend, within BalancerDefaultFailTimeout, take it out of the
	// rotation when spec.passiveHealth.maxFails is not given.
	BalancerDefaultMaxFails int32 = 3
	// BalancerMaxMaxFails is the largest passiveHealth.maxFails.
	BalancerMaxMaxFails int32 = 100

	// BalancerProxyLabel is set on the proxy pods, with the Balancer's
	// name as value; the front-end Service selects them by it.
	BalancerProxyLabel = "networking.kubeforge.io/balancer-proxy"
	// BalancerLabel is set on the backend Services (and so on their
	// EndpointSlices, which copy the Service's labels), with the
	// Balancer's name as value.
	BalancerLabel = "networking.kubeforge.io/balancer"
	// BalancerBackendLabel names the backend on its backend Service.
	BalancerBackendLabel = "networking.kubeforge.io/backend"
	// ConfigHashAnnotation on the proxy's pod template is a digest of
	// nginx.conf: a configuration change rolls the proxy.
	ConfigHashAnnotation = "networking.kubeforge.io/config-hash"
)

// BalancerDefaultFailTimeout is passiveHealth.failTimeout when it is not given.
var BalancerDefaultFailTimeout = metav1.Duration{Duration: 10 * time.Second}

// SessionAffinity says whether a client keeps to one backend.
// +kubebuilder:validation:Enum=None;ClientIP
type SessionAffinity string

// The session affinities of a Balancer.
const (
	// SessionAffinityNone spreads every new connection by weight.
	SessionAffinityNone SessionAffinity = "None"
	// SessionAffinityClientIP sends every connection of one client address
	// to the same backend, by a consistent hash of the address that gives
	// each backend its weight's share of the clients.
	SessionAffinityClientIP SessionAffinity = "ClientIP"
)

// BalancerSpec is the desired state of a Balancer.
// +kubebuilder:validation:XValidation:rule="self.backends.exists(b, !has(b.weight) || b.weight > 0)",message="the weights of the backends must add up to more than 0"
// +kubebuilder:validation:XValidation:rule="(has(self.selector) && size(self.selector) > 0) || self.backends.all(b, has(b.selector) && size(b.selector) > 0)",message="give spec.selector, or a selector on every backend",fieldPath=".selector"
type BalancerSpec struct {
	// selector holds labels that every backend pod carries, e.g. app: shop.
	// Each backend adds its own selector to it. It may be left out when
	// every backend has a selector of its own.
	// +optional
	Selector map[string]string `json:"selector,omitempty"`

	// backends are the named groups of pods that share the traffic by
	// weight: a canary at 10%, a blue/green switch, an A/B split. Each gets
	// a Service <balancer>-<backend>.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +listType=map
	// +listMapKey=name
	// +required
	Backends []BalancerBackend `json:"backends"`

	// ports are the ports the front end exposes; each is balanced on its own.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:XValidation:rule="self.all(p, self.exists_one(q, q.port == p.port && (has(q.protocol) ? q.protocol : 'TCP') == (has(p.protocol) ? p.protocol : 'TCP')))",message="each (port, protocol) pair may appear only once"
	// +listType=map
	// +listMapKey=name
	// +required
	Ports []BalancerPort `json:"ports"`

	// replicas is the number of nginx proxy pods. It is the field that
	// `kubectl scale bal/<name>` and a HorizontalPodAutoscaler change.
	// Defaults to 1.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// image is the nginx image of the proxy; it must have the stream
	// module. Defaults to a pinned nginx image.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Image string `json:"image,omitempty"`

	// resources of the proxy container. A CPU limit also sets how many
	// nginx workers the proxy runs: one per CPU it allows, at least one
	// (without a limit, one per core of the node).
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`

	// serviceType is the type of the front-end Service: ClusterIP (the
	// default), NodePort or LoadBalancer.
	// +kubebuilder:validation:Enum=ClusterIP;NodePort;LoadBalancer
	// +kubebuilder:default=ClusterIP
	// +optional
	ServiceType corev1.ServiceType `json:"serviceType,omitempty"`

	// passiveHealth takes a backend that stops answering out of the
	// rotation: after maxFails failed connection attempts within
	// failTimeout the proxy sends it nothing for failTimeout, then tries
	// it again. The failed attempts themselves are retried on another
	// backend. On by default (3 failures, 10s).
	// +optional
	PassiveHealth *BalancerPassiveHealth `json:"passiveHealth,omitempty"`

	// sessionAffinity: None (the default) spreads every new connection by
	// weight; ClientIP keeps every connection of one client address on
	// one backend, and spreads the client addresses by weight (a
	// consistent hash: a weight change or a backend added moves only a
	// share of the clients).
	// +kubebuilder:default=None
	// +optional
	SessionAffinity SessionAffinity `json:"sessionAffinity,omitempty"`
}

// BalancerPassiveHealth is how the proxy notices a backend that stops
// answering, from the connections it makes (no probe traffic of its own).
type BalancerPassiveHealth struct {
	// maxFails is the number of failed connection attempts to a backend,
	// within failTimeout, that take it out of the rotation for
	// failTimeout. 0 turns passive health off: a backend always gets its
	// share. Defaults to 3.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	MaxFails *int32 `json:"maxFails,omitempty"`

	// failTimeout is both the window in which maxFails failures count and
	// how long the backend is then left out, e.g. 10s or 1m. From 1s to
	// 1h, whole seconds. Defaults to 10s.
	// +optional
	FailTimeout *metav1.Duration `json:"failTimeout,omitempty"`
}

// BalancerBackend is one weighted group of backend pods.
type BalancerBackend struct {
	// name of the backend, a DNS label; its Service is <balancer>-<name>.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	// +required
	Name string `json:"name"`

	// weight is the backend's share of new connections relative to the
	// other backends' weights, 0 to 1000. 0 drains the backend: it gets
	// no new connections. Defaults to 1.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +kubebuilder:default=1
	// +optional
	Weight *int32 `json:"weight,omitempty"`

	// selector holds the labels, added to spec.selector, that pick this
	// backend's pods, e.g. version: v2. Where a key is in both, this
	// backend's value wins.
	// +optional
	Selector map[string]string `json:"selector,omitempty"`
}

// BalancerPort is one port of the front end.
type BalancerPort struct {
	// name of the port, a DNS label of at most 15 characters.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=15
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +required
	Name string `json:"name"`

	// protocol is TCP (the default) or UDP.
	// +kubebuilder:validation:Enum=TCP;UDP
	// +kubebuilder:default=TCP
	// +optional
	Protocol corev1.Protocol `json:"protocol,omitempty"`

	// port is the port the front-end Service and the proxy expose.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +required
	Port int32 `json:"port"`

	// targetPort is the port on the backend pods: a number, or the name
	// of a container port (as a Service's targetPort). Defaults to port.
	// +kubebuilder:validation:XIntOrString
	// +optional
	TargetPort *intstr.IntOrString `json:"targetPort,omitempty"`
}

// BalancerBackendStatus is what was observed of one backend.
type BalancerBackendStatus struct {
	// name of the backend.
	Name string `json:"name"`
	// weight the proxy gives the backend.
	Weight int32 `json:"weight"`
	// readyEndpoints is the number of ready pods behind the backend's
	// Service, counted from its EndpointSlices (those whose controller is
	// the Service, by UID).
	ReadyEndpoints int32 `json:"readyEndpoints"`
}

// BalancerStatus is the observed state of a Balancer.
type BalancerStatus struct {
	// observedGeneration is the metadata.generation that this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// backends: each backend's weight and ready endpoints, in spec order.
	// +optional
	// +listType=map
	// +listMapKey=name
	Backends []BalancerBackendStatus `json:"backends,omitempty"`

	// activeBackends is the number of backends with a weight above 0 and
	// at least one ready endpoint: those that take traffic.
	// +optional
	ActiveBackends int32 `json:"activeBackends"`

	// obsoleteBackends is the number of backends in the spec that serve
	// nothing: they have no ready endpoint.
	// +optional
	ObsoleteBackends int32 `json:"obsoleteBackends"`

	// replicas is the number of proxy pods (the scale subresource's status
	// replicas).
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// readyReplicas is the number of proxy pods that are ready.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`

	// selector is the label selector of the proxy pods in string form (the
	// scale subresource's selector, used by HorizontalPodAutoscalers).
	// +optional
	Selector string `json:"selector,omitempty"`

	// configHash is the digest of the nginx.conf the proxy runs with; it
	// changes with every weight, backend or port change.
	// +optional
	ConfigHash string `json:"configHash,omitempty"`

	// conditions: Ready (the proxy is available and at least one backend
	// takes traffic), Progressing (the proxy is rolling out or scaling) and
	// Degraded (a weighted backend has no ready endpoint, or the spec
	// cannot be applied; the reason says which).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Balancer splits the connections to one front-end Service between named
// groups of backend pods by weight, through an nginx proxy that the
// operator configures. It supports `kubectl scale` of the proxy and
// HorizontalPodAutoscalers through the scale subresource.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:resource:shortName=bal,categories=kubeforge
// +kubebuilder:printcolumn:name="Active",type=integer,JSONPath=`.status.activeBackends`,description="Backends that take traffic"
// +kubebuilder:printcolumn:name="Obsolete",type=integer,JSONPath=`.status.obsoleteBackends`,description="Backends without a ready endpoint"
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.readyReplicas`,description="Proxy pods that are ready"
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1,description="Reason of the Ready condition"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Balancer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the Balancer.
	// +required
	Spec BalancerSpec `json:"spec"`

	// status is the observed state of the Balancer, written by the operator.
	// +optional
	Status BalancerStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// BalancerList is a list of Balancers.
type BalancerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Balancer `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Balancer{}, &BalancerList{})
}
