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

package podset

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/engine"
	"github.com/kubeforge/kubeforge/internal/validation"
)

func newPodSet() *appsv1alpha1.PodSet {
	return &appsv1alpha1.PodSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team-a", Generation: 2},
		Spec: appsv1alpha1.PodSetSpec{
			Replicas: new(int32(3)),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.27"}}},
			},
		},
	}
}

func TestDeployment(t *testing.T) {
	ps := newPodSet()
	d := Deployment(ps)

	if d.Name != "web" || d.Namespace != "team-a" {
		t.Errorf("name = %s/%s, want team-a/web", d.Namespace, d.Name)
	}
	if *d.Spec.Replicas != 3 {
		t.Errorf("replicas = %d, want 3", *d.Spec.Replicas)
	}
	if got := d.Spec.Selector.MatchLabels; len(got) != 1 || got[appsv1alpha1.PodSetNameLabel] != "web" {
		t.Errorf("selector = %v, want only %s=web", got, appsv1alpha1.PodSetNameLabel)
	}
	want := map[string]string{
		"app":                          "web",
		appsv1alpha1.PodSetNameLabel:   "web",
		"app.kubernetes.io/managed-by": "kubeforge",
		"app.kubernetes.io/instance":   "web",
		"app.kubernetes.io/component":  "podset",
	}
	for k, v := range want {
		if d.Spec.Template.Labels[k] != v {
			t.Errorf("pod label %s = %q, want %q", k, d.Spec.Template.Labels[k], v)
		}
	}
	if d.Spec.Template.Spec.Containers[0].Image != "nginx:1.27" {
		t.Errorf("the template's containers were not kept")
	}
	if _, touched := ps.Spec.Template.Labels[appsv1alpha1.PodSetNameLabel]; touched {
		t.Errorf("the builder changed the PodSet's own template")
	}
}

func TestDeploymentOfADefaultedPodSetWithoutReplicas(t *testing.T) {
	ps := newPodSet()
	ps.Spec.Replicas = nil
	appsv1alpha1.DefaultPodSet(ps)
	if r := *Deployment(ps).Spec.Replicas; r != 1 {
		t.Errorf("replicas = %d, want 1", r)
	}
}

func TestSelector(t *testing.T) {
	if s := Selector(newPodSet()); s != "apps.kubeforge.io/podset=web" {
		t.Errorf("selector = %q", s)
	}
}

// A Pod of a PodSet with as many template labels as the webhook admits,
// with the operator's and the ReplicaSet's (pod-template-hash) added, keeps
// every label in the manager's cache, where the PodSet's selector finds it.
func TestPodLabelsWithinWhatTheCacheKeeps(t *testing.T) {
	ps := newPodSet()
	ps.Spec.Template.Labels = map[string]string{}
	for i := range validation.MaxPodLabels {
		ps.Spec.Template.Labels[fmt.Sprintf("l%d", i)] = "x"
	}
	if errs := validation.PodSet(ps); len(errs) != 0 {
		t.Fatalf("the webhook refuses %d labels: %v", validation.MaxPodLabels, errs)
	}
	if n := len(Deployment(ps).Spec.Template.Labels) + 1; n > engine.MaxReadLabels {
		t.Errorf("a Pod carries %d labels, the cache keeps them all only up to %d", n, engine.MaxReadLabels)
	}
}
