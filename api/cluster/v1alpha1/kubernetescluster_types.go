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
	// DefaultInstallerImage is the kubespray image that runs the operations
	// when spec.installer.image is not given.
	DefaultInstallerImage = "quay.io/kubespray/kubespray:v2.27.0"
	// ResetFinalizer holds a KubernetesCluster until its reset operation
	// has run.
	ResetFinalizer = "cluster.kubeforge.io/reset"
	// RetryAnnotation: setting it to a new value retries a failed operation.
	RetryAnnotation = "kubeforge.io/retry"
	// ClusterLabel is set on every operation's Job and pods, with the cluster's name.
	ClusterLabel = "cluster.kubeforge.io/cluster"
	// OperationLabel is set on an operation's Job and pods, with its id.
	OperationLabel = "cluster.kubeforge.io/operation"
	// MaxOperationHistory is how many operations status.operations keeps.
	MaxOperationHistory = 10
)

// Host is a machine the cluster is installed onto.
type Host struct {
	// address of the host: an IP address or a DNS name reachable over SSH.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Address string `json:"address"`
	// name of the host in the inventory and as a Kubernetes node.
	// Defaults to one derived from the address.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Name string `json:"name,omitempty"`
}

// NetworkPlugin is the CNI plugin installed with the cluster.
// +kubebuilder:validation:Enum=calico;flannel;cilium
type NetworkPlugin string

// ClusterNetwork is the cluster's network. It cannot change after creation.
type ClusterNetwork struct {
	// podCIDR is the range pod IPs come from. Defaults to 10.233.64.0/18.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	PodCIDR string `json:"podCIDR,omitempty"`
	// serviceCIDR is the range Service IPs come from. Defaults to 10.233.0.0/18.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	ServiceCIDR string `json:"serviceCIDR,omitempty"`
	// plugin is the CNI plugin: calico (the default), flannel or cilium.
	// +optional
	Plugin NetworkPlugin `json:"plugin,omitempty"`
}

// SSHSecretReference names the SSH key the installer logs in with.
type SSHSecretReference struct {
	// name of a kubernetes.io/ssh-auth Secret in the cluster's namespace;
	// its ssh-privatekey is mounted read-only into the installer, never
	// put into an environment variable.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`
	// user the installer logs in as: a POSIX login name (lower-case
	// letters, digits, _ and -, starting with a letter or _). Defaults to
	// root.
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^[a-z_][a-z0-9_-]*$`
	// +optional
	User string `json:"user,omitempty"`
}

// InstallerVariables are inventory variables for the installer's
// playbooks, by name.
type InstallerVariables map[string]string

// Installer is how operations run.
type Installer struct {
	// image of the installer (kubespray-style: ansible playbooks over SSH).
	// Defaults to a pinned kubespray image.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Image string `json:"image,omitempty"`
	// timeout of one operation, after which its Job is stopped
	// (activeDeadlineSeconds) and the operation fails. Defaults to 60m.
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`
	// extraVars are passed to the playbooks as inventory variables, as
	// text (never templated). A plain setting (a name on kubeforge's list
	// of data-only settings, with a value of letters, digits, '.', '_'
	// and '-') is anyone's to set; any other variable takes the right to
	// create pods in the namespace, since a playbook may run what its
	// variables name.
	// +optional
	ExtraVars InstallerVariables `json:"extraVars,omitempty"`
	// podLabels are added to the installer pods (at most 48).
	// +optional
	PodLabels map[string]string `json:"podLabels,omitempty"`
	// resources of the installer container.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
}

// KubernetesClusterSpec is the desired state of a KubernetesCluster.
type KubernetesClusterSpec struct {
	// version of Kubernetes, vMAJOR.MINOR.PATCH. Raising it upgrades the
	// cluster, one minor version at a time; it never goes down.
	// +kubebuilder:validation:Pattern=`^v[0-9]+\.[0-9]+\.[0-9]+$`
	// +required
	Version string `json:"version"`

	// masters are the control-plane hosts. Cannot change after creation.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=9
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="masters cannot change after creation"
	// +listType=atomic
	// +required
	Masters []Host `json:"masters"`

	// nodes are the worker hosts. Adding one scales the cluster up,
	// removing one scales it down.
	// +kubebuilder:validation:MaxItems=500
	// +listType=atomic
	// +optional
	Nodes []Host `json:"nodes,omitempty"`

	// etcd are the hosts that run etcd. Defaults to the masters. Cannot
	// change after creation.
	// +kubebuilder:validation:MaxItems=9
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="etcd cannot change after creation"
	// +listType=atomic
	// +optional
	Etcd []Host `json:"etcd,omitempty"`

	// network of the cluster. Cannot change after creation.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="network cannot change after creation"
	// +optional
	Network ClusterNetwork `json:"network,omitempty"`

	// sshSecretRef names the SSH key and user the installer logs in with.
	// +required
	SSHSecretRef SSHSecretReference `json:"sshSecretRef"`

	// installer says how operations run.
	// +optional
	Installer Installer `json:"installer,omitempty"`

	// resetOnDelete runs a reset operation, which removes Kubernetes from
	// the hosts, before the resource goes away. Defaults to true.
	// +optional
	ResetOnDelete *bool `json:"resetOnDelete,omitempty"`

	// paused stops the operator from starting new operations; a running
	// one finishes.
	// +optional
	Paused bool `json:"paused,omitempty"`
}

// OperationType is what an operation does.
// +kubebuilder:validation:Enum=precheck;create;scale-up;scale-down;upgrade;reset
type OperationType string

// The operation types.
const (
	OpPrecheck  OperationType = "precheck"
	OpCreate    OperationType = "create"
	OpScaleUp   OperationType = "scale-up"
	OpScaleDown OperationType = "scale-down"
	OpUpgrade   OperationType = "upgrade"
	OpReset     OperationType = "reset"
)

// OperationResult is how an operation ended.
// +kubebuilder:validation:Enum=Running;Succeeded;Failed
type OperationResult string

// The operation results.
const (
	ResultRunning   OperationResult = "Running"
	ResultSucceeded OperationResult = "Succeeded"
	ResultFailed    OperationResult = "Failed"
)

// Operation is one run of the installer.
type Operation struct {
	// id of the operation, <type>-<sequence>, unique in the cluster.
	ID string `json:"id"`
	// type of the operation.
	Type OperationType `json:"type"`
	// jobName is the Job that runs it: <cluster>-<id>.
	JobName string `json:"jobName"`
	// hosts the operation works on (scale-up, scale-down).
	// +optional
	// +listType=atomic
	Hosts []string `json:"hosts,omitempty"`
	// version the operation installs (create, upgrade).
	// +optional
	Version string `json:"version,omitempty"`
	// startTime of the operation.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// completionTime of the operation.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// result of the operation.
	Result OperationResult `json:"result"`
	// reason of a failure: BackoffLimitExceeded, DeadlineExceeded, ...
	// +optional
	Reason string `json:"reason,omitempty"`
	// message: what failed (the installer's last output), or what it did.
	// +optional
	Message string `json:"message,omitempty"`
}

// ClusterPhase is where a KubernetesCluster is.
// +kubebuilder:validation:Enum=Pending;Prechecking;Creating;Running;ScalingUp;ScalingDown;Upgrading;Failed;Terminating
type ClusterPhase string

// The phases of a KubernetesCluster.
const (
	PhasePending     ClusterPhase = "Pending"
	PhasePrechecking ClusterPhase = "Prechecking"
	PhaseCreating    ClusterPhase = "Creating"
	PhaseRunning     ClusterPhase = "Running"
	PhaseScalingUp   ClusterPhase = "ScalingUp"
	PhaseScalingDown ClusterPhase = "ScalingDown"
	PhaseUpgrading   ClusterPhase = "Upgrading"
	PhaseFailed      ClusterPhase = "Failed"
	PhaseTerminating ClusterPhase = "Terminating"
)

// KubernetesClusterStatus is the observed state of a KubernetesCluster.
type KubernetesClusterStatus struct {
	// observedGeneration is the metadata.generation that this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// phase of the cluster.
	// +optional
	Phase ClusterPhase `json:"phase,omitempty"`
	// currentOperation is the id of the running operation, if any.
	// +optional
	CurrentOperation string `json:"currentOperation,omitempty"`
	// operations are the last 10 operations, oldest first.
	// +optional
	// +listType=atomic
	Operations []Operation `json:"operations,omitempty"`
	// operationCount is the number of operations started; the next
	// operation's id ends with it plus one.
	// +optional
	OperationCount int64 `json:"operationCount,omitempty"`
	// version of Kubernetes installed.
	// +optional
	Version string `json:"version,omitempty"`
	// installedNodes are the addresses of the worker hosts installed.
	// +optional
	// +listType=atomic
	InstalledNodes []string `json:"installedNodes,omitempty"`
	// nodeNames are the names the installed workers were installed under,
	// by address: a worker taken out of spec.nodes (and its name with it)
	// is removed from the cluster under the name it has there.
	// +optional
	NodeNames map[string]string `json:"nodeNames,omitempty"`
	// masterCount is the number of control-plane hosts installed.
	// +optional
	MasterCount int32 `json:"masterCount"`
	// nodeCount is the number of worker hosts installed.
	// +optional
	NodeCount int32 `json:"nodeCount"`
	// kubeconfigSecretRef names the Secret with the admin kubeconfig,
	// written by the create operation.
	// +optional
	KubeconfigSecretRef *corev1.LocalObjectReference `json:"kubeconfigSecretRef,omitempty"`
	// observedRetry is the value of the kubeforge.io/retry annotation that
	// the last retry answered.
	// +optional
	ObservedRetry string `json:"observedRetry,omitempty"`
	// conditions: Ready (installed and no operation pending), Progressing
	// (an operation runs), Degraded (an operation failed).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// KubernetesCluster installs Kubernetes onto a list of hosts by running an
// installer image (kubespray-style) as Jobs, one operation at a time:
// precheck and create, scale up, scale down, upgrade, and reset on delete.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=kc,categories=kubeforge
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.status.version`,description="Kubernetes version installed"
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`,description="What the cluster is doing"
// +kubebuilder:printcolumn:name="Masters",type=integer,JSONPath=`.status.masterCount`,description="Control-plane hosts installed"
// +kubebuilder:printcolumn:name="Nodes",type=integer,JSONPath=`.status.nodeCount`,description="Worker hosts installed"
// +kubebuilder:printcolumn:name="Operation",type=string,JSONPath=`.status.currentOperation`,priority=1,description="The running operation"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type KubernetesCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the KubernetesCluster.
	// +required
	Spec KubernetesClusterSpec `json:"spec"`

	// status is the observed state of the KubernetesCluster, written by the operator.
	// +optional
	Status KubernetesClusterStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// KubernetesClusterList is a list of KubernetesClusters.
type KubernetesClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KubernetesCluster `json:"items"`
}

func init() {
	SchemeBuilder.Register(&KubernetesCluster{}, &KubernetesClusterList{})
}
