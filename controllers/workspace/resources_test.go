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

package workspace

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/engine"
)

func workspace(mutate func(*idev1alpha1.Workspace)) *idev1alpha1.Workspace {
	ws := &idev1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "alice", Namespace: "dev"}}
	ws.Spec.User = "alice"
	if mutate != nil {
		mutate(ws)
	}
	idev1alpha1.DefaultWorkspace(ws) // the builders get what admit.Prepare gives them
	return ws
}

func TestDesiredObjects(t *testing.T) {
	stopped := false
	cases := []struct {
		name        string
		ws          *idev1alpha1.Workspace
		certManager bool
		want        []string
	}{
		{"a started workspace has its volume, then its Pod (what the user waits for), then its Service", workspace(nil), true,
			[]string{"PersistentVolumeClaim/alice-home", "Pod/alice", "Service/alice"}},
		{"a stopped workspace keeps its volume and Service only", workspace(func(ws *idev1alpha1.Workspace) { ws.Spec.Started = &stopped }), true,
			[]string{"PersistentVolumeClaim/alice-home", "Service/alice"}},
		{"an ingress with TLS adds the Ingress and the Certificate", workspace(func(ws *idev1alpha1.Workspace) {
			ws.Spec.Ingress = &idev1alpha1.WorkspaceIngress{Host: "alice.ide.example.com", TLS: &idev1alpha1.WorkspaceTLS{IssuerRef: idev1alpha1.IssuerReference{Name: "letsencrypt"}}}
		}), true, []string{"PersistentVolumeClaim/alice-home", "Pod/alice", "Service/alice", "Ingress/alice", "Certificate/alice-tls"}},
		{"without cert-manager there is no Certificate", workspace(func(ws *idev1alpha1.Workspace) {
			ws.Spec.Ingress = &idev1alpha1.WorkspaceIngress{Host: "alice.ide.example.com", TLS: &idev1alpha1.WorkspaceTLS{IssuerRef: idev1alpha1.IssuerReference{Name: "letsencrypt"}}}
		}), false, []string{"PersistentVolumeClaim/alice-home", "Pod/alice", "Service/alice", "Ingress/alice"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, o := range DesiredObjects(tc.ws, tc.certManager) {
				got = append(got, o.GetObjectKind().GroupVersionKind().Kind+"/"+o.GetName())
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("objects = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestPodRunsTheIDEAsNonRootWithItsHomeAndAProbe(t *testing.T) {
	ws := workspace(func(ws *idev1alpha1.Workspace) {
		ws.Spec.Port = 9000
		ws.Spec.Env = []corev1.EnvVar{{Name: "THEME", Value: "dark"}}
	})
	p := Pod(ws)
	c := p.Spec.Containers[0]
	if c.Image != idev1alpha1.WorkspaceDefaultImage || c.ImagePullPolicy != corev1.PullIfNotPresent {
		t.Errorf("image %s pull %s: want the pinned image, IfNotPresent", c.Image, c.ImagePullPolicy)
	}
	if sc := p.Spec.SecurityContext; sc == nil || !*sc.RunAsNonRoot || *sc.RunAsUser != 1000 || *sc.FSGroup != 1000 {
		t.Errorf("pod security context = %+v, want non-root uid/fsGroup 1000", sc)
	}
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Port.IntVal != 9000 {
		t.Errorf("readiness probe = %+v, want HTTP on 9000", c.ReadinessProbe)
	}
	if !reflect.DeepEqual(c.Env, []corev1.EnvVar{{Name: "PORT", Value: "9000"}, {Name: "THEME", Value: "dark"}}) {
		t.Errorf("env = %v", c.Env)
	}
	if c.VolumeMounts[0].MountPath != "/home/coder" || p.Spec.Volumes[0].PersistentVolumeClaim.ClaimName != "alice-home" {
		t.Errorf("home volume: mount %+v, volume %+v", c.VolumeMounts, p.Spec.Volumes)
	}
	if p.Labels[idev1alpha1.UserLabel] != "alice" || p.Labels[idev1alpha1.WorkspaceLabel] != "alice" {
		t.Errorf("labels = %v", p.Labels)
	}
	other := Pod(workspace(func(ws *idev1alpha1.Workspace) { ws.Spec.Port = 9001 }))
	if p.Annotations[PodHashAnnotation] == other.Annotations[PodHashAnnotation] {
		t.Error("a different spec must give a different pod hash")
	}
	if p.Annotations[PodHashAnnotation] != Pod(ws.DeepCopy()).Annotations[PodHashAnnotation] {
		t.Error("the same spec must give the same pod hash")
	}
}

func TestPVCIsRetainedOnlyWithTheRetainPolicy(t *testing.T) {
	size := resource.MustParse("5Gi")
	pvc := PVC(workspace(func(ws *idev1alpha1.Workspace) { ws.Spec.Storage.Size = &size }))
	if got := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; got.Cmp(size) != 0 {
		t.Errorf("size = %s, want 5Gi", got.String())
	}
	if pvc.Annotations[engine.AnnotationRetain] != "" {
		t.Error("the Delete policy must leave the PVC to its owner")
	}
	pvc = PVC(workspace(func(ws *idev1alpha1.Workspace) { ws.Spec.Storage.ReclaimPolicy = idev1alpha1.ReclaimRetain }))
	if pvc.Annotations[engine.AnnotationRetain] != "true" {
		t.Error("the Retain policy must mark the PVC retained")
	}
}

func TestURL(t *testing.T) {
	if got := idev1alpha1.WorkspaceURL(workspace(nil)); got != "http://alice.dev.svc:8080" {
		t.Errorf("URL = %s", got)
	}
	ws := workspace(func(ws *idev1alpha1.Workspace) {
		ws.Spec.Ingress = &idev1alpha1.WorkspaceIngress{Host: "a.example.com", TLS: &idev1alpha1.WorkspaceTLS{IssuerRef: idev1alpha1.IssuerReference{Name: "x"}}}
	})
	if got := idev1alpha1.WorkspaceURL(ws); got != "https://a.example.com" {
		t.Errorf("URL = %s", got)
	}
	c := Certificate(ws)
	if c.Spec.SecretName != "alice-tls" || c.Spec.DNSNames[0] != "a.example.com" || c.Spec.IssuerRef.Kind != "Issuer" {
		t.Errorf("certificate = %+v", c.Spec)
	}
	if ing := Ingress(ws); ing.Spec.TLS[0].SecretName != "alice-tls" || ing.Spec.Rules[0].Host != "a.example.com" {
		t.Errorf("ingress = %+v", ing.Spec)
	}
}
