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

package validation

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
	networkingv1alpha1 "github.com/kubeforge/kubeforge/api/networking/v1alpha1"
)

// SecretRef is a Secret in the object's namespace that the object makes
// the operator read or mount, and the field that names it. Whoever
// creates or changes the object must be allowed to get that Secret
// themselves: the validating webhook asks the API server (admit).
type SecretRef struct {
	Path *field.Path
	Name string
}

// PodSetSecrets are the Secrets a PodSet's pod template uses.
func PodSetSecrets(ps *appsv1alpha1.PodSet) []SecretRef {
	return podSecrets(&ps.Spec.Template.Spec, field.NewPath("spec", "template", "spec"))
}

// PlatformSecrets are the database server's admin and CA Secrets, the
// image pull Secrets and the Secrets the components' env reads.
func PlatformSecrets(p *appsv1alpha1.Platform) []SecretRef {
	spec := field.NewPath("spec")
	var refs []SecretRef
	if d := p.Spec.Database; d != nil {
		db := spec.Child("database")
		refs = append(refs, SecretRef{db.Child("adminSecretRef", "name"), d.AdminSecretRef.Name})
		if d.TLS.CASecretRef != nil {
			refs = append(refs, SecretRef{db.Child("tls", "caSecretRef", "name"), d.TLS.CASecretRef.Name})
		}
	}
	refs = append(refs, pullSecrets(p.Spec.ImagePullSecrets, spec.Child("imagePullSecrets"))...)
	for i := range p.Spec.Components {
		refs = append(refs, envSecrets(p.Spec.Components[i].Env, nil, spec.Child("components").Index(i))...)
	}
	return refs
}

// BalancerSecrets: a Balancer uses none.
func BalancerSecrets(*networkingv1alpha1.Balancer) []SecretRef { return nil }

// WorkspaceSecrets are the Secrets the IDE's env reads.
func WorkspaceSecrets(ws *idev1alpha1.Workspace) []SecretRef {
	return envSecrets(ws.Spec.Env, nil, field.NewPath("spec"))
}

// KubernetesClusterSecrets is the SSH key the installer logs in with.
func KubernetesClusterSecrets(kc *clusterv1alpha1.KubernetesCluster) []SecretRef {
	return []SecretRef{{field.NewPath("spec", "sshSecretRef", "name"), kc.Spec.SSHSecretRef.Name}}
}

// podSecrets are the Secrets a pod spec mounts, reads into env, or pulls
// images with.
func podSecrets(spec *corev1.PodSpec, p *field.Path) []SecretRef {
	refs := pullSecrets(spec.ImagePullSecrets, p.Child("imagePullSecrets"))
	for i, v := range spec.Volumes {
		vp := p.Child("volumes").Index(i)
		if v.Secret != nil {
			refs = append(refs, SecretRef{vp.Child("secret", "secretName"), v.Secret.SecretName})
		}
		if v.Projected != nil {
			for j, src := range v.Projected.Sources {
				if src.Secret != nil {
					refs = append(refs, SecretRef{vp.Child("projected", "sources").Index(j).Child("secret", "name"), src.Secret.Name})
				}
			}
		}
	}
	for _, list := range []struct {
		name       string
		containers []corev1.Container
	}{{"initContainers", spec.InitContainers}, {"containers", spec.Containers}} {
		for i, c := range list.containers {
			refs = append(refs, envSecrets(c.Env, c.EnvFrom, p.Child(list.name).Index(i))...)
		}
	}
	return refs
}

func envSecrets(env []corev1.EnvVar, from []corev1.EnvFromSource, p *field.Path) []SecretRef {
	var refs []SecretRef
	for i, e := range env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			refs = append(refs, SecretRef{p.Child("env").Index(i).Child("valueFrom", "secretKeyRef", "name"), e.ValueFrom.SecretKeyRef.Name})
		}
	}
	for i, f := range from {
		if f.SecretRef != nil {
			refs = append(refs, SecretRef{p.Child("envFrom").Index(i).Child("secretRef", "name"), f.SecretRef.Name})
		}
	}
	return refs
}

func pullSecrets(refs []corev1.LocalObjectReference, p *field.Path) []SecretRef {
	var out []SecretRef
	for i, r := range refs {
		out = append(out, SecretRef{p.Index(i).Child("name"), r.Name})
	}
	return out
}
