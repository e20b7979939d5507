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

package workspace

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/engine"
	"github.com/kubeforge/kubeforge/internal/expose"
	"github.com/kubeforge/kubeforge/internal/secret"
	"github.com/kubeforge/kubeforge/internal/validation"
	"github.com/kubeforge/kubeforge/internal/workload"
)

// component is the app.kubernetes.io/component of a Workspace's objects.
const component = "workspace"

// PodHashAnnotation on the Pod is a digest of its desired spec. A Pod's
// spec cannot change in place, so a Workspace whose spec moved on gets a
// new Pod: the reconciler deletes the one whose hash differs.
const PodHashAnnotation = "ide.kubeforge.io/pod-hash"

// Names of a Workspace's objects.
func PVCName(ws *idev1alpha1.Workspace) string { return idev1alpha1.WorkspaceHomeClaimName(ws) }

// TLSSecretName is the Secret the Certificate writes and the Ingress serves.
func TLSSecretName(ws *idev1alpha1.Workspace) string { return ws.Name + "-tls" }

// SelectorLabels select a Workspace's Pod.
func SelectorLabels(ws *idev1alpha1.Workspace) map[string]string {
	return map[string]string{idev1alpha1.WorkspaceLabel: ws.Name}
}

// Started reports whether the spec asks for the IDE to run.
func Started(ws *idev1alpha1.Workspace) bool { return *ws.Spec.Started }

// DesiredObjects are the objects a Workspace owns, built from its spec
// and the manager's options: the home volume, the Service and the
// NetworkPolicy always, auth (AuthSecret) when given, the Pod while
// started, the Ingress and (with cert-manager) the Certificate when asked
// for; in the order of DesiredStages.
func DesiredObjects(ws *idev1alpha1.Workspace, opts Options, auth *corev1.Secret) []client.Object {
	var objs []client.Object
	for _, stage := range DesiredStages(ws, opts, auth) {
		objs = append(objs, stage...)
	}
	return objs
}

// DesiredStages are DesiredObjects in the stages the engine applies them
// in (engine.ApplyStages): the volume, the NetworkPolicy and the Secret
// first, at the same time — the Pod uses each, and the IDE is never
// reachable unfenced, not even for a moment; then the Pod, which is what
// the user waits for; then the Service; then the Ingress, which routes to
// that Service by name, and its Certificate.
func DesiredStages(ws *idev1alpha1.Workspace, opts Options, auth *corev1.Secret) [][]client.Object {
	first := []client.Object{PVC(ws), NetworkPolicy(ws, opts.AllowFrom)}
	if auth != nil {
		first = append(first, auth)
	}
	stages := [][]client.Object{first}
	if Started(ws) {
		stages = append(stages, []client.Object{Pod(ws)})
	}
	stages = append(stages, []client.Object{Service(ws)})
	if ws.Spec.Ingress != nil {
		exposure := []client.Object{Ingress(ws)}
		if ws.Spec.Ingress.TLS != nil && opts.CertManager {
			exposure = append(exposure, Certificate(ws))
		}
		stages = append(stages, exposure)
	}
	return stages
}

// Options are the manager's settings that shape every Workspace's
// objects.
type Options struct {
	// CertManager says that cert-manager's CRDs are installed, so
	// Certificates can be created and watched.
	CertManager bool
	// AllowFrom are the namespaces whose Pods may reach an IDE: the
	// ingress controller's, and any the administrator adds
	// (--workspace-allow-namespaces).
	AllowFrom []string
	// Policy is what the administrator allows Ingresses and IDEs without
	// a password (admit.WorkspaceWith).
	Policy validation.Policy
}

// Keys of the auth Secret.
const (
	PasswordKey       = "password"
	HashedPasswordKey = "hashedPassword"
)

// PasswordLength is the length of a generated IDE password: 24 letters
// and digits, about 143 bits.
const PasswordLength = 24

// AuthSecret is the Secret of a Workspace with auth mode Password, or nil.
// It is created once (CreateOnly) and then left alone, so values is asked
// for only when it does not exist yet. Deleting the Secret makes a new
// password, which the IDE takes at its next start.
func AuthSecret(ws *idev1alpha1.Workspace, exists bool, values func() (map[string][]byte, error)) (*corev1.Secret, error) {
	if ws.Spec.Auth.Mode != idev1alpha1.AuthPassword {
		return nil, nil
	}
	sec := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: objectMeta(ws, idev1alpha1.WorkspaceAuthSecretName(ws)),
		Type:       corev1.SecretTypeOpaque,
	}
	if exists {
		// Kept as it is, never created without its password (the caller's
		// look may be older than a delete).
		engine.KeepOnly(sec)
		return sec, nil
	}
	engine.CreateOnly(sec)
	data, err := values()
	if err != nil {
		return nil, err
	}
	sec.Data = data
	return sec, nil
}

// NewPassword is a generated password and its argon2id hash, as the auth
// Secret holds them.
func NewPassword() (map[string][]byte, error) {
	pw, err := secret.Random(PasswordLength)
	if err != nil {
		return nil, err
	}
	hash, err := secret.Hash(pw)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{PasswordKey: []byte(pw), HashedPasswordKey: []byte(hash)}, nil
}

// NetworkPolicy admits traffic to the IDE's port only from Pods in the
// allowed namespaces; every other source, other namespaces and the
// Workspace's own included, is refused by a network plugin that enforces
// NetworkPolicies. With no allowed namespace, nothing in the cluster may
// reach the IDE (the kubelet's probes come from the node, which
// NetworkPolicies do not govern).
func NetworkPolicy(ws *idev1alpha1.Workspace, allowFrom []string) *networkingv1.NetworkPolicy {
	np := &networkingv1.NetworkPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
		ObjectMeta: objectMeta(ws, ws.Name),
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: SelectorLabels(ws)},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
		},
	}
	if len(allowFrom) > 0 {
		port := intstr.FromInt32(ws.Spec.Port)
		np.Spec.Ingress = append(np.Spec.Ingress, networkingv1.NetworkPolicyIngressRule{
			Ports: []networkingv1.NetworkPolicyPort{{Protocol: ptr.To(corev1.ProtocolTCP), Port: &port}},
			From: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{
				MatchExpressions: []metav1.LabelSelectorRequirement{{
					Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpIn, Values: slices.Clone(allowFrom),
				}},
			}}},
		})
	}
	return np
}

func objectMeta(ws *idev1alpha1.Workspace, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: ws.Namespace, Labels: engine.CommonLabels(ws, component)}
}

// PVC is the home volume. With reclaimPolicy Retain it carries no owner
// reference, so it outlives the Workspace.
func PVC(ws *idev1alpha1.Workspace) *corev1.PersistentVolumeClaim {
	size := *ws.Spec.Storage.Size
	pvc := &corev1.PersistentVolumeClaim{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		ObjectMeta: objectMeta(ws, PVCName(ws)),
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: ws.Spec.Storage.StorageClassName,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}},
		},
	}
	// Kept for this Workspace's recorded owner (the engine binds its seal
	// to the owner's kind, name and owner): another person's Workspace of
	// the same name never mounts this home.
	engine.Claim(pvc, "home")
	if ws.Spec.Storage.ReclaimPolicy == idev1alpha1.ReclaimRetain {
		engine.Retain(pvc)
	}
	return pvc
}

// Pod runs the IDE as a non-root user with the home volume mounted and a
// readiness probe on the IDE's port: the Pod is Ready only when the IDE
// answers HTTP.
func Pod(ws *idev1alpha1.Workspace) *corev1.Pod {
	image, pullPolicy := ws.Spec.Image, ws.Spec.ImagePullPolicy
	p := ws.Spec.Port
	env := []corev1.EnvVar{{Name: "PORT", Value: fmt.Sprint(p)}}
	if ws.Spec.Auth.Mode == idev1alpha1.AuthPassword {
		env = append(env, corev1.EnvVar{Name: "KUBEFORGE_IDE_AUTH", Value: "password"}, corev1.EnvVar{
			Name: "HASHED_PASSWORD",
			ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: idev1alpha1.WorkspaceAuthSecretName(ws)}, Key: HashedPasswordKey,
			}},
		})
	} else {
		env = append(env, corev1.EnvVar{Name: "KUBEFORGE_IDE_AUTH", Value: "none"})
	}
	env = append(env, ws.Spec.Env...)
	labels := engine.CommonLabels(ws, component)
	for k, v := range SelectorLabels(ws) {
		labels[k] = v
	}
	if ws.Spec.User != "" {
		labels[idev1alpha1.UserLabel] = ws.Spec.User
	}
	container := corev1.Container{
		Name:            "ide",
		Image:           image,
		ImagePullPolicy: pullPolicy,
		Env:             env,
		Ports:           []corev1.ContainerPort{{Name: "http", ContainerPort: p, Protocol: corev1.ProtocolTCP}},
		VolumeMounts:    []corev1.VolumeMount{{Name: "home", MountPath: ws.Spec.Storage.MountPath}},
		ReadinessProbe: &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: ws.Spec.HealthPath, Port: intstr.FromInt32(p), Scheme: corev1.URISchemeHTTP}},
			PeriodSeconds: 2, FailureThreshold: 3, SuccessThreshold: 1, TimeoutSeconds: 1,
		},
	}
	if ws.Spec.Resources != nil {
		container.Resources = *ws.Spec.Resources
	}
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: ws.Name, Namespace: ws.Namespace, Labels: labels},
		Spec: corev1.PodSpec{
			Hostname:      ws.Name,
			RestartPolicy: corev1.RestartPolicyAlways,
			Containers:    []corev1.Container{container},
			Volumes: []corev1.Volume{{
				Name: "home",
				VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{
					ClaimName: PVCName(ws),
				}},
			}},
		},
	}
	// Restricted, as the user the home belongs to; code-server does not
	// call the API server, so it gets no token.
	workload.Restrict(&pod.Spec, workload.Security{User: ptr.To(idev1alpha1.WorkspaceUID), FSGroup: ptr.To(idev1alpha1.WorkspaceUID)})
	pod.Annotations = map[string]string{PodHashAnnotation: podHash(pod)}
	return pod
}

// Service gives the IDE a stable name inside the cluster.
func Service(ws *idev1alpha1.Workspace) *corev1.Service {
	p := ws.Spec.Port
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: objectMeta(ws, ws.Name),
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: SelectorLabels(ws),
			Ports:    []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: p, TargetPort: intstr.FromInt32(p)}},
		},
	}
}

// Ingress routes the host to the Service, over TLS from the Certificate's
// Secret when tls is set.
func Ingress(ws *idev1alpha1.Workspace) *networkingv1.Ingress {
	in := ws.Spec.Ingress
	r := expose.Route{Host: in.Host, Path: "/", PathType: networkingv1.PathTypePrefix, ClassName: in.ClassName, Service: ws.Name, Port: "http"}
	if in.TLS != nil {
		r.TLSSecret = TLSSecretName(ws)
	}
	return expose.Ingress(objectMeta(ws, ws.Name), r)
}

// Certificate asks cert-manager for a certificate for the ingress host.
func Certificate(ws *idev1alpha1.Workspace) *cmv1.Certificate {
	return expose.Certificate(objectMeta(ws, TLSSecretName(ws)), ws.Spec.Ingress.Host, TLSSecretName(ws), ws.Spec.Ingress.TLS.IssuerRef)
}

// podHash is a digest of the parts of a Pod that cannot change in place.
func podHash(pod *corev1.Pod) string {
	raw, _ := json.Marshal(struct {
		Labels map[string]string
		Spec   corev1.PodSpec
	}{pod.Labels, pod.Spec})
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:8])
}
