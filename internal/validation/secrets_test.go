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
	"testing"

	corev1 "k8s.io/api/core/v1"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
)

func refs(rs []SecretRef) map[string]string {
	out := map[string]string{}
	for _, r := range rs {
		out[r.Path.String()] = r.Name
	}
	return out
}

func TestSecretRefs(t *testing.T) {
	fromSecret := func(name string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: "k"}}
	}
	ps := &appsv1alpha1.PodSet{}
	ps.Spec.Template.Spec = corev1.PodSpec{
		ImagePullSecrets: []corev1.LocalObjectReference{{Name: "pull"}},
		Volumes: []corev1.Volume{
			{Name: "a", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "vol"}}},
			{Name: "b", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "projected"}}}}}}},
			{Name: "c", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		},
		InitContainers: []corev1.Container{{Name: "i", EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "init-from"}}}}}},
		Containers:     []corev1.Container{{Name: "c", Env: []corev1.EnvVar{{Name: "A", Value: "plain"}, {Name: "B", ValueFrom: fromSecret("env")}}}},
	}
	got := refs(PodSetSecrets(ps))
	want := map[string]string{
		"spec.template.spec.imagePullSecrets[0].name":                         "pull",
		"spec.template.spec.volumes[0].secret.secretName":                     "vol",
		"spec.template.spec.volumes[1].projected.sources[0].secret.name":      "projected",
		"spec.template.spec.initContainers[0].envFrom[0].secretRef.name":      "init-from",
		"spec.template.spec.containers[0].env[1].valueFrom.secretKeyRef.name": "env",
	}
	if len(got) != len(want) {
		t.Fatalf("PodSet refs = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}

	ws := &idev1alpha1.Workspace{}
	ws.Spec.Env = []corev1.EnvVar{{Name: "TOKEN", ValueFrom: fromSecret("gh")}}
	if got := refs(WorkspaceSecrets(ws)); got["spec.env[0].valueFrom.secretKeyRef.name"] != "gh" || len(got) != 1 {
		t.Errorf("Workspace refs = %v", got)
	}

	p := &appsv1alpha1.Platform{}
	p.Spec.Database = &appsv1alpha1.PlatformDatabase{AdminSecretRef: corev1.LocalObjectReference{Name: "admin"},
		TLS: appsv1alpha1.DatabaseTLS{CASecretRef: &corev1.LocalObjectReference{Name: "ca"}}}
	p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "regcred"}}
	p.Spec.Components = []appsv1alpha1.PlatformComponent{{Name: "api", Env: []corev1.EnvVar{{Name: "K", ValueFrom: fromSecret("api-key")}}}}
	if got := refs(PlatformSecrets(p)); len(got) != 4 || got["spec.database.tls.caSecretRef.name"] != "ca" ||
		got["spec.components[0].env[0].valueFrom.secretKeyRef.name"] != "api-key" {
		t.Errorf("Platform refs = %v", got)
	}
}
