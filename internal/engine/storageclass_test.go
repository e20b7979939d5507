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
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestUnclassedClaimsFindsEveryClaimThatNamesNoClassInAnyObject(t *testing.T) {
	fast := "fast"
	none := ""
	ephemeral := func(meta metav1.ObjectMeta, class *string) corev1.Volume {
		return corev1.Volume{Name: "v", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
			VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{ObjectMeta: meta, Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: class}},
		}}}
	}
	legacy := metav1.ObjectMeta{Annotations: map[string]string{corev1.BetaStorageClassAnnotation: "fast"}}
	for _, c := range []struct {
		name string
		obj  any
		want []string
	}{
		{"a claim without a class", &corev1.PersistentVolumeClaim{}, []string{""}},
		{"a claim of a class", &corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: &fast}}, nil},
		{"a claim of no class (admission's to hold)", &corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: &none}}, nil},
		{"a claim whose legacy annotation names its class", &corev1.PersistentVolumeClaim{ObjectMeta: legacy}, nil},
		{"a pod's ephemeral volumes", &corev1.Pod{Spec: corev1.PodSpec{Volumes: []corev1.Volume{
			ephemeral(metav1.ObjectMeta{}, &fast), ephemeral(metav1.ObjectMeta{}, nil), ephemeral(legacy, nil),
		}}}, []string{"spec.volumes[1].ephemeral.volumeClaimTemplate"}},
		{"a Deployment's pod template", &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Volumes: []corev1.Volume{ephemeral(metav1.ObjectMeta{}, nil)},
		}}}}, []string{"spec.template.spec.volumes[0].ephemeral.volumeClaimTemplate"}},
		{"a StatefulSet's claim templates", &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: &fast}}, {}},
		}}, []string{"spec.volumeClaimTemplates[1]"}},
		{"a Service", &corev1.Service{}, nil},
	} {
		if got := UnclassedClaims(c.obj); !slices.Equal(got, c.want) {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}
