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

package engine

import (
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubeforge/kubeforge/internal/scheme"
)

func TestAnApplyWhoseObjectUsesByNameWhatComesWithItOrLaterIsRefused(t *testing.T) {
	e := &Engine{Scheme: scheme.New()}
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Namespace: "ns"} }
	secret := &corev1.Secret{ObjectMeta: meta("kubeconfig")}
	sa := &corev1.ServiceAccount{ObjectMeta: meta("installer")}
	role := &rbacv1.Role{ObjectMeta: meta("installer"), Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"},
		ResourceNames: []string{"kubeconfig"}, Verbs: []string{"get"}}}}
	binding := &rbacv1.RoleBinding{ObjectMeta: meta("installer"), RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "installer"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "installer"}}}
	job := &batchv1.Job{ObjectMeta: meta("run"), Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		ServiceAccountName: "installer",
		Volumes:            []corev1.Volume{{Name: "k", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "kubeconfig"}}}},
	}}}}
	config := &corev1.ConfigMap{ObjectMeta: meta("config")}
	verified := &corev1.ConfigMap{ObjectMeta: meta("config")}
	VerifiedWhereUsed(verified)
	mounts := &batchv1.Job{ObjectMeta: meta("mounts"), Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		Volumes: []corev1.Volume{{Name: "c", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "config"}}}}},
	}}}}
	one := func(objs ...client.Object) [][]client.Object {
		var out [][]client.Object
		for _, o := range objs {
			out = append(out, []client.Object{o})
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		stages [][]client.Object
		uses   string // "" when in order
	}{
		{"each after what it uses", one(secret, sa, role, binding, job), ""},
		{"a Role before the Secret it grants", one(role, secret), "Role/installer uses Secret/kubeconfig"},
		{"a RoleBinding before its Role", one(secret, sa, binding, role), "RoleBinding/installer uses Role/installer"},
		{"a Job before the Secret it mounts", one(sa, job, secret), "Job/run uses Secret/kubeconfig"},
		{"a Job in the stage of its ServiceAccount", [][]client.Object{{secret}, {sa, job}}, "Job/run uses ServiceAccount/installer"},
		{"what it uses not applied here at all", one(job), ""},
		{"a Job mounting a ConfigMap the apply makes", one(config, mounts), "Job/mounts reads ConfigMap/config, which it makes, by name"},
		{"a Job mounting one the apply makes that it verifies where it reads it", one(verified, mounts), ""},
		{"a Job mounting a ConfigMap it does not make (a user's)", one(mounts), ""},
	} {
		err := e.checkOrder(tc.stages)
		switch {
		case tc.uses == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.uses != "" && (err == nil || !strings.Contains(err.Error(), tc.uses)):
			t.Errorf("%s: %v, want a refusal saying %q", tc.name, err, tc.uses)
		}
	}
}

// BenchmarkCheckOrder is the order check's cost on an apply of a
// component's kind: a Secret, a ConfigMap, a Service and a Deployment
// whose pod template uses the first two.
func BenchmarkCheckOrder(b *testing.B) {
	e := &Engine{Scheme: scheme.New()}
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Namespace: "ns"} }
	pod := corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1",
		Env: []corev1.EnvVar{{Name: "P", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "app"}, Key: "p"}}}},
		VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/etc/app"}}}},
		Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "app"}}}}}}
	cm := &corev1.ConfigMap{ObjectMeta: meta("app")}
	VerifiedWhereUsed(cm)
	stages := [][]client.Object{{&corev1.Secret{ObjectMeta: meta("app")}}, {cm},
		{&corev1.Service{ObjectMeta: meta("app")}}, {&batchv1.Job{ObjectMeta: meta("app"), Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: pod}}}}}
	b.ReportAllocs()
	for b.Loop() {
		if err := e.checkOrder(stages); err != nil {
			b.Fatal(err)
		}
	}
}
