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
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
)

func podSet(mutate func(*appsv1alpha1.PodSet)) *appsv1alpha1.PodSet {
	ps := &appsv1alpha1.PodSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1alpha1.PodSetSpec{Template: corev1.PodTemplateSpec{
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
		}},
	}
	if mutate != nil {
		mutate(ps)
	}
	return ps
}

func TestDefaultPodSet(t *testing.T) {
	t.Run("fill in one replica when none is given", func(t *testing.T) {
		ps := podSet(nil)
		appsv1alpha1.DefaultPodSet(ps)
		if ps.Spec.Replicas == nil || *ps.Spec.Replicas != 1 {
			t.Fatalf("replicas = %v, want 1", ps.Spec.Replicas)
		}
	})
	t.Run("keep replicas that are given, zero included", func(t *testing.T) {
		ps := podSet(func(ps *appsv1alpha1.PodSet) { ps.Spec.Replicas = new(int32(0)) })
		appsv1alpha1.DefaultPodSet(ps)
		if *ps.Spec.Replicas != 0 {
			t.Fatalf("replicas = %d, want 0", *ps.Spec.Replicas)
		}
	})
}

func TestValidatePodSet(t *testing.T) {
	cases := map[string]struct {
		ps   *appsv1alpha1.PodSet
		want []string
	}{
		"accept a minimal PodSet":              {ps: podSet(nil)},
		"accept zero and the maximum replicas": {ps: podSet(func(ps *appsv1alpha1.PodSet) { ps.Spec.Replicas = new(int32(10000)) })},
		"reject negative replicas": {
			ps:   podSet(func(ps *appsv1alpha1.PodSet) { ps.Spec.Replicas = new(int32(-1)) }),
			want: []string{"spec.replicas"},
		},
		"reject more than 10000 replicas": {
			ps:   podSet(func(ps *appsv1alpha1.PodSet) { ps.Spec.Replicas = new(int32(10001)) }),
			want: []string{"spec.replicas"},
		},
		"reject a template without containers": {
			ps:   podSet(func(ps *appsv1alpha1.PodSet) { ps.Spec.Template.Spec.Containers = nil }),
			want: []string{"spec.template.spec.containers"},
		},
		"reject duplicate container names": {
			ps: podSet(func(ps *appsv1alpha1.PodSet) {
				ps.Spec.Template.Spec.Containers = append(ps.Spec.Template.Spec.Containers, corev1.Container{Name: "app", Image: "x"})
			}),
			want: []string{"spec.template.spec.containers[1].name"},
		},
		"reject the operator's own selector label in the template": {
			ps: podSet(func(ps *appsv1alpha1.PodSet) {
				ps.Spec.Template.Labels = map[string]string{appsv1alpha1.PodSetNameLabel: "other"}
			}),
			want: []string{"spec.template.metadata.labels[apps.kubeforge.io/podset]"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, e := range PodSet(tc.ps) {
				got = append(got, e.Field)
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Fatalf("fields = %q, want %q", got, tc.want)
			}
			// An update is held to the same rules.
			if n := len(PodSetUpdate(podSet(nil), tc.ps)); n != len(tc.want) {
				t.Fatalf("update: %d errors, want %d", n, len(tc.want))
			}
		})
	}
}

func FuzzPodSet(f *testing.F) {
	f.Add([]byte(`{"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"a","image":"b"}]}}}}`))
	f.Add([]byte(`{"spec":{"template":{"metadata":{"labels":{"x":"y"}},"spec":{"initContainers":[{"name":"a"}],"containers":[{"name":"a","ports":[{"containerPort":0}]}]}}}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		ps := &appsv1alpha1.PodSet{}
		if err := json.Unmarshal(raw, ps); err != nil {
			return
		}
		// Defaulting then validating must never panic; the result must be stable.
		appsv1alpha1.DefaultPodSet(ps)
		a, b := PodSet(ps), PodSet(ps)
		if len(a) != len(b) {
			t.Fatalf("validation is not deterministic: %v vs %v", a, b)
		}
	})
}
