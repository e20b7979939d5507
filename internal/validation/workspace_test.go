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
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
)

func workspace(mutate func(*idev1alpha1.Workspace)) *idev1alpha1.Workspace {
	ws := &idev1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "alice", Namespace: "dev"}}
	ws.Spec.User = "alice"
	if mutate != nil {
		mutate(ws)
	}
	return ws
}

func TestDefaultWorkspace(t *testing.T) {
	ws := workspace(nil)
	idev1alpha1.DefaultWorkspace(ws)
	s := ws.Spec
	if s.Image != idev1alpha1.WorkspaceDefaultImage || s.Port != 8080 || !*s.Started || s.ImagePullPolicy != corev1.PullIfNotPresent {
		t.Fatalf("defaults: %+v", s)
	}
	if s.Storage.Size.String() != "10Gi" || s.Storage.MountPath != "/home/coder" || s.Storage.ReclaimPolicy != idev1alpha1.ReclaimDelete {
		t.Fatalf("storage defaults: %+v", s.Storage)
	}
	if ws.Labels[idev1alpha1.UserLabel] != "alice" {
		t.Fatalf("the user must be recorded as a label: %v", ws.Labels)
	}
	stopped := false
	ws = workspace(func(ws *idev1alpha1.Workspace) { ws.Spec.Started = &stopped; ws.Spec.Port = 9000 })
	idev1alpha1.DefaultWorkspace(ws)
	if *ws.Spec.Started || ws.Spec.Port != 9000 {
		t.Fatal("given values must be kept")
	}
}

func TestValidateWorkspace(t *testing.T) {
	type W = idev1alpha1.Workspace
	cases := map[string]struct {
		mutate func(*W)
		want   []string
	}{
		"accept a minimal workspace":   {},
		"reject port 0 after defaults": {mutate: func(w *W) { w.Spec.Port = 70000 }, want: []string{"spec.port"}},
		"reject a name too long for its derived names": {
			mutate: func(w *W) { w.Name = strings.Repeat("a", 59) }, want: []string{"metadata.name"},
		},
		"reject a name that is not a DNS-1035 label": {mutate: func(w *W) { w.Name = "1alice" }, want: []string{"metadata.name"}},
		"reject a request above its limit": {mutate: func(w *W) {
			w.Spec.Resources = &corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
			}
		}, want: []string{"spec.resources.requests[cpu]"}},
		"reject a zero storage size":                       {mutate: func(w *W) { q := resource.MustParse("0"); w.Spec.Storage.Size = &q }, want: []string{"spec.storage.size"}},
		"reject a relative mount path":                     {mutate: func(w *W) { w.Spec.Storage.MountPath = "home/../x" }, want: []string{"spec.storage.mountPath"}},
		"reject a user that is no label":                   {mutate: func(w *W) { w.Spec.User = "alice smith" }, want: []string{"spec.user"}},
		"reject a negative maxRunDuration":                 {mutate: func(w *W) { w.Spec.MaxRunDuration = &metav1.Duration{Duration: -time.Hour} }, want: []string{"spec.maxRunDuration"}},
		"reject an unknown auth mode":                      {mutate: func(w *W) { w.Spec.Auth.Mode = "Token" }, want: []string{"spec.auth.mode"}},
		"reject a healthPath that is not an absolute path": {mutate: func(w *W) { w.Spec.HealthPath = "healthz?x=1" }, want: []string{"spec.healthPath"}},
		"reject env the operator sets for auth": {mutate: func(w *W) {
			w.Spec.Env = []corev1.EnvVar{{Name: "HASHED_PASSWORD", Value: "x"}, {Name: "KUBEFORGE_IDE_AUTH", Value: "none"}}
		}, want: []string{"spec.env[0].name", "spec.env[1].name"}},
		"reject PORT and duplicate env names": {mutate: func(w *W) {
			w.Spec.Env = []corev1.EnvVar{{Name: "PORT", Value: "1"}, {Name: "A", Value: "1"}, {Name: "A", Value: "2"}}
		}, want: []string{"spec.env[0].name", "spec.env[2].name"}},
		"reject a bad ingress host and an issuer without a name": {mutate: func(w *W) {
			w.Spec.Ingress = &idev1alpha1.WorkspaceIngress{Host: "Not A Host", TLS: &idev1alpha1.WorkspaceTLS{}}
		}, want: []string{"spec.ingress.host", "spec.ingress.tls.issuerRef.name"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ws := workspace(tc.mutate)
			var got []string
			for _, e := range Workspace(ws) {
				got = append(got, e.Field)
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Fatalf("fields = %q, want %q\n%v", got, tc.want, Workspace(ws))
			}
		})
	}
}

func TestValidateWorkspaceUpdateKeepsTheHomeVolume(t *testing.T) {
	old := workspace(nil)
	idev1alpha1.DefaultWorkspace(old)
	changed := old.DeepCopy()
	bigger := resource.MustParse("20Gi")
	class := "fast"
	changed.Spec.Storage.Size = &bigger
	changed.Spec.Storage.StorageClassName = &class
	changed.Spec.Storage.MountPath = "/home/alice"
	var got []string
	for _, e := range WorkspaceUpdate(old, changed) {
		got = append(got, e.Field)
	}
	if want := "spec.storage.size spec.storage.storageClassName spec.storage.mountPath"; strings.Join(got, " ") != want {
		t.Fatalf("fields = %q, want %q", got, want)
	}
	stopped := old.DeepCopy()
	f := false
	stopped.Spec.Started = &f
	if errs := WorkspaceUpdate(old, stopped); len(errs) > 0 {
		t.Fatalf("stopping must be allowed: %v", errs)
	}
}

func FuzzWorkspace(f *testing.F) {
	f.Add([]byte(`{"metadata":{"name":"a"},"spec":{"port":8080,"storage":{"size":"1Gi"},"user":"bob"}}`))
	f.Add([]byte(`{"spec":{"port":-1,"env":[{"name":""}],"ingress":{"host":"","tls":{"issuerRef":{}}},"maxRunDuration":"-5s"}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		ws := &idev1alpha1.Workspace{}
		if err := json.Unmarshal(raw, ws); err != nil {
			return
		}
		idev1alpha1.DefaultWorkspace(ws)
		a, b := Workspace(ws), WorkspaceUpdate(ws, ws)
		if len(a) != len(b) {
			t.Fatalf("an unchanged update must give the create errors: %v vs %v", a, b)
		}
	})
}
