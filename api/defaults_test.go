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

package api_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
	networkingv1alpha1 "github.com/kubeforge/kubeforge/api/networking/v1alpha1"
)

// upstream are the properties whose schemas are Kubernetes' own types
// (a pod template, env vars, a probe): their defaults are Kubernetes', not
// ours.
var upstream = map[string]bool{
	"status": true, "template": true, "env": true, "envFrom": true,
	"imagePullSecrets": true, "adminSecretRef": true, "caSecretRef": true, "readinessProbe": true,
}

// schemaDefaults collects the default of every property below path that
// kubeforge's types declare, by path ("spec.backends[].weight"). An
// empty-object default only makes the API server fill the object's own
// defaults in; it is left out.
func schemaDefaults(s *apiextensionsv1.JSONSchemaProps, path string, out map[string]string) {
	if s.Default != nil && string(s.Default.Raw) != "{}" {
		out[path] = string(s.Default.Raw)
	}
	for name, p := range s.Properties {
		if upstream[name] {
			continue
		}
		schemaDefaults(&p, strings.TrimPrefix(path+"."+name, "."), out)
	}
	if s.Items != nil && s.Items.Schema != nil {
		schemaDefaults(s.Items.Schema, path+"[]", out)
	}
}

// valueAt reads path from an unstructured object, taking the first item
// of every list on the way.
func valueAt(obj map[string]any, path string) (any, bool) {
	var cur any = obj
	for _, part := range strings.Split(path, ".") {
		list := strings.HasSuffix(part, "[]")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[strings.TrimSuffix(part, "[]")]; !ok {
			return nil, false
		}
		if list {
			items, ok := cur.([]any)
			if !ok || len(items) == 0 {
				return nil, false
			}
			cur = items[0]
		}
	}
	return cur, true
}

// TestCRDDefaultsAreTheGoDefaults holds the two places a default is
// written to one value: the CRD's default marker (so the API server
// defaults even without the webhook) and the Go default in the API
// package (which the webhook and every reconciler run). Each kind's
// object has one item in every list that has defaulted fields.
func TestCRDDefaultsAreTheGoDefaults(t *testing.T) {
	quantity := resource.MustParse("1Gi")
	objects := map[string]runtime.Object{
		"PodSet": func() runtime.Object {
			ps := &appsv1alpha1.PodSet{}
			appsv1alpha1.DefaultPodSet(ps)
			return ps
		}(),
		"Platform": func() runtime.Object {
			p := &appsv1alpha1.Platform{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
			p.Spec.Database = &appsv1alpha1.PlatformDatabase{Engine: appsv1alpha1.DatabasePostgreSQL}
			p.Spec.Components = []appsv1alpha1.PlatformComponent{{
				Name:    "c",
				Ports:   []appsv1alpha1.ComponentPort{{Name: "http", Port: 80}},
				Storage: &appsv1alpha1.ComponentStorage{Size: quantity},
				Ingress: &appsv1alpha1.ComponentIngress{Host: "c.example.com", TLS: &appsv1alpha1.ComponentTLS{}},
				Hooks:   &appsv1alpha1.ComponentHooks{Bootstrap: &appsv1alpha1.HookJob{}, PreUpgrade: &appsv1alpha1.HookJob{}},
			}}
			p.Spec.Secrets = []appsv1alpha1.PlatformSecret{{Name: "admin", Keys: []string{"password"}}}
			appsv1alpha1.DefaultPlatform(p)
			return p
		}(),
		"Balancer": func() runtime.Object {
			b := &networkingv1alpha1.Balancer{}
			b.Spec.Backends = []networkingv1alpha1.BalancerBackend{{Name: "a"}}
			b.Spec.Ports = []networkingv1alpha1.BalancerPort{{Name: "p", Port: 80}}
			networkingv1alpha1.DefaultBalancer(b)
			return b
		}(),
		"Workspace": func() runtime.Object {
			ws := &idev1alpha1.Workspace{}
			ws.Spec.Ingress = &idev1alpha1.WorkspaceIngress{Host: "a.example.com", TLS: &idev1alpha1.WorkspaceTLS{}}
			idev1alpha1.DefaultWorkspace(ws)
			return ws
		}(),
		"KubernetesCluster": func() runtime.Object {
			kc := &clusterv1alpha1.KubernetesCluster{}
			clusterv1alpha1.DefaultKubernetesCluster(kc)
			return kc
		}(),
	}
	checked := 0
	for _, crd := range loadCRDs(t) {
		kind := crd.Spec.Names.Kind
		obj, ok := objects[kind]
		if !ok {
			t.Errorf("no defaulted %s to compare its CRD's defaults with", kind)
			continue
		}
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			t.Fatal(err)
		}
		defaults := map[string]string{}
		for _, v := range crd.Spec.Versions {
			schemaDefaults(v.Schema.OpenAPIV3Schema, "", defaults)
		}
		for path, want := range defaults {
			got, ok := valueAt(u, path)
			if !ok {
				t.Errorf("%s: the CRD defaults %s to %s, the Go default leaves it unset", kind, path, want)
				continue
			}
			raw, _ := json.Marshal(got)
			var compact bytes.Buffer
			_ = json.Compact(&compact, []byte(want))
			if string(raw) != compact.String() {
				t.Errorf("%s: the CRD defaults %s to %s, the Go default to %s", kind, path, compact.String(), raw)
			}
			checked++
		}
	}
	if checked < 15 {
		t.Fatalf("compared only %d defaults; the CRDs declare more", checked)
	}
}
