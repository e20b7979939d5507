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

package archtest

import (
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// The namespace-scoped kustomize install grants the manager's namespaced
// rules only by RoleBindings, in exactly the namespaces it serves and its
// own, and keeps the cluster-scoped rules cluster-wide.
func TestNamespacedInstallBindsTheNamespacedRoleOnlyWhereItServes(t *testing.T) {
	cmd := exec.Command("go", "tool", "-modfile=hack/tools/go.mod", "kustomize", "build", "config/namespaced")
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kustomize build config/namespaced: %v: %s", err, stderr.String())
	}
	var served []string
	var boundIn, clusterBound []string
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(out), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			break
		}
		role, _, _ := unstructured.NestedString(u.Object, "roleRef", "name")
		switch u.GetKind() {
		case "RoleBinding":
			if role == "kubeforge-manager-role" {
				boundIn = append(boundIn, u.GetNamespace())
			}
		case "ClusterRoleBinding":
			clusterBound = append(clusterBound, role)
		case "Deployment":
			containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
			for _, c := range containers {
				args, _, _ := unstructured.NestedStringSlice(c.(map[string]any), "args")
				for _, a := range args {
					if v, ok := strings.CutPrefix(a, "--watch-namespaces="); ok {
						served = strings.Split(v, ",")
					}
				}
			}
		}
	}
	if len(served) == 0 {
		t.Fatal("the manager has no --watch-namespaces")
	}
	if slices.Contains(clusterBound, "kubeforge-manager-role") {
		t.Error("kubeforge-manager-role is still bound cluster-wide")
	}
	if !slices.Contains(clusterBound, "kubeforge-manager-cluster-role") {
		t.Error("kubeforge-manager-cluster-role is not bound")
	}
	want := append(slices.Clone(served), "kubeforge-system")
	slices.Sort(want)
	slices.Sort(boundIn)
	if !slices.Equal(boundIn, want) {
		t.Errorf("kubeforge-manager-role is bound in %v, want the served namespaces and the manager's own: %v", boundIn, want)
	}
}
