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
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func template(mutate func(*corev1.PodTemplateSpec)) *corev1.PodTemplateSpec {
	t := &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}}}
	if mutate != nil {
		mutate(t)
	}
	return t
}

func TestPodTemplate(t *testing.T) {
	cases := map[string]struct {
		tmpl *corev1.PodTemplateSpec
		want []string // "type field" of each error
	}{
		"accept a minimal template": {tmpl: template(nil)},
		"reject a template without containers": {
			tmpl: template(func(t *corev1.PodTemplateSpec) { t.Spec.Containers = nil }),
			want: []string{"FieldValueRequired t.spec.containers"},
		},
		"reject duplicate container names across init and regular containers": {
			tmpl: template(func(t *corev1.PodTemplateSpec) {
				t.Spec.InitContainers = []corev1.Container{{Name: "app", Image: "busybox"}}
			}),
			want: []string{"FieldValueDuplicate t.spec.containers[0].name"},
		},
		"reject a container name that is not a DNS label, and a missing image": {
			tmpl: template(func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0] = corev1.Container{Name: "Bad_Name"} }),
			want: []string{"FieldValueInvalid t.spec.containers[0].name", "FieldValueRequired t.spec.containers[0].image"},
		},
		"reject a reserved label": {
			tmpl: template(func(t *corev1.PodTemplateSpec) { t.Labels = map[string]string{"reserved": "x"} }),
			want: []string{"FieldValueForbidden t.metadata.labels[reserved]"},
		},
		"reject more labels than the manager's cache keeps of a Pod it reads": {
			tmpl: template(func(t *corev1.PodTemplateSpec) {
				t.Labels = map[string]string{}
				for i := range MaxPodLabels + 1 {
					t.Labels[fmt.Sprintf("l%d", i)] = "x"
				}
			}),
			want: []string{"FieldValueTooMany t.metadata.labels"},
		},
		"accept as many labels as MaxPodLabels": {
			tmpl: template(func(t *corev1.PodTemplateSpec) {
				t.Labels = map[string]string{}
				for i := range MaxPodLabels {
					t.Labels[fmt.Sprintf("l%d", i)] = "x"
				}
			}),
		},
		"reject an invalid label value": {
			tmpl: template(func(t *corev1.PodTemplateSpec) { t.Labels = map[string]string{"app": "not valid!"} }),
			want: []string{"FieldValueInvalid t.metadata.labels"},
		},
		"reject a request above its limit and a negative limit": {
			tmpl: template(func(t *corev1.PodTemplateSpec) {
				t.Spec.Containers[0].Resources = corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
					Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("-1Gi")},
				}
			}),
			want: []string{"FieldValueInvalid t.spec.containers[0].resources.requests[cpu]", "FieldValueInvalid t.spec.containers[0].resources.limits[memory]"},
		},
		"reject bad and duplicate port names and a port out of range": {
			tmpl: template(func(t *corev1.PodTemplateSpec) {
				t.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 80}, {Name: "http", ContainerPort: 70000}}
			}),
			want: []string{"FieldValueInvalid t.spec.containers[0].ports[1].containerPort", "FieldValueDuplicate t.spec.containers[0].ports[1].name"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			errs := PodTemplate(tc.tmpl, field.NewPath("t"), "reserved")
			var got []string
			for _, e := range errs {
				got = append(got, string(e.Type)+" "+e.Field)
			}
			if strings.Join(got, ", ") != strings.Join(tc.want, ", ") {
				t.Fatalf("errors = %q\nwant      %q", got, tc.want)
			}
		})
	}
}
