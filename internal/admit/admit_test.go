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

package admit

import (
	"context"
	"net/http"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/scheme"
)

func TestMetadataOnlyUpdatesAreAdmitted(t *testing.T) {
	// Stored before today's rules: no defaults written, and a version the
	// rules refuse now.
	stored := &clusterv1alpha1.KubernetesCluster{ObjectMeta: metav1.ObjectMeta{Name: "old", Namespace: "infra"},
		Spec: clusterv1alpha1.KubernetesClusterSpec{Version: "1.31", Masters: []clusterv1alpha1.Host{{Address: "10.0.0.10"}},
			SSHSecretRef: clusterv1alpha1.SSHSecretReference{Name: "ssh"}}}
	v := validator[*clusterv1alpha1.KubernetesCluster]{kind: KubernetesCluster, gk: KubernetesCluster.GVK.GroupKind()}

	cases := map[string]struct {
		change func(*clusterv1alpha1.KubernetesCluster)
		admit  bool
	}{
		"a label": {func(kc *clusterv1alpha1.KubernetesCluster) { kc.Labels = map[string]string{"team": "a"} }, true},
		"an annotation": {func(kc *clusterv1alpha1.KubernetesCluster) {
			kc.Annotations = map[string]string{clusterv1alpha1.RetryAnnotation: "1"}
		}, true},
		"a finalizer removed":            {func(kc *clusterv1alpha1.KubernetesCluster) { kc.Finalizers = nil }, true},
		"the spec, still breaking rules": {func(kc *clusterv1alpha1.KubernetesCluster) { kc.Spec.Paused = true }, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			old := stored.DeepCopy()
			old.Finalizers = []string{clusterv1alpha1.ResetFinalizer}
			// What reaches the validator: the change, after the mutating webhook.
			updated := old.DeepCopy()
			tc.change(updated)
			KubernetesCluster.Default(updated)
			_, err := v.ValidateUpdate(context.Background(), old, updated)
			if tc.admit && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !tc.admit && err == nil {
				t.Fatal("a spec change must be validated")
			}
		})
	}
}

// A command annotation removed is a command too (a KubernetesCluster
// retries when its retry annotation differs from the one it acted on):
// the access checks run for it as for setting one.
func TestRemovingACommandAnnotationIsAChange(t *testing.T) {
	with := func(a map[string]string) *clusterv1alpha1.KubernetesCluster {
		return &clusterv1alpha1.KubernetesCluster{ObjectMeta: metav1.ObjectMeta{Annotations: a}}
	}
	retry := clusterv1alpha1.RetryAnnotation
	for name, tc := range map[string]struct {
		old, new map[string]string
		changed  bool
	}{
		"set":                {nil, map[string]string{retry: "1"}, true},
		"changed":            {map[string]string{retry: "1"}, map[string]string{retry: "2"}, true},
		"removed":            {map[string]string{retry: "1"}, nil, true},
		"kept":               {map[string]string{retry: "1"}, map[string]string{retry: "1", "note": "x"}, false},
		"another annotation": {nil, map[string]string{"note": "x"}, false},
	} {
		if got := KubernetesCluster.commandChanged(with(tc.old), with(tc.new)); got != tc.changed {
			t.Errorf("%s: commandChanged = %v, want %v", name, got, tc.changed)
		}
	}
}

// A quantity that does not parse is answered with a field error naming
// it, though the typed decoding fails on it with a message that names no
// field — and so is one with spaces around it, which the typed decoding
// takes (and the patch would write back trimmed) but the CRD's schema
// refuses.
func TestAQuantityThatDoesNotParseIsAFieldError(t *testing.T) {
	wh := admission.WithDefaulter[*appsv1alpha1.PodSet](scheme.New(), defaulter[*appsv1alpha1.PodSet]{k: PodSet})
	h := guardQuantities(PodSet.GVK.GroupKind(), wh.Handler)
	request := func(cpu string) admission.Request {
		raw := `{"apiVersion":"apps.kubeforge.io/v1alpha1","kind":"PodSet","metadata":{"name":"p","namespace":"default"},` +
			`"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx","resources":{"requests":{"cpu":"` + cpu + `"}}}]}}}}`
		return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
			Operation: admissionv1.Create, Name: "p", Namespace: "default",
			Object: runtime.RawExtension{Raw: []byte(raw)},
		}}
	}
	for _, bad := range []string{"abc", " 500m"} {
		resp := h.Handle(context.Background(), request(bad))
		if resp.Allowed || resp.Result == nil || resp.Result.Code != http.StatusUnprocessableEntity {
			t.Fatalf("%q: want a 422 refusal, got allowed=%v result=%+v", bad, resp.Allowed, resp.Result)
		}
		if want := "spec.template.spec.containers[0].resources.requests[cpu]"; !strings.Contains(resp.Result.Message, want) {
			t.Errorf("%q: the refusal does not name %s: %s", bad, want, resp.Result.Message)
		}
	}
	if resp := h.Handle(context.Background(), request("500m")); !resp.Allowed {
		t.Errorf("a good quantity was refused: %+v", resp.Result)
	}
}
