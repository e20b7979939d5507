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
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"sort"
	"strings"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/engine"
	"github.com/kubeforge/kubeforge/internal/expose"
	"github.com/kubeforge/kubeforge/internal/validation"
)

// The hooks of a component.
const (
	HookBootstrap  = "bootstrap"
	HookPreUpgrade = "pre-upgrade"
)

// TLSSecretName is the Secret of a component's Ingress certificate.
func TLSSecretName(p *appsv1alpha1.Platform, c *appsv1alpha1.PlatformComponent) string {
	return ObjectName(p, c) + "-tls"
}

// IngressPort is the name of the port a component's Ingress routes to:
// ingress.port, or the first port.
func IngressPort(c *appsv1alpha1.PlatformComponent) string {
	if c.Ingress.Port != "" {
		return c.Ingress.Port
	}
	if len(c.Ports) == 0 {
		return ""
	}
	return c.Ports[0].Name
}

// URL is where a component's Ingress serves it.
func URL(c *appsv1alpha1.PlatformComponent) string {
	in := c.Ingress
	if in == nil {
		return ""
	}
	scheme := "http://"
	if in.TLS != nil {
		scheme = "https://"
	}
	return scheme + in.Host + in.Path
}

// Ingress routes a component's host and path to its Service port.
func Ingress(p *appsv1alpha1.Platform, c *appsv1alpha1.PlatformComponent) *networkingv1.Ingress {
	in := c.Ingress
	meta := objectMeta(p, c, ObjectName(p, c))
	for k, v := range in.Annotations {
		// kubeforge's own and snippet annotations never reach the ingress
		// controller, also when stored before admission refused them.
		if validation.ForbiddenIngressAnnotation(k, v) != "" {
			continue
		}
		if meta.Annotations == nil {
			meta.Annotations = map[string]string{}
		}
		meta.Annotations[k] = v
	}
	r := expose.Route{Host: in.Host, Path: in.Path, PathType: *in.PathType, ClassName: in.ClassName, Service: ObjectName(p, c), Port: IngressPort(c)}
	if in.TLS != nil {
		r.TLSSecret = TLSSecretName(p, c)
	}
	return expose.Ingress(meta, r)
}

// Certificate asks cert-manager for the certificate of a component's host.
func Certificate(p *appsv1alpha1.Platform, c *appsv1alpha1.PlatformComponent) *cmv1.Certificate {
	return expose.Certificate(objectMeta(p, c, TLSSecretName(p, c)), c.Ingress.Host, TLSSecretName(p, c), c.Ingress.TLS.IssuerRef)
}

// HookJobName is the name of a component's hook Job: deterministic, so a
// retry finds the Job it made. A preUpgrade Job's name carries a digest of
// the image it prepares for, so it runs once per image.
func HookJobName(p *appsv1alpha1.Platform, c *appsv1alpha1.PlatformComponent, hook, image string) string {
	base, suffix := ObjectName(p, c), "-"+hook
	if hook == HookPreUpgrade {
		suffix += "-" + digest(image)
	}
	// A Job's name is also a label value of its pods: at most 63.
	if max := utilvalidation.DNS1123LabelMaxLength; len(base)+len(suffix) > max {
		base = strings.TrimRight(base[:max-len(suffix)-9], "-") + "-" + digest(base)
	}
	return base + suffix
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:4])
}

// HookJob runs one of a component's hooks with image: the component's
// container (env, config, generated and database Secrets) with the hook's
// command, args and env, once. Its pods do not carry the component's
// selector labels, so its Service never routes to them.
func HookJob(p *appsv1alpha1.Platform, c *appsv1alpha1.PlatformComponent, hook string, h *appsv1alpha1.HookJob, in Input) *batchv1.Job {
	tmpl := podTemplate(p, c, in, RenderedConfig(p, c, in.Version))
	labels := engine.CommonLabels(p, c.Name)
	labels[appsv1alpha1.PlatformLabel] = p.Name
	labels[appsv1alpha1.PlatformHookLabel] = hook
	tmpl.Labels = labels
	tmpl.Spec.RestartPolicy = corev1.RestartPolicyNever
	// The data volume may be ReadWriteOnce and in use by the component.
	tmpl.Spec.Volumes = slices.DeleteFunc(tmpl.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == "data" })
	ctr := &tmpl.Spec.Containers[0]
	ctr.VolumeMounts = slices.DeleteFunc(ctr.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == "data" })
	ctr.Name = hook
	ctr.Ports, ctr.ReadinessProbe = nil, nil
	if len(h.Command) > 0 {
		ctr.Command = h.Command
	}
	if len(h.Args) > 0 || len(h.Command) > 0 {
		ctr.Args = h.Args
	}
	for _, e := range configEnv(p, h.Env, in.Version) {
		ctr.Env = slices.DeleteFunc(ctr.Env, func(x corev1.EnvVar) bool { return x.Name == e.Name })
		ctr.Env = append(ctr.Env, e)
	}
	ctr.TerminationMessagePolicy = corev1.TerminationMessageFallbackToLogsOnError
	meta := objectMeta(p, c, HookJobName(p, c, hook, in.Image))
	meta.Labels[appsv1alpha1.PlatformHookLabel] = hook
	delete(meta.Labels, appsv1alpha1.PlatformComponentLabel)
	job := &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: meta,
		Spec: batchv1.JobSpec{
			BackoffLimit:          ptr.To(*h.BackoffLimit),
			ActiveDeadlineSeconds: ptr.To(*h.ActiveDeadlineSeconds),
			Template:              tmpl,
		},
	}
	// A Job records one run; its spec cannot change.
	engine.CreateOnly(job)
	return job
}

// GeneratedSecretName is the name of one of the Platform's generated Secrets.
func GeneratedSecretName(p *appsv1alpha1.Platform, name string) string {
	return appsv1alpha1.PlatformGeneratedSecretName(p, name)
}

// GeneratedSecret holds the values of a spec.secrets entry. A Retain
// policy keeps it (without owner reference) for a Platform of the same
// name.
func GeneratedSecret(p *appsv1alpha1.Platform, s *appsv1alpha1.PlatformSecret, values map[string]string) *corev1.Secret {
	labels := engine.CommonLabels(p, "secret")
	labels[appsv1alpha1.PlatformLabel] = p.Name
	sec := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: GeneratedSecretName(p, s.Name), Namespace: p.Namespace, Labels: labels},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{},
	}
	for _, k := range s.Keys {
		sec.Data[k] = []byte(values[k])
	}
	engine.Claim(sec, "secret="+s.Name)
	if s.ReclaimPolicy != "Delete" {
		engine.Retain(sec)
	}
	return sec
}

// SecretsVersion is a digest of the versions of the generated Secrets
// that a component references (by env secretKeyRef or envFrom); empty
// when it references none. versions maps Secret names to resourceVersions.
func SecretsVersion(c *appsv1alpha1.PlatformComponent, versions map[string]string) string {
	used := map[string]bool{}
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			used[e.ValueFrom.SecretKeyRef.Name] = true
		}
	}
	var parts []string
	for name := range used {
		if v, ok := versions[name]; ok {
			parts = append(parts, name+"="+v)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	sort.Strings(parts)
	return digest(strings.Join(parts, ","))
}
