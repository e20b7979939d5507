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
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/pod-security-admission/api"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
)

// restrictedPod is a pod spec that passes Pod Security's restricted level.
func restrictedPod() corev1.PodSpec {
	return corev1.PodSpec{
		SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
		Containers: []corev1.Container{{Name: "app", Image: "app:1", SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr.To(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}}},
	}
}

func TestAPodTemplateBelowRestrictedTakesTheRightToUseTheLevelItPasses(t *testing.T) {
	asIs := restrictedPod()
	asIs.SecurityContext = nil
	asIs.Containers[0].SecurityContext = nil

	privileged := restrictedPod()
	privileged.Containers[0].SecurityContext.Privileged = ptr.To(true)

	hostNetwork := restrictedPod()
	hostNetwork.HostNetwork = true

	hostPath := restrictedPod()
	hostPath.Volumes = []corev1.Volume{{Name: "root", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}

	// In a user namespace of its own Pod Security waives the user checks;
	// an API server without user namespaces drops hostUsers, and the
	// pods would run as root on the node's.
	ownUsers := restrictedPod()
	ownUsers.HostUsers = ptr.To(false)
	ownUsers.SecurityContext.RunAsNonRoot = nil
	ownUsers.SecurityContext.RunAsUser = ptr.To(int64(0))

	// Pod Security reads the pod's metadata too: an unconfined AppArmor
	// profile by annotation is privileged.
	unconfined := metav1.ObjectMeta{Annotations: map[string]string{corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix + "app": "unconfined"}}

	for _, tc := range []struct {
		name string
		meta metav1.ObjectMeta
		spec corev1.PodSpec
		want string // the level's name, "" for none
	}{
		{"restricted", metav1.ObjectMeta{}, restrictedPod(), ""},
		{"as its image says (root, capabilities kept)", metav1.ObjectMeta{}, asIs, "baseline"},
		{"a privileged container", metav1.ObjectMeta{}, privileged, "privileged"},
		{"the node's network", metav1.ObjectMeta{}, hostNetwork, "privileged"},
		{"a hostPath volume", metav1.ObjectMeta{}, hostPath, "privileged"},
		{"root in a user namespace of its own, which the API server may drop", metav1.ObjectMeta{}, ownUsers, "baseline"},
		{"an unconfined AppArmor profile in its metadata", unconfined, restrictedPod(), "privileged"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps := appsv1alpha1.PodSetSpec{Template: corev1.PodTemplateSpec{ObjectMeta: tc.meta, Spec: tc.spec}}
			var got []Exposure
			for _, e := range Exposures(ps, field.NewPath("spec")) {
				if e.Resource == PodSecurityLevelResource {
					got = append(got, e)
				}
			}
			if tc.want == "" {
				if len(got) != 0 {
					t.Fatalf("a restricted template exposes %+v", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("Exposures = %+v, want one use of podsecuritylevels/%s", got, tc.want)
			}
			e := got[0]
			if e.Group != PodSecurityLevelGroup || e.Verb != "use" || e.Name != tc.want || e.Path.String() != "spec.template.spec" {
				t.Errorf("exposure = %+v, want use %s/%s at spec.template.spec", e, PodSecurityLevelResource, tc.want)
			}
			// A higher level grants a lower one.
			if want := levelsAbove(api.Level(tc.want)); !reflect.DeepEqual(e.OrNames, want) || (tc.want == "baseline") != (len(want) == 1 && want[0] == "privileged") {
				t.Errorf("OrNames = %q, want %q (privileged grants baseline)", e.OrNames, want)
			}
			if !strings.Contains(e.Why, "restricted forbids") {
				t.Errorf("the reason does not say what restricted forbids: %q", e.Why)
			}
		})
	}
}

// A pod spec in any type, with or without metadata beside it, is held to
// Pod Security, once.
func TestEveryPodSpecInASpecIsHeldToPodSecurityOnce(t *testing.T) {
	type bare struct {
		Pods []corev1.PodSpec `json:"pods"`
	}
	type template struct {
		Runner corev1.PodTemplateSpec `json:"runner"`
	}
	asIs := corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1"}}}
	for _, tc := range []struct {
		spec any
		want []string
	}{
		{bare{Pods: []corev1.PodSpec{restrictedPod(), asIs}}, []string{"spec.pods[1] use baseline"}},
		{template{Runner: corev1.PodTemplateSpec{Spec: asIs}}, []string{"spec.runner.spec use baseline"}},
		{template{Runner: corev1.PodTemplateSpec{Spec: restrictedPod()}}, nil},
	} {
		var got []string
		for _, e := range Exposures(tc.spec, field.NewPath("spec")) {
			got = append(got, e.Path.String()+" "+e.Verb+" "+e.Name)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Exposures(%T) = %q, want %q", tc.spec, got, tc.want)
		}
	}
}
