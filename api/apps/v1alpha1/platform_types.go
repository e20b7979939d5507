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
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
)

const (
	// PlatformLabel is set on every pod of a Platform, with its name.
	PlatformLabel = "apps.kubeforge.io/platform"
	// PlatformComponentLabel is set on every pod of a Platform's
	// component, with the component's name; with PlatformLabel it is the
	// component's selector.
	PlatformComponentLabel = "apps.kubeforge.io/platform-component"
	// PlatformConfigHashAnnotation on a component's pod template is a
	// digest of its config files: a config change rolls the component.
	PlatformConfigHashAnnotation = "apps.kubeforge.io/config-hash"
	// PlatformSecretsVersionAnnotation on a component's pod template is a
	// digest of the versions of the Platform's generated Secrets it
	// references: a rotation rolls the component.
	PlatformSecretsVersionAnnotation = "apps.kubeforge.io/secrets-version"
	// RotateSecretAnnotation on a Platform names generated secrets
	// (spec.secrets[].name, comma-separated) whose values the operator
	// replaces with new random ones; the components that use them roll,
	// and the operator removes the annotation.
	RotateSecretAnnotation = "kubeforge.io/rotate-secret"
	// PreviousImageAnnotation on a component's workload is the image it ran
	// before its last move to a new image; a Rollback returns it there.
	PreviousImageAnnotation = "apps.kubeforge.io/previous-image"
	// FailedImageAnnotation on a component's workload is the image it was
	// rolled back from.
	FailedImageAnnotation = "apps.kubeforge.io/failed-image"
	// PlatformHookLabel is set on a hook Job and its pods: bootstrap or
	// preUpgrade.
	PlatformHookLabel = "apps.kubeforge.io/hook"
)

// UpgradeFailurePolicy is what happens when a component fails to move to
// a new version.
// +kubebuilder:validation:Enum=Pause;Rollback
type UpgradeFailurePolicy string

// The upgrade failure policies.
const (
	// UpgradePause stops moving other components to the new version and
	// reports the failure; the failed component stays as it is.
	UpgradePause UpgradeFailurePolicy = "Pause"
	// UpgradeRollback returns the failed component to the image it ran
	// before, and stops moving the others.
	UpgradeRollback UpgradeFailurePolicy = "Rollback"
)

// DefaultProgressDeadlineSeconds is upgradePolicy.progressDeadlineSeconds
// when it is not given (the Deployment default).
const DefaultProgressDeadlineSeconds int32 = 600

// WorkloadType is the kind of workload a component runs as.
// +kubebuilder:validation:Enum=Deployment;StatefulSet;DaemonSet;CronJob
type WorkloadType string

// The workload types of a component.
const (
	WorkloadDeployment  WorkloadType = "Deployment"
	WorkloadStatefulSet WorkloadType = "StatefulSet"
	WorkloadDaemonSet   WorkloadType = "DaemonSet"
	WorkloadCronJob     WorkloadType = "CronJob"
)

// PlatformSpec is the desired state of a Platform.
type PlatformSpec struct {
	// imageRepository is the registry and path every component's image
	// name is appended to, e.g. registry.example.com/acme.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +required
	ImageRepository string `json:"imageRepository"`

	// version is the default tag of every component's image. Raising it
	// rolls the components in dependency order.
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`
	// +required
	Version string `json:"version"`

	// imagePullPolicy of every container. Defaults to IfNotPresent.
	// +kubebuilder:validation:Enum=Always;IfNotPresent;Never
	// +kubebuilder:default=IfNotPresent
	// +optional
	ImagePullPolicy corev1.PullPolicy `json:"imagePullPolicy,omitempty"`

	// imagePullSecrets of every pod.
	// +optional
	// +listType=atomic
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`

	// database is the external MySQL/MariaDB or PostgreSQL server on which
	// every component that asks for a database gets its own database and
	// user. The server's admin credentials stay in a Secret.
	// +optional
	Database *PlatformDatabase `json:"database,omitempty"`

	// values are platform-wide settings (name → value) that components'
	// config templates read as {{ .Values.<name> }}.
	// +optional
	// +kubebuilder:validation:MaxProperties=128
	Values map[string]string `json:"values,omitempty"`

	// secrets are generated once, from a cryptographic random source, into
	// Secrets named <platform>-<name> that components reference through
	// env valueFrom.secretKeyRef. Annotate the Platform with
	// kubeforge.io/rotate-secret: <name>[,<name>] to replace the values.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	Secrets []PlatformSecret `json:"secrets,omitempty"`

	// upgradePolicy says how a version bump that fails is handled.
	// +optional
	UpgradePolicy PlatformUpgradePolicy `json:"upgradePolicy,omitempty"`

	// components of the platform, each run as its own workload.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +listType=map
	// +listMapKey=name
	// +required
	Components []PlatformComponent `json:"components"`
}

// PodSecurity is the security profile of the pods kubeforge makes for a
// component (PlatformComponent.PodSecurity).
type PodSecurity string

// PodSecurityConditionType is False, reason PodSecurityUnset, while
// components stored before podSecurity existed run unrestricted, naming
// them; absent otherwise.
const PodSecurityConditionType = "PodSecurity"

// The profiles.
const (
	// PodSecurityRestricted pods pass Pod Security's restricted level.
	PodSecurityRestricted PodSecurity = "Restricted"
	// PodSecurityBaseline pods run as their image says.
	PodSecurityBaseline PodSecurity = "Baseline"
)

// PlatformComponent is one service of a platform.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.workload) || !has(self.workload) || self.workload == oldSelf.workload",message="a component's workload cannot change; add a component with a new name instead"
type PlatformComponent struct {
	// name of the component, a DNS label, unique in the platform. Its
	// objects are named <platform>-<name>.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=40
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	// +required
	Name string `json:"name"`

	// workload the component runs as: Deployment (the default),
	// StatefulSet, DaemonSet or CronJob. Cannot change.
	// +kubebuilder:default=Deployment
	// +optional
	Workload WorkloadType `json:"workload,omitempty"`

	// disable stops the component: its workload, Service and ConfigMap
	// are deleted; its volume stays unless its reclaimPolicy is Delete.
	// +optional
	Disable bool `json:"disable,omitempty"`

	// image is the full image reference, overriding imageRepository,
	// imageName and tag.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Image string `json:"image,omitempty"`

	// imageName is appended to spec.imageRepository. Defaults to the
	// component's name.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	ImageName string `json:"imageName,omitempty"`

	// tag of the image. Empty follows spec.version, so a version bump
	// cascades; set it only to pin this component.
	// +kubebuilder:validation:MaxLength=128
	// +optional
	Tag string `json:"tag,omitempty"`

	// replicas of a Deployment or StatefulSet. Defaults to 1. Not allowed
	// for DaemonSets and CronJobs.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// command of the container, replacing the image's entrypoint.
	// +optional
	// +listType=atomic
	Command []string `json:"command,omitempty"`

	// args of the container.
	// +optional
	// +listType=atomic
	Args []string `json:"args,omitempty"`

	// env of the container.
	// +optional
	// +listType=map
	// +listMapKey=name
	Env []corev1.EnvVar `json:"env,omitempty"`

	// ports the component serves; a Service exposes them.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	Ports []ComponentPort `json:"ports,omitempty"`

	// service exposing the ports; created when there are ports.
	// +optional
	Service ComponentService `json:"service,omitempty"`

	// config holds files (name → content) mounted read-only at
	// /etc/<component>/. Each content is a Go text/template rendered with
	// the platform's facts: {{ .Platform.Name }}, {{ .Platform.Namespace }},
	// {{ .Platform.Version }}, {{ .Values.<key> }}, other components'
	// Service addresses ({{ service "api" "http" }} → host:port,
	// {{ (index .Components "api").Host }}) and the component's own
	// database ({{ .Database.Host }}, .Port, .Name, .User; never the
	// password). A literal {{ is written {{ "{{" }}. The digest of the
	// rendered files is in the pod template, so a change rolls the
	// component.
	// +optional
	Config map[string]string `json:"config,omitempty"`

	// storage is a persistent volume for the component: a
	// PersistentVolumeClaim for a Deployment, a volumeClaimTemplate for a
	// StatefulSet.
	// +optional
	Storage *ComponentStorage `json:"storage,omitempty"`

	// schedule in cron format; required for and only for a CronJob.
	// +kubebuilder:validation:MaxLength=128
	// +optional
	Schedule string `json:"schedule,omitempty"`

	// nodeSelector of the pods.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// tolerations of the pods.
	// +optional
	// +listType=atomic
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// affinity of the pods.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`

	// resources of the container.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`

	// podSecurity is the security profile of the component's pods and of
	// its hooks' pods. Restricted (what admission sets on every new
	// component): they pass Pod Security's restricted level —
	// they run as a non-root user (the image's own, which must be
	// numeric and not 0), with every capability dropped, no privilege
	// escalation, the runtime's default seccomp profile and no
	// ServiceAccount token; a component with storage gets the group 65532
	// on its volume so a non-root user can write it. Baseline: the pods
	// run as the image says (root if it is root), for images that cannot
	// run otherwise; setting it takes the right to use the level:
	// verb "use" on podsecuritylevels named "baseline" in the kubeforge.io
	// group, in the Platform's namespace. Unset — a component stored by
	// an operator older than this field — runs as before (as Baseline),
	// with the PodSecurity condition and a Warning event asking for a
	// choice (docs/operations.md, "Upgrading the operator"); until then a
	// change of the spec beyond its harmless fields takes the right
	// Baseline takes.
	// +kubebuilder:validation:Enum=Restricted;Baseline
	// +optional
	PodSecurity PodSecurity `json:"podSecurity,omitempty"`

	// readinessProbe tells when a pod of the component is Ready. The
	// component is Ready, and the components that depend on it start or
	// move to a new version, only when its pods are. Without it a pod is
	// Ready as soon as its container runs. A named port must be one of
	// ports. It may not name a host: a probe goes to the pod's own
	// address (a host would have the kubelet send it from the node's
	// network, which Pod Security forbids).
	// +optional
	ReadinessProbe *corev1.Probe `json:"readinessProbe,omitempty"`

	// database asks for a database of the component's own on the server
	// of spec.database. Its credentials are in the Secret
	// <platform>-<component>-db and reach the container as DB_HOST,
	// DB_PORT, DB_NAME, DB_USER and DB_PASSWORD.
	// +optional
	Database *ComponentDatabase `json:"database,omitempty"`

	// dependsOn names components that must be Ready before this one is
	// created, and that must run a new version before this one moves to it.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	DependsOn []string `json:"dependsOn,omitempty"`

	// ingress routes a host (and path) to one of the component's ports
	// from outside the cluster.
	// +optional
	Ingress *ComponentIngress `json:"ingress,omitempty"`

	// hooks are Jobs run at points of the component's life: bootstrap once
	// after it is first Ready, preUpgrade before it moves to a new image.
	// +optional
	Hooks *ComponentHooks `json:"hooks,omitempty"`
}

// ComponentIngress is the Ingress of a component.
type ComponentIngress struct {
	// host name the component is reached at, e.g. api.example.com.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Host string `json:"host"`

	// path routed to the component. Defaults to /.
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^/`
	// +optional
	Path string `json:"path,omitempty"`

	// pathType: Prefix (the default), Exact or ImplementationSpecific.
	// +kubebuilder:validation:Enum=Prefix;Exact;ImplementationSpecific
	// +optional
	PathType *networkingv1.PathType `json:"pathType,omitempty"`

	// port is the name of the component's port the Ingress sends traffic
	// to. Defaults to its first port.
	// +kubebuilder:validation:MaxLength=15
	// +optional
	Port string `json:"port,omitempty"`

	// className is the IngressClass; empty uses the cluster's default.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ClassName *string `json:"className,omitempty"`

	// annotations of the Ingress, for the ingress controller. Refused:
	// kubeforge's own (kubeforge.io/*), snippets (*snippet*), and those that
	// have a certificate issued (a name with issuer, acme, certresolver or
	// tls.domains): use tls. The hosts of an alias annotation (a name with
	// alias, e.g. nginx.ingress.kubernetes.io/server-alias) must be DNS
	// names and are checked like host.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`

	// tls, when set, serves the host over HTTPS with a certificate from
	// cert-manager, in the Secret <platform>-<component>-tls.
	// +optional
	TLS *ComponentTLS `json:"tls,omitempty"`
}

// ComponentTLS serves a component's host over HTTPS.
type ComponentTLS struct {
	// issuerRef names the cert-manager Issuer or ClusterIssuer that signs
	// the Certificate for the host.
	// +required
	IssuerRef idev1alpha1.IssuerReference `json:"issuerRef"`
}

// ComponentHooks are a component's lifecycle Jobs.
type ComponentHooks struct {
	// bootstrap runs once, after the component is first Ready (e.g. to
	// create an admin user). The component counts as Ready, and its
	// dependents start, once it succeeded.
	// +optional
	Bootstrap *HookJob `json:"bootstrap,omitempty"`

	// preUpgrade runs with the new image before the component moves to it
	// (e.g. a schema migration), once per image. If it fails, the
	// component stays on its image and is Failed, and the upgrade stops
	// as upgradePolicy.onFailure says.
	// +optional
	PreUpgrade *HookJob `json:"preUpgrade,omitempty"`
}

// HookJob is one lifecycle Job. It runs the component's image (the new one
// for preUpgrade) with the component's env, config, generated secrets and
// database Secret.
type HookJob struct {
	// command of the container; the image's entrypoint when empty.
	// +optional
	// +listType=atomic
	Command []string `json:"command,omitempty"`

	// args of the container.
	// +optional
	// +listType=atomic
	Args []string `json:"args,omitempty"`

	// env added to the component's env for this Job.
	// +optional
	// +listType=map
	// +listMapKey=name
	Env []corev1.EnvVar `json:"env,omitempty"`

	// backoffLimit is how many times a failed pod is retried before the
	// Job fails. Defaults to 2.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=20
	// +optional
	BackoffLimit *int32 `json:"backoffLimit,omitempty"`

	// activeDeadlineSeconds bounds the Job's run. Defaults to 600.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=86400
	// +optional
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"`
}

// PlatformSecret is a Secret of generated values.
type PlatformSecret struct {
	// name of the secret, a DNS label; its Secret is <platform>-<name>.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=40
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	// +required
	Name string `json:"name"`

	// keys of the Secret; each gets its own random value. Keys added later
	// are generated; values of existing keys never change (but on rotation).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +listType=set
	// +required
	Keys []string `json:"keys"`

	// length of each value in characters (letters and digits). Defaults to 32.
	// +kubebuilder:validation:Minimum=16
	// +kubebuilder:validation:Maximum=128
	// +optional
	Length int32 `json:"length,omitempty"`

	// reclaimPolicy: Retain (the default) keeps the Secret when the secret
	// is removed from the spec or the Platform is deleted, so data written
	// with its values stays usable; a Platform of the same name takes it
	// back. Delete removes it with the Platform.
	// +kubebuilder:validation:Enum=Retain;Delete
	// +optional
	ReclaimPolicy string `json:"reclaimPolicy,omitempty"`
}

// PlatformUpgradePolicy is how a version bump that fails is handled.
type PlatformUpgradePolicy struct {
	// onFailure: Pause (the default) stops moving other components to the
	// new version and reports the failed one; Rollback also returns the
	// failed component to the image it ran before. A component has failed
	// when its workload does not progress within progressDeadlineSeconds
	// or its preUpgrade Job failed.
	// +optional
	OnFailure UpgradeFailurePolicy `json:"onFailure,omitempty"`

	// progressDeadlineSeconds is how long a Deployment component may take
	// to make progress before it counts as failed. Defaults to 600.
	// +kubebuilder:validation:Minimum=10
	// +kubebuilder:validation:Maximum=86400
	// +optional
	ProgressDeadlineSeconds *int32 `json:"progressDeadlineSeconds,omitempty"`
}

// DatabaseEngine is the kind of database server.
// +kubebuilder:validation:Enum=mysql;postgresql
type DatabaseEngine string

// The database engines.
const (
	// DatabaseMySQL is MySQL or MariaDB.
	DatabaseMySQL DatabaseEngine = "mysql"
	// DatabasePostgreSQL is PostgreSQL.
	DatabasePostgreSQL DatabaseEngine = "postgresql"
)

// DatabaseTLSMode says how connections to the server use TLS.
// +kubebuilder:validation:Enum=disable;require;verify-full
type DatabaseTLSMode string

// The TLS modes.
const (
	// DatabaseTLSDisable connects without TLS.
	DatabaseTLSDisable DatabaseTLSMode = "disable"
	// DatabaseTLSRequire connects with TLS and does not check the
	// server's certificate: the mode Platforms had by default before
	// verify-full, kept for servers without a certificate one can check.
	DatabaseTLSRequire DatabaseTLSMode = "require"
	// DatabaseTLSVerifyFull connects with TLS and checks the server's
	// certificate against a CA and its name against host.
	DatabaseTLSVerifyFull DatabaseTLSMode = "verify-full"
)

// PlatformDatabase is the database server of a Platform.
// +kubebuilder:validation:XValidation:rule="self.engine == oldSelf.engine",message="database.engine cannot change",fieldPath=".engine"
// +kubebuilder:validation:XValidation:rule="self.host == oldSelf.host",message="database.host cannot change",fieldPath=".host"
type PlatformDatabase struct {
	// engine of the server: mysql (MySQL or MariaDB) or postgresql.
	// Cannot change.
	// +required
	Engine DatabaseEngine `json:"engine"`

	// host name or IP address of the server, as the operator and the
	// components reach it. Cannot change.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Host string `json:"host"`

	// port of the server. Defaults to 3306 for mysql and 5432 for
	// postgresql.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	Port int32 `json:"port,omitempty"`

	// adminSecretRef names a Secret in the Platform's namespace with the
	// keys username and password of a server user that may create
	// databases and users and grant privileges.
	// +required
	AdminSecretRef corev1.LocalObjectReference `json:"adminSecretRef"`

	// tls of the connections the operator makes (and that the Secret's url
	// asks components to make).
	// +optional
	TLS DatabaseTLS `json:"tls,omitempty"`

	// dropOnDelete drops each component's database and user when the
	// Platform is deleted. Off by default: the data outlives the Platform.
	// +optional
	DropOnDelete bool `json:"dropOnDelete,omitempty"`
}

// DatabaseTLS is how connections to the database server use TLS.
type DatabaseTLS struct {
	// mode: verify-full (the default: TLS, the server's certificate
	// checked against caSecretRef, or the operator's trusted authorities
	// when it is unset, and its name against host), require (TLS, the
	// certificate not checked: anyone on the path can pose as the server)
	// or disable (no TLS).
	// +kubebuilder:default=verify-full
	// +optional
	Mode DatabaseTLSMode `json:"mode,omitempty"`

	// caSecretRef names a Secret in the Platform's namespace whose key
	// ca.crt holds the PEM certificate authority of the server, for
	// verify-full; unset, verify-full trusts the authorities of the
	// operator's image (public CAs).
	// +optional
	CASecretRef *corev1.LocalObjectReference `json:"caSecretRef,omitempty"`
}

// ComponentDatabase is a component's own database.
type ComponentDatabase struct {
	// enabled gives the component a database. Turning it off later
	// removes the DB_* variables but keeps the database.
	// +required
	Enabled bool `json:"enabled"`

	// name of the database. Defaults to <namespace>_<platform>_<component>
	// with every character other than a-z, 0-9 and _ replaced by _, cut to
	// fit, then _ and 12 hex digits of a digest of the three names (so
	// that names that read alike, such as a-b/c and a/b-c, never share a
	// database). Lower-case letters, digits and _, starting with a letter
	// or _. Written into the spec when the Platform is created. Cannot
	// change.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Name string `json:"name,omitempty"`

	// user the component logs in as. Defaults to the database's name
	// (for mysql, when longer than 32 characters: cut, then _ and 12 hex
	// digits of a digest of the name). Cannot change.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	User string `json:"user,omitempty"`
}

// ComponentPort is a port a component serves.
type ComponentPort struct {
	// name of the port: an IANA service name, at most 15 characters.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=15
	// +required
	Name string `json:"name"`
	// port number, on the container and the Service.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +required
	Port int32 `json:"port"`
	// protocol: TCP (the default), UDP or SCTP.
	// +kubebuilder:validation:Enum=TCP;UDP;SCTP
	// +kubebuilder:default=TCP
	// +optional
	Protocol corev1.Protocol `json:"protocol,omitempty"`
}

// ComponentService is the Service of a component.
type ComponentService struct {
	// type of the Service: ClusterIP (the default), NodePort or LoadBalancer.
	// +kubebuilder:validation:Enum=ClusterIP;NodePort;LoadBalancer
	// +optional
	Type corev1.ServiceType `json:"type,omitempty"`
}

// ComponentStorage is a component's persistent volume.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.mountPath) || self.mountPath == oldSelf.mountPath",message="storage.mountPath cannot change"
// +kubebuilder:validation:XValidation:rule="has(self.storageClassName) == has(oldSelf.storageClassName) && (!has(self.storageClassName) || self.storageClassName == oldSelf.storageClassName)",message="storage.storageClassName cannot change"
type ComponentStorage struct {
	// size of the volume. It may grow (where the storage class allows
	// expansion) but never shrink.
	// +required
	Size resource.Quantity `json:"size"`
	// storageClassName of the volume; omitted, the cluster's default
	// class (with no default class in the cluster, no volume is made: the
	// Platform reports NoDefaultStorageClass). "" binds a volume made beforehand without a class (one that
	// exists, with its data), which takes the right to create
	// persistentvolumeclaims in the namespace. Cannot change.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`
	// mountPath of the volume in the container. Defaults to
	// /var/lib/<component>. Cannot change.
	// +kubebuilder:validation:Pattern=`^/`
	// +kubebuilder:validation:MaxLength=512
	// +optional
	MountPath string `json:"mountPath,omitempty"`
	// reclaimPolicy: Retain (the default) keeps the volume when the
	// component is disabled or the Platform deleted; Delete removes it.
	// +kubebuilder:validation:Enum=Retain;Delete
	// +kubebuilder:default=Retain
	// +optional
	ReclaimPolicy string `json:"reclaimPolicy,omitempty"`
}

// PlatformPhase is where a Platform is.
// +kubebuilder:validation:Enum=Deploying;Upgrading;Running;Degraded
type PlatformPhase string

// The phases of a Platform.
const (
	PlatformDeploying PlatformPhase = "Deploying"
	PlatformUpgrading PlatformPhase = "Upgrading"
	PlatformRunning   PlatformPhase = "Running"
	PlatformDegraded  PlatformPhase = "Degraded"
)

// ComponentPhase is where a component is.
// +kubebuilder:validation:Enum=Waiting;Deploying;Ready;Disabled;Failed
type ComponentPhase string

// The phases of a component.
const (
	ComponentWaiting   ComponentPhase = "Waiting"
	ComponentDeploying ComponentPhase = "Deploying"
	ComponentReady     ComponentPhase = "Ready"
	ComponentDisabled  ComponentPhase = "Disabled"
	ComponentFailed    ComponentPhase = "Failed"
)

// ComponentStatus is what was observed of one component.
type ComponentStatus struct {
	// name of the component.
	Name string `json:"name"`
	// phase of the component.
	Phase ComponentPhase `json:"phase"`
	// image the component runs (or is moving to), computed from
	// imageRepository, imageName and tag or version.
	// +optional
	Image string `json:"image,omitempty"`
	// replicas of the workload (desired pods scheduled, for a DaemonSet).
	// +optional
	Replicas int32 `json:"replicas"`
	// readyReplicas of the workload.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas"`
	// databaseReady says whether the component's database and user exist
	// with the password of its Secret; unset when it has no database.
	// +optional
	DatabaseReady *bool `json:"databaseReady,omitempty"`
	// url the component is reached at through its Ingress.
	// +optional
	URL string `json:"url,omitempty"`
	// bootstrapped is true once the component's bootstrap Job succeeded;
	// it never runs again.
	// +optional
	Bootstrapped bool `json:"bootstrapped,omitempty"`
	// previousImage is the image the component ran before its last move
	// to a new image; a Rollback returns it there.
	// +optional
	PreviousImage string `json:"previousImage,omitempty"`
	// failedImage is an image the component failed to move to and was
	// rolled back from; it does not try it again until the target changes.
	// +optional
	FailedImage string `json:"failedImage,omitempty"`
	// message says what the component waits for or what went wrong.
	// +optional
	Message string `json:"message,omitempty"`
}

// PlatformStatus is the observed state of a Platform.
type PlatformStatus struct {
	// observedGeneration is the metadata.generation that this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// phase: Deploying, Upgrading (a version bump is rolling through the
	// components), Running (every enabled component is Ready on the
	// current version), Degraded (a component failed or the spec is invalid).
	// +optional
	Phase PlatformPhase `json:"phase,omitempty"`
	// version every enabled component runs, set once they all do.
	// +optional
	Version string `json:"version,omitempty"`
	// ready is "<ready>/<enabled>" components, for kubectl get.
	// +optional
	Ready string `json:"ready,omitempty"`
	// components, in spec order.
	// +optional
	// +listType=map
	// +listMapKey=name
	Components []ComponentStatus `json:"components,omitempty"`
	// conditions: Ready, Progressing, Degraded, and DatabaseReady when
	// spec.database is set.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Platform deploys a multi-component platform — services that share one
// image registry and version — as Deployments, StatefulSets, DaemonSets and
// CronJobs with their Services, config and storage, in dependency order,
// and rolls a version bump through them in that order.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=plat,categories=kubeforge
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.status.version`,description="The version every enabled component runs"
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`,description="Deploying, Upgrading, Running or Degraded"
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.ready`,description="Ready components of the enabled ones"
// +kubebuilder:printcolumn:name="Target",type=string,JSONPath=`.spec.version`,priority=1,description="The version asked for"
// +kubebuilder:printcolumn:name="Database",type=string,JSONPath=`.status.conditions[?(@.type=="DatabaseReady")].reason`,priority=1,description="Provisioned, or why the database server fails"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Platform struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the Platform.
	// +required
	Spec PlatformSpec `json:"spec"`

	// status is the observed state of the Platform, written by the operator.
	// +optional
	Status PlatformStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// PlatformList is a list of Platforms.
type PlatformList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Platform `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Platform{}, &PlatformList{})
}
