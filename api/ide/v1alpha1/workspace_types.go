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
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// WorkspaceDefaultImage is the IDE image when spec.image is not given.
	WorkspaceDefaultImage = "docker.io/codercom/code-server:4.96.4"
	// WorkspaceDefaultPort is the port the IDE listens on by default.
	WorkspaceDefaultPort int32 = 8080
	// WorkspaceDefaultHealthPath is the readiness probe's path by default:
	// code-server's health endpoint.
	WorkspaceDefaultHealthPath = "/healthz"
	// WorkspaceDefaultMountPath is where the home volume is mounted by default.
	WorkspaceDefaultMountPath = "/home/coder"
	// WorkspaceUID is the user and group the IDE runs as (code-server's "coder").
	WorkspaceUID int64 = 1000

	// WorkspaceLabel is set on the Workspace's Pod, with its name as value.
	WorkspaceLabel = "ide.kubeforge.io/workspace"
	// UserLabel records spec.user on the Workspace and on its Pod, so that
	// `kubectl get ws -l ide.kubeforge.io/user=alice` lists a user's workspaces.
	UserLabel = "ide.kubeforge.io/user"
)

// WorkspaceDefaultStorageSize is the home volume's size by default.
var WorkspaceDefaultStorageSize = resource.MustParse("10Gi")

// ReclaimPolicy says what happens to the home volume when its Workspace is deleted.
// +kubebuilder:validation:Enum=Delete;Retain
type ReclaimPolicy string

const (
	// ReclaimDelete deletes the home volume with the Workspace.
	ReclaimDelete ReclaimPolicy = "Delete"
	// ReclaimRetain keeps the home volume; a new Workspace of the same name finds it again.
	ReclaimRetain ReclaimPolicy = "Retain"
)

// WorkspaceSpec is the desired state of a Workspace.
type WorkspaceSpec struct {
	// image of the IDE. Defaults to a pinned code-server image.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Image string `json:"image,omitempty"`

	// imagePullPolicy of the IDE container. Defaults to IfNotPresent, so a
	// start does not wait for a pull of an image the node already has.
	// +kubebuilder:validation:Enum=Always;IfNotPresent;Never
	// +kubebuilder:default=IfNotPresent
	// +optional
	ImagePullPolicy corev1.PullPolicy `json:"imagePullPolicy,omitempty"`

	// port the IDE listens on (given to it as $PORT). Defaults to 8080.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +kubebuilder:default=8080
	// +optional
	Port int32 `json:"port,omitempty"`

	// resources of the IDE container: cpu and memory requests and limits.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`

	// storage is the persistent home volume, kept across stop and start.
	// +kubebuilder:default={}
	// +optional
	Storage WorkspaceStorage `json:"storage,omitempty"`

	// started runs the IDE when true (the default) and stops it when false:
	// the Pod is deleted, the home volume and the Service stay.
	// +kubebuilder:default=true
	// +optional
	Started *bool `json:"started,omitempty"`

	// env are extra environment variables of the IDE container. Secrets
	// belong in valueFrom.secretKeyRef, not in value.
	// +optional
	// +listType=map
	// +listMapKey=name
	Env []corev1.EnvVar `json:"env,omitempty"`

	// user is the developer who owns the workspace. It is recorded as the
	// label ide.kubeforge.io/user, so it must be a valid label value.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	User string `json:"user,omitempty"`

	// maxRunDuration, when set, stops the workspace (sets started to false)
	// that long after it was started, e.g. 8h.
	// +optional
	MaxRunDuration *metav1.Duration `json:"maxRunDuration,omitempty"`

	// ingress, when set, routes a host name to the IDE, with a cert-manager
	// Certificate when tls.issuerRef is given.
	// +optional
	Ingress *WorkspaceIngress `json:"ingress,omitempty"`

	// auth is how the IDE tells its user from anyone else who reaches it.
	// Defaults to a generated password.
	// +kubebuilder:default={}
	// +optional
	Auth WorkspaceAuth `json:"auth,omitempty"`

	// healthPath is the HTTP path of the IDE's readiness probe: the
	// workspace is Running once the IDE answers it with 2xx or 3xx.
	// Defaults to /healthz, code-server's health endpoint, which answers
	// without a login.
	// +kubebuilder:validation:Pattern=`^/`
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:default="/healthz"
	// +optional
	HealthPath string `json:"healthPath,omitempty"`
}

// WorkspaceStorage is the home volume of a Workspace.
type WorkspaceStorage struct {
	// size of the home volume. Defaults to 10Gi. Cannot change.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="storage.size cannot change"
	// +kubebuilder:default="10Gi"
	// +optional
	Size *resource.Quantity `json:"size,omitempty"`

	// storageClassName of the home volume; omitted, the cluster's default
	// class (with no default class in the cluster, no volume is made: the
	// Workspace reports NoDefaultStorageClass). "" binds a volume made beforehand without a class (one that
	// exists, with its data), which takes the right to create
	// persistentvolumeclaims in the namespace. Cannot change.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="storage.storageClassName cannot change"
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`

	// mountPath of the home volume in the IDE container. Defaults to
	// /home/coder. Cannot change.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="storage.mountPath cannot change"
	// +kubebuilder:validation:Pattern=`^/`
	// +kubebuilder:default="/home/coder"
	// +optional
	MountPath string `json:"mountPath,omitempty"`

	// reclaimPolicy: Delete (the default) deletes the home volume with the
	// Workspace; Retain keeps it, and a new Workspace of the same name
	// mounts it again.
	// +kubebuilder:default=Delete
	// +optional
	ReclaimPolicy ReclaimPolicy `json:"reclaimPolicy,omitempty"`
}

// AuthMode is how an IDE asks who is there.
type AuthMode string

const (
	// AuthPassword gives the IDE the hash of a password generated into the
	// Secret <name>-auth (key password).
	AuthPassword AuthMode = "Password"
	// AuthNone runs the IDE without a login.
	AuthNone AuthMode = "None"
)

// WorkspaceAuth is how the IDE tells its user from anyone else.
type WorkspaceAuth struct {
	// mode: Password (the default) generates a password once, from
	// crypto/rand, into the Secret <name>-auth that the Workspace owns
	// (keys password and hashedPassword), and gives the IDE only its
	// argon2id hash (env HASHED_PASSWORD, from the Secret); the IDE's login
	// page asks for it. None runs the IDE without a login (env
	// KUBEFORGE_IDE_AUTH=none): anyone who reaches its port gets a shell
	// as the workspace's user, so choose it only behind a proxy that
	// authenticates, and keep the NetworkPolicy.
	// +kubebuilder:validation:Enum=Password;None
	// +kubebuilder:default=Password
	// +optional
	Mode AuthMode `json:"mode,omitempty"`
}

// WorkspaceIngress routes a host name to the IDE.
type WorkspaceIngress struct {
	// host name of the IDE, e.g. alice.ide.example.com.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Host string `json:"host"`

	// className is the IngressClass; empty uses the cluster's default.
	// +optional
	ClassName *string `json:"className,omitempty"`

	// tls, when set, serves the host over HTTPS.
	// +optional
	TLS *WorkspaceTLS `json:"tls,omitempty"`
}

// WorkspaceTLS serves the IDE over HTTPS with a certificate from cert-manager.
type WorkspaceTLS struct {
	// issuerRef names the cert-manager Issuer or ClusterIssuer that signs
	// the Certificate for the host.
	// +required
	IssuerRef IssuerReference `json:"issuerRef"`
}

// IssuerReference names a cert-manager issuer.
type IssuerReference struct {
	// name of the issuer.
	// +kubebuilder:validation:MinLength=1
	// +required
	Name string `json:"name"`
	// kind of the issuer: Issuer (the default, in the Workspace's
	// namespace) or ClusterIssuer.
	// +kubebuilder:validation:Enum=Issuer;ClusterIssuer
	// +kubebuilder:default=Issuer
	// +optional
	Kind string `json:"kind,omitempty"`
}

// WorkspacePhase is where a Workspace is in its life.
// +kubebuilder:validation:Enum=Pending;Starting;Running;Stopping;Stopped;Failed
type WorkspacePhase string

// The phases of a Workspace.
const (
	PhasePending  WorkspacePhase = "Pending"
	PhaseStarting WorkspacePhase = "Starting"
	PhaseRunning  WorkspacePhase = "Running"
	PhaseStopping WorkspacePhase = "Stopping"
	PhaseStopped  WorkspacePhase = "Stopped"
	PhaseFailed   WorkspacePhase = "Failed"
)

// WorkspaceStatus is the observed state of a Workspace.
type WorkspaceStatus struct {
	// observedGeneration is the metadata.generation that this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// phase: Pending (no Pod yet, or not scheduled: reason Unschedulable
	// while the scheduler cannot place it), Starting (the IDE is starting
	// and does not answer yet), Running (the Pod is Ready: the IDE answers
	// its readiness probe), Stopping, Stopped, Failed (reason says why,
	// e.g. ImagePullBackOff or CrashLoopBackOff).
	// +optional
	Phase WorkspacePhase `json:"phase,omitempty"`

	// reason is a one-word reason for the phase, e.g. ImagePullBackOff.
	// +optional
	Reason string `json:"reason,omitempty"`

	// message says more about the phase.
	// +optional
	Message string `json:"message,omitempty"`

	// podIP of the IDE's Pod.
	// +optional
	PodIP string `json:"podIP,omitempty"`

	// nodeName is the node the IDE runs on.
	// +optional
	NodeName string `json:"nodeName,omitempty"`

	// credentialsSecret is the Secret that holds the IDE's password (key
	// password); empty with auth mode None. Reading it needs get on
	// secrets in the namespace.
	// +optional
	CredentialsSecret string `json:"credentialsSecret,omitempty"`

	// url of the IDE: http://<name>.<namespace>.svc:<port>, or the ingress
	// host (https:// when tls is set).
	// +optional
	URL string `json:"url,omitempty"`

	// startedAt is when the workspace was last started; maxRunDuration
	// counts from it. Empty while stopped.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`

	// lastStartupSeconds is how long the last start took, from the Pod's
	// creation to its Ready condition.
	// +optional
	LastStartupSeconds *int64 `json:"lastStartupSeconds,omitempty"`

	// conditions: Ready (the IDE answers), Progressing (starting or
	// stopping), Degraded (it cannot run without help; the reason says why).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Workspace is one developer's browser IDE (code-server by default) with a
// persistent home volume: create it and get a URL; stop it and keep the
// files; start it again and find them.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=ws,categories=kubeforge
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`,description="Where the workspace is in its life"
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.status.url`,description="Where the IDE answers"
// +kubebuilder:printcolumn:name="User",type=string,JSONPath=`.spec.user`,description="The developer who owns it"
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.reason`,priority=1,description="Why it is in its phase"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Workspace struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the Workspace.
	// +optional
	Spec WorkspaceSpec `json:"spec,omitempty"`

	// status is the observed state of the Workspace, written by the operator.
	// +optional
	Status WorkspaceStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// WorkspaceList is a list of Workspaces.
type WorkspaceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Workspace `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Workspace{}, &WorkspaceList{})
}
