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
	"reflect"
	"slices"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/validation"
)

// The references policy names what kubeforge made for an object with CEL
// (ImplicitCEL) over the object as stored without the webhooks (not
// defaulted); the webhook with Go (Implicit) over the defaulted object.
// They must name the same objects.
func TestImplicitCELNamesWhatImplicitNames(t *testing.T) {
	env, err := cel.NewEnv(cel.Variable("object", cel.DynType), ext.Lists(ext.ListsVersion(3)))
	if err != nil {
		t.Fatal(err)
	}
	byCEL := func(expr string, obj client.Object) []string {
		t.Helper()
		ast, iss := env.Compile(expr)
		if iss.Err() != nil {
			t.Fatalf("%s: %v", expr, iss.Err())
		}
		prg, err := env.Program(ast)
		if err != nil {
			t.Fatal(err)
		}
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			t.Fatal(err)
		}
		out, _, err := prg.Eval(map[string]any{"object": m})
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		names, err := out.ConvertToNative(reflect.TypeFor[[]string]())
		if err != nil {
			t.Fatal(err)
		}
		got := names.([]string)
		slices.Sort(got)
		return got
	}
	byGo := func(refs []validation.Reference, kind string) []string {
		var out []string
		for _, r := range refs {
			if r.Kind == kind {
				out = append(out, r.Name)
			}
		}
		slices.Sort(out)
		return out
	}
	compare := func(t *testing.T, what string, cel map[string]string, obj client.Object, refs []validation.Reference) {
		for variable, kind := range map[string]string{"secrets": validation.RefSecret, "claims": validation.RefClaim} {
			var got []string
			if expr, ok := cel[variable]; ok {
				got = byCEL(expr, obj)
			}
			if want := byGo(refs, kind); !reflect.DeepEqual(got, want) && (len(got) > 0 || len(want) > 0) {
				t.Errorf("%s: the policy names %s %v, the webhook %v", what, kind, got, want)
			}
		}
	}

	meta := metav1.ObjectMeta{Name: "alices", Namespace: "team"}
	for what, ws := range map[string]*idev1alpha1.Workspace{
		"auth unset (Password by default)": {ObjectMeta: meta},
		"auth Password":                    {ObjectMeta: meta, Spec: idev1alpha1.WorkspaceSpec{Auth: idev1alpha1.WorkspaceAuth{Mode: idev1alpha1.AuthPassword}}},
		"auth None":                        {ObjectMeta: meta, Spec: idev1alpha1.WorkspaceSpec{Auth: idev1alpha1.WorkspaceAuth{Mode: idev1alpha1.AuthNone}}},
	} {
		defaulted := ws.DeepCopy()
		Workspace.Default(defaulted)
		compare(t, "Workspace, "+what, Workspace.ImplicitCEL, ws, Workspace.Implicit(defaulted))
	}

	storage := &appsv1alpha1.ComponentStorage{}
	p := &appsv1alpha1.Platform{ObjectMeta: meta, Spec: appsv1alpha1.PlatformSpec{
		Secrets: []appsv1alpha1.PlatformSecret{{Name: "jwt"}, {Name: "cookie"}},
		Components: []appsv1alpha1.PlatformComponent{
			{Name: "api", Database: &appsv1alpha1.ComponentDatabase{Enabled: true}, Storage: storage},
			{Name: "db", Workload: appsv1alpha1.WorkloadStatefulSet, Storage: storage},
			{Name: "old", Database: &appsv1alpha1.ComponentDatabase{Enabled: false}},
			{Name: "cache", Workload: appsv1alpha1.WorkloadDeployment, Storage: storage, Replicas: ptr.To[int32](2)},
		}}}
	defaulted := p.DeepCopy()
	Platform.Default(defaulted)
	compare(t, "Platform", Platform.ImplicitCEL, p, Platform.Implicit(defaulted))
	if len(Platform.Implicit(defaulted)) < 5 {
		t.Fatalf("the sample names too little to prove anything: %v", Platform.Implicit(defaulted))
	}
}

// Every kind whose spec names objects has a references policy, and the
// generator (which refuses a spec field it could not compare) runs.
func TestReferencePoliciesCoverEveryKindThatNamesObjects(t *testing.T) {
	var names []string
	for _, obj := range ReferencePolicies() {
		if _, ok := obj.(*admissionregistrationv1.ValidatingAdmissionPolicy); ok {
			names = append(names, obj.GetName())
		}
	}
	want := []string{"kubeforge-references-podsets", "kubeforge-references-platforms", "kubeforge-references-workspaces", "kubeforge-references-kubernetesclusters"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("policies %v, want %v (a Balancer names nothing)", names, want)
	}
}
