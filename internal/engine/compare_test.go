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
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func deployment(mutate ...func(*appsv1.Deployment)) *appsv1.Deployment {
	replicas := int32(2)
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", Labels: map[string]string{"a": "b"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name:  "c",
					Image: "nginx",
					Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("0.5")},
					},
				}}},
			},
		},
	}
	for _, m := range mutate {
		m(d)
	}
	return d
}

// served is what the API server gives back for deployment(): defaults filled
// in, bookkeeping added, quantities in canonical form.
func served(mutate ...func(*appsv1.Deployment)) *appsv1.Deployment {
	d := deployment(mutate...)
	d.ResourceVersion = "42"
	d.UID = "uid"
	d.Generation = 3
	d.CreationTimestamp = metav1.Now()
	d.Annotations = map[string]string{"deployment.kubernetes.io/revision": "1"}
	d.Spec.RevisionHistoryLimit = new(int32(10))
	d.Spec.ProgressDeadlineSeconds = new(int32(600))
	d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{
		MaxSurge: &intstr.IntOrString{Type: intstr.String, StrVal: "25%"}, MaxUnavailable: &intstr.IntOrString{Type: intstr.String, StrVal: "25%"},
	}}
	c := &d.Spec.Template.Spec.Containers[0]
	c.ImagePullPolicy = corev1.PullAlways
	c.TerminationMessagePath = "/dev/termination-log"
	c.Resources.Requests[corev1.ResourceCPU] = resource.MustParse("500m")
	d.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
	d.Spec.Template.Spec.DNSPolicy = corev1.DNSClusterFirst
	d.Spec.Template.Spec.SecurityContext = &corev1.PodSecurityContext{}
	d.Status = appsv1.DeploymentStatus{Replicas: 2, ReadyReplicas: 1}
	return d
}

func TestContains(t *testing.T) {
	cases := map[string]struct {
		live, want *appsv1.Deployment
		match      bool
	}{
		"match when the live object only adds defaults, bookkeeping and status": {
			live: served(), want: deployment(), match: true,
		},
		"differ when someone changed replicas by hand": {
			live: served(func(d *appsv1.Deployment) { d.Spec.Replicas = new(int32(7)) }), want: deployment(), match: false,
		},
		"differ when a label value changed": {
			live: served(func(d *appsv1.Deployment) { d.Labels["a"] = "c" }), want: deployment(), match: false,
		},
		// Server-side apply merges lists keyed by name (or mountPath) and
		// keeps what others added: an injected sidecar, the service account
		// token volume admission adds to Pods. Applying again would change
		// nothing, so they are no difference.
		"match when admission added a container, a volume and a mount": {
			live: served(func(d *appsv1.Deployment) {
				ps := &d.Spec.Template.Spec
				ps.Containers = append(ps.Containers, corev1.Container{Name: "sidecar", Image: "y"})
				ps.Volumes = append(ps.Volumes, corev1.Volume{Name: "kube-api-access-x"})
				ps.Containers[0].VolumeMounts = append(ps.Containers[0].VolumeMounts,
					corev1.VolumeMount{Name: "kube-api-access-x", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"})
			}),
			want: deployment(), match: true,
		},
		"differ when a keyed list has extra items but lacks one of ours": {
			live: served(func(d *appsv1.Deployment) {
				d.Spec.Template.Spec.Containers[0].Name = "renamed"
				d.Spec.Template.Spec.Containers = append(d.Spec.Template.Spec.Containers, corev1.Container{Name: "sidecar", Image: "y"})
			}),
			want: deployment(), match: false,
		},
		"differ when a keyed list has extra items and ours changed": {
			live: served(func(d *appsv1.Deployment) {
				d.Spec.Template.Spec.Containers[0].Image = "nginx:0"
				d.Spec.Template.Spec.Containers = append(d.Spec.Template.Spec.Containers, corev1.Container{Name: "sidecar", Image: "y"})
			}),
			want: deployment(), match: false,
		},
		"differ when a list without keys has an extra item": {
			live: served(func(d *appsv1.Deployment) {
				d.Spec.Template.Spec.Containers[0].Args = []string{"a", "--extra"}
			}),
			want: deployment(func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Args = []string{"a"} }), match: false,
		},
		"differ when the image changed": {
			live: served(), want: deployment(func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "nginx:2" }), match: false,
		},
		"differ when a quantity changed": {
			live: served(), want: deployment(func(d *appsv1.Deployment) {
				d.Spec.Template.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("1")
			}), match: false,
		},
		"match when the wanted object has empty maps and lists the server drops": {
			live: served(), want: deployment(func(d *appsv1.Deployment) {
				d.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{}
				d.Spec.Template.Annotations = map[string]string{}
			}), match: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			have, err := toComparable(tc.live)
			if err != nil {
				t.Fatal(err)
			}
			want, err := toComparable(tc.want)
			if err != nil {
				t.Fatal(err)
			}
			if got := difference(have, want, "") == ""; got != tc.match {
				t.Fatalf("live contains desired = %v, want %v", got, tc.match)
			}
		})
	}
}

func TestToComparableDropsStatusAndBookkeeping(t *testing.T) {
	m, err := toComparable(served())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m["status"]; ok {
		t.Error("status kept")
	}
	md := m["metadata"].(map[string]any)
	for _, k := range []string{"creationTimestamp", "resourceVersion", "managedFields"} {
		if _, ok := md[k]; ok {
			t.Errorf("metadata.%s kept", k)
		}
	}
}

func TestHashOf(t *testing.T) {
	a, _ := toComparable(deployment())
	b, _ := toComparable(deployment())
	c, _ := toComparable(deployment(func(d *appsv1.Deployment) { delete(d.Labels, "a") }))
	ha, _ := hashOf(a)
	hb, _ := hashOf(b)
	hc, _ := hashOf(c)
	if ha != hb {
		t.Errorf("equal objects hash differently: %s %s", ha, hb)
	}
	if ha == hc {
		t.Errorf("removing a label did not change the hash %s", ha)
	}
	if len(ha) != 16 {
		t.Errorf("hash %q is not 16 hex digits", ha)
	}
}

func TestDifferenceNamesTheFirstDifferingField(t *testing.T) {
	have, _ := toComparable(served(func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "old" }))
	want, _ := toComparable(deployment())
	if got := difference(have, want, ""); got != ".spec.template.spec.containers[0].image" {
		t.Fatalf("difference = %q", got)
	}
	if got := difference(want, want, ""); got != "" {
		t.Fatalf("difference with itself = %q", got)
	}
}

func TestOverlay(t *testing.T) {
	base := map[string]any{
		"metadata": map[string]any{"name": "a", "resourceVersion": "7", "labels": map[string]any{"x": "1"}},
		"spec":     map[string]any{"clusterIP": "10.0.0.1", "ports": []any{map[string]any{"port": int64(9999)}}},
	}
	want := map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"y": "2"}},
		"spec":     map[string]any{"ports": []any{map[string]any{"port": int64(80)}}},
	}
	got := overlay(base, want).(map[string]any)
	md := got["metadata"].(map[string]any)
	if md["resourceVersion"] != "7" || md["name"] != "a" {
		t.Errorf("lost the live metadata: %v", md)
	}
	if l := md["labels"].(map[string]any); l["x"] != "1" || l["y"] != "2" {
		t.Errorf("labels not merged: %v", l)
	}
	spec := got["spec"].(map[string]any)
	if spec["clusterIP"] != "10.0.0.1" {
		t.Errorf("lost a field the server set: %v", spec)
	}
	if ports := spec["ports"].([]any); len(ports) != 1 || ports[0].(map[string]any)["port"] != int64(80) {
		t.Errorf("lists must be taken whole from want: %v", ports)
	}
}
