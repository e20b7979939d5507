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

package platform

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	"github.com/kubeforge/kubeforge/controllers/platform/database"
	"github.com/kubeforge/kubeforge/internal/engine"
	"github.com/kubeforge/kubeforge/internal/workload"
)

// ObjectName is the name of a component's workload and Service.
func ObjectName(p *appsv1alpha1.Platform, c *appsv1alpha1.PlatformComponent) string {
	return appsv1alpha1.PlatformObjectName(p, c)
}

// ConfigMapName is the name of a component's ConfigMap.
func ConfigMapName(p *appsv1alpha1.Platform, c *appsv1alpha1.PlatformComponent) string {
	return ObjectName(p, c) + "-config"
}

// PVCName is the name of a Deployment component's volume claim.
func PVCName(p *appsv1alpha1.Platform, c *appsv1alpha1.PlatformComponent) string {
	return appsv1alpha1.PlatformClaimName(p, c)
}

// EffectiveImage is the image a component runs at the spec's version:
// image if given, otherwise imageRepository/imageName:tag, with the tag
// defaulting to spec.version. It is computed here, never written into the
// spec, so a version bump cascades.
func EffectiveImage(p *appsv1alpha1.Platform, c *appsv1alpha1.PlatformComponent) string {
	if c.Image != "" {
		return c.Image
	}
	name := c.ImageName
	tag := c.Tag
	if tag == "" {
		tag = p.Spec.Version
	}
	return strings.TrimSuffix(p.Spec.ImageRepository, "/") + "/" + name + ":" + tag
}

// SelectorLabels select a component's pods.
func SelectorLabels(p *appsv1alpha1.Platform, c *appsv1alpha1.PlatformComponent) map[string]string {
	return map[string]string{appsv1alpha1.PlatformLabel: p.Name, appsv1alpha1.PlatformComponentLabel: c.Name}
}

func objectMeta(p *appsv1alpha1.Platform, c *appsv1alpha1.PlatformComponent, name string) metav1.ObjectMeta {
	labels := engine.CommonLabels(p, c.Name)
	labels[appsv1alpha1.PlatformLabel] = p.Name
	labels[appsv1alpha1.PlatformComponentLabel] = c.Name
	return metav1.ObjectMeta{Name: name, Namespace: p.Namespace, Labels: labels}
}

// Input is what a component's objects are built from besides the spec:
// what the reconciler decided and observed.
type Input struct {
	// Image the component runs, or moves to.
	Image string
	// DBVersion is the resourceVersion of the component's database Secret
	// that the server holds; empty, the component gets no DB_* variables
	// (yet).
	DBVersion string
	// Version is the platform version its config templates are rendered
	// with: the one its image belongs to.
	Version string
	// SecretsVersion is a digest of the versions of the generated Secrets
	// it references; a rotation changes it and rolls the component.
	SecretsVersion string
	// CertManager says that Certificates can be made for its Ingress.
	CertManager bool
	// PreviousImage and FailedImage are recorded on the workload, next to
	// the image they belong with: what it ran before its last move, and
	// the image it was rolled back from.
	PreviousImage, FailedImage string
	// PodSecurity is the profile its pods get (PodSecurityOf).
	PodSecurity appsv1alpha1.PodSecurity
}

// PodSecurityOf is the profile a component's pods get: its podSecurity;
// unset, Baseline for a workload that already runs unrestricted (made by
// an operator older than the field: it keeps running as it did, and
// legacy is true, for the condition and the Warning), and Restricted for
// everything else — a new component, or one admitted without the
// webhook, which would otherwise have written the default.
func PodSecurityOf(c *appsv1alpha1.PlatformComponent, l Live) (profile appsv1alpha1.PodSecurity, legacy bool) {
	switch {
	case c.PodSecurity != "":
		return c.PodSecurity, false
	case l.Exists && l.Unrestricted:
		return appsv1alpha1.PodSecurityBaseline, true
	}
	return appsv1alpha1.PodSecurityRestricted, false
}

// dataGroup owns a restricted component's volume, so that its non-root
// user (a member through fsGroup) can write a fresh one.
const dataGroup int64 = 65532

// ComponentObjects are the objects of one enabled component: its volume
// claim (Deployment with storage), Service (when it has ports), workload,
// Ingress and its Certificate, and the ConfigMap that shows its config.
func ComponentObjects(p *appsv1alpha1.Platform, c *appsv1alpha1.PlatformComponent, in Input) []client.Object {
	var objs []client.Object
	files := RenderedConfig(p, c, in.Version)
	if c.Storage != nil && c.Workload == appsv1alpha1.WorkloadDeployment {
		objs = append(objs, PVC(p, c))
	}
	hasService := len(c.Ports) > 0 && c.Workload != appsv1alpha1.WorkloadCronJob
	if hasService {
		objs = append(objs, Service(p, c))
	}
	objs = append(objs, Workload(p, c, in, files))
	if c.Ingress != nil && hasService {
		if c.Ingress.TLS != nil && in.CertManager {
			objs = append(objs, Certificate(p, c))
		}
		objs = append(objs, Ingress(p, c))
	}
	if len(c.Config) > 0 {
		objs = append(objs, ConfigMap(p, c, files))
	}
	return objs
}

// Services are the Services of every enabled component that has one,
// whether or not its workload is deployed yet. The reconciler applies
// them before any component's objects: a component's config names the
// others' Services (the template function service), so each must be
// proven the Platform's before a pod is pointed at it — one someone made
// under the name first is a NameConflict, and nothing after it is applied.
func Services(p *appsv1alpha1.Platform) []client.Object {
	var out []client.Object
	for i := range p.Spec.Components {
		c := &p.Spec.Components[i]
		if !c.Disable && len(c.Ports) > 0 && c.Workload != appsv1alpha1.WorkloadCronJob {
			out = append(out, Service(p, c))
		}
	}
	return out
}

// RenderedConfig is the component's config with its templates rendered;
// a file that does not render (which admission refuses) is left out.
func RenderedConfig(p *appsv1alpha1.Platform, c *appsv1alpha1.PlatformComponent, version string) map[string]string {
	files, _ := appsv1alpha1.RenderConfig(p, c, version)
	return files
}

// Workload builds the component's Deployment, StatefulSet, DaemonSet or
// CronJob with its rendered config files.
func Workload(p *appsv1alpha1.Platform, c *appsv1alpha1.PlatformComponent, in Input, files map[string]string) client.Object {
	meta := objectMeta(p, c, ObjectName(p, c))
	for k, v := range map[string]string{appsv1alpha1.PreviousImageAnnotation: in.PreviousImage, appsv1alpha1.FailedImageAnnotation: in.FailedImage} {
		if v != "" {
			if meta.Annotations == nil {
				meta.Annotations = map[string]string{}
			}
			meta.Annotations[k] = v
		}
	}
	selector := &metav1.LabelSelector{MatchLabels: SelectorLabels(p, c)}
	tmpl := podTemplate(p, c, in, files)
	switch c.Workload {
	case appsv1alpha1.WorkloadStatefulSet:
		sts := &appsv1.StatefulSet{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
			ObjectMeta: meta,
			Spec: appsv1.StatefulSetSpec{
				Replicas:            ptr.To(*c.Replicas),
				Selector:            selector,
				ServiceName:         ObjectName(p, c),
				PodManagementPolicy: appsv1.OrderedReadyPodManagement,
				Template:            tmpl,
			},
		}
		if s := c.Storage; s != nil {
			policy := appsv1.RetainPersistentVolumeClaimRetentionPolicyType
			if s.ReclaimPolicy == "Delete" {
				policy = appsv1.DeletePersistentVolumeClaimRetentionPolicyType
			}
			sts.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenDeleted: policy, WhenScaled: appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
			}
			// No TypeMeta: the API server stores templates without one, and a
			// field it drops would cost a write on every reconcile.
			sts.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "data", Labels: SelectorLabels(p, c)},
				Spec:       claimSpec(s),
			}}
		}
		return sts
	case appsv1alpha1.WorkloadDaemonSet:
		return &appsv1.DaemonSet{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"},
			ObjectMeta: meta,
			Spec:       appsv1.DaemonSetSpec{Selector: selector, Template: tmpl},
		}
	case appsv1alpha1.WorkloadCronJob:
		tmpl.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		return &batchv1.CronJob{
			TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "CronJob"},
			ObjectMeta: meta,
			Spec: batchv1.CronJobSpec{
				Schedule:          c.Schedule,
				ConcurrencyPolicy: batchv1.ForbidConcurrent,
				JobTemplate: batchv1.JobTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: SelectorLabels(p, c)},
					Spec:       batchv1.JobSpec{Template: tmpl},
				},
			},
		}
	default:
		dep := &appsv1.Deployment{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
			ObjectMeta: meta,
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To(*c.Replicas), Selector: selector, Template: tmpl,
				ProgressDeadlineSeconds: p.Spec.UpgradePolicy.ProgressDeadlineSeconds},
		}
		if c.Storage != nil {
			// A ReadWriteOnce volume cannot be shared by an old and a new pod
			// on two nodes: replace the pod instead of rolling.
			dep.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
		}
		return dep
	}
}

func podTemplate(p *appsv1alpha1.Platform, c *appsv1alpha1.PlatformComponent, in Input, files map[string]string) corev1.PodTemplateSpec {
	labels := engine.CommonLabels(p, c.Name)
	for k, v := range SelectorLabels(p, c) {
		labels[k] = v
	}
	pullPolicy := p.Spec.ImagePullPolicy
	container := corev1.Container{
		Name:            c.Name,
		Image:           in.Image,
		ImagePullPolicy: pullPolicy,
		Command:         c.Command,
		Args:            c.Args,
		Env:             configEnv(p, c.Env, in.Version),
	}
	for _, pt := range c.Ports {
		container.Ports = append(container.Ports, corev1.ContainerPort{Name: pt.Name, ContainerPort: pt.Port, Protocol: pt.Protocol})
	}
	if c.Resources != nil {
		container.Resources = *c.Resources
	}
	container.ReadinessProbe = c.ReadinessProbe
	spec := corev1.PodSpec{
		NodeSelector:     c.NodeSelector,
		Tolerations:      c.Tolerations,
		Affinity:         c.Affinity,
		ImagePullSecrets: p.Spec.ImagePullSecrets,
	}
	annotations := map[string]string{}
	if in.DBVersion != "" {
		// From the Secret, never as literal values; a new Secret version
		// (a rotated password) rolls the pods.
		secret := DatabaseSecretName(p, c)
		for _, v := range []struct{ env, key string }{
			{"DB_HOST", "host"}, {"DB_PORT", "port"}, {"DB_NAME", "database"}, {"DB_USER", "username"}, {"DB_PASSWORD", "password"},
		} {
			container.Env = append(container.Env, corev1.EnvVar{Name: v.env, ValueFrom: &corev1.EnvVarSource{
				SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: v.key},
			}})
		}
		annotations[appsv1alpha1.DatabaseSecretVersionAnnotation] = in.DBVersion
	}
	if in.SecretsVersion != "" {
		annotations[appsv1alpha1.PlatformSecretsVersionAnnotation] = in.SecretsVersion
	}
	var config *corev1.Volume
	if len(c.Config) > 0 {
		// In the pod template, not mounted from the ConfigMap (which shows
		// them): workload.TemplateFiles. RenderConfig keeps them within
		// what a template carries.
		tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: annotations}}
		if v, err := workload.TemplateFiles(&tmpl, "config", files); err == nil {
			config = &v
			container.VolumeMounts = append(container.VolumeMounts, corev1.VolumeMount{Name: "config", MountPath: "/etc/" + c.Name, ReadOnly: true})
		}
		annotations[appsv1alpha1.PlatformConfigHashAnnotation] = ConfigHash(files)
	}
	if config != nil {
		spec.Volumes = append(spec.Volumes, *config)
	}
	if s := c.Storage; s != nil {
		container.VolumeMounts = append(container.VolumeMounts, corev1.VolumeMount{Name: "data", MountPath: c.Storage.MountPath})
		if c.Workload == appsv1alpha1.WorkloadDeployment {
			spec.Volumes = append(spec.Volumes, corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: PVCName(p, c)},
			}})
		}
	}
	spec.Containers = []corev1.Container{container}
	if in.PodSecurity != appsv1alpha1.PodSecurityBaseline {
		// The image's own user, which must not be root; no token (the
		// component names no ServiceAccount).
		sec := workload.Security{}
		if c.Storage != nil {
			sec.FSGroup = ptr.To(dataGroup)
		}
		workload.Restrict(&spec, sec)
	}
	if len(annotations) == 0 {
		annotations = nil
	}
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: annotations}, Spec: spec}
}

func claimSpec(s *appsv1alpha1.ComponentStorage) corev1.PersistentVolumeClaimSpec {
	return corev1.PersistentVolumeClaimSpec{
		AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		StorageClassName: s.StorageClassName,
		Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: s.Size}},
	}
}

// configEnv is env with each value read from a component's ConfigMap
// (configMapKeyRef to <platform>-<component>-config, this component's or
// another's) written in as the file's rendered content: a ConfigMap is
// anyone's to rewrite who may write ConfigMaps, the pod template only
// theirs who may change the workload. An optional reference to a file the
// config does not have sets nothing, as Kubernetes would; admission refuses
// any other reference to a file that is not there, or to a disabled
// component's config (one stored before this rule stays a reference).
func configEnv(p *appsv1alpha1.Platform, env []corev1.EnvVar, version string) []corev1.EnvVar {
	var out []corev1.EnvVar
	for _, e := range env {
		ref := e.ValueFrom
		if ref == nil || ref.ConfigMapKeyRef == nil {
			out = append(out, e)
			continue
		}
		kept := e
		for j := range p.Spec.Components {
			other := &p.Spec.Components[j]
			if other.Disable || ConfigMapName(p, other) != ref.ConfigMapKeyRef.Name {
				continue
			}
			content, ok := RenderedConfig(p, other, version)[ref.ConfigMapKeyRef.Key]
			switch {
			case ok:
				kept = corev1.EnvVar{Name: e.Name, Value: content}
			case ref.ConfigMapKeyRef.Optional != nil && *ref.ConfigMapKeyRef.Optional:
				kept = corev1.EnvVar{}
			}
		}
		if kept.Name != "" {
			out = append(out, kept)
		}
	}
	return out
}

// ConfigHash is a digest of a component's config files.
func ConfigHash(files map[string]string) string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		h.Write([]byte(n))
		h.Write([]byte{0})
		h.Write([]byte(files[n]))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// ConfigMap shows a component's rendered config files to whoever reads
// them. The component does not mount it: it reads the copy its own pod
// template carries, which only someone who may change the workload or its
// Pods (and so their image) can change.
func ConfigMap(p *appsv1alpha1.Platform, c *appsv1alpha1.PlatformComponent, files map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: objectMeta(p, c, ConfigMapName(p, c)),
		Data:       files,
	}
}

// PVC is a Deployment component's volume. With the Retain policy it has no
// owner reference, so it outlives the component and the Platform.
func PVC(p *appsv1alpha1.Platform, c *appsv1alpha1.PlatformComponent) *corev1.PersistentVolumeClaim {
	pvc := &corev1.PersistentVolumeClaim{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		ObjectMeta: objectMeta(p, c, PVCName(p, c)),
		Spec:       claimSpec(c.Storage),
	}
	// Kept for this Platform's component: only it takes a retained claim back.
	engine.Claim(pvc, "component="+c.Name)
	if c.Storage.ReclaimPolicy != "Delete" {
		engine.Retain(pvc)
	}
	return pvc
}

// Service exposes a component's ports.
func Service(p *appsv1alpha1.Platform, c *appsv1alpha1.PlatformComponent) *corev1.Service {
	t := c.Service.Type
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: objectMeta(p, c, ObjectName(p, c)),
		Spec:       corev1.ServiceSpec{Type: t, Selector: SelectorLabels(p, c)},
	}
	for _, pt := range c.Ports {
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: pt.Name, Protocol: pt.Protocol, Port: pt.Port, TargetPort: intstr.FromInt32(pt.Port)})
	}
	return svc
}

// DatabaseSecretName is the name of a component's database Secret.
func DatabaseSecretName(p *appsv1alpha1.Platform, c *appsv1alpha1.PlatformComponent) string {
	return appsv1alpha1.PlatformDatabaseSecretName(p, c)
}

// DatabaseServer is how components reach the Platform's database server
// (the admin's credentials are not part of it).
func DatabaseServer(p *appsv1alpha1.Platform) database.Server {
	d := p.Spec.Database
	return database.Server{Engine: string(d.Engine), Host: d.Host, Port: d.Port,
		TLSMode: string(cmp.Or(d.TLS.Mode, appsv1alpha1.DatabaseTLSVerifyFull))}
}

// DatabaseSecret holds a component's database credentials: host, port,
// database, username, password and url.
func DatabaseSecret(p *appsv1alpha1.Platform, c *appsv1alpha1.PlatformComponent, password string) *corev1.Secret {
	server := DatabaseServer(p)
	name, user := appsv1alpha1.DatabaseName(p, c), appsv1alpha1.DatabaseUser(p, c)
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: objectMeta(p, c, DatabaseSecretName(p, c)),
		Type:       corev1.SecretTypeOpaque,
		Data: map[string][]byte{
			"host":     []byte(server.Host),
			"port":     []byte(strconv.Itoa(int(server.Port))),
			"database": []byte(name),
			"username": []byte(user),
			"password": []byte(password),
			"url":      []byte(database.URL(server, name, user, password)),
		},
	}
}
