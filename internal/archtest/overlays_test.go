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

// build is what kustomize makes of a directory of config/.
func build(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	cmd := exec.Command("go", "tool", "-modfile=hack/tools/go.mod", "kustomize", "build", dir)
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kustomize build %s: %v: %s", dir, err, stderr.String())
	}
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(out), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			break
		}
		objs = append(objs, u)
	}
	return objs
}

// managerArgs are the manager container's arguments.
func managerArgs(objs []*unstructured.Unstructured) []string {
	for _, u := range objs {
		if u.GetKind() != "Deployment" {
			continue
		}
		containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
		for _, c := range containers {
			if c.(map[string]any)["name"] == "manager" {
				args, _, _ := unstructured.NestedStringSlice(c.(map[string]any), "args")
				return args
			}
		}
	}
	return nil
}

// The install without cert-manager carries none of its objects, has the
// manager make the webhooks' certificate (the API's follows from no
// --api-cert-path), and may write the CA into kubeforge's two webhook
// configurations only.
func TestInstallWithoutCertManagerHasTheManagerMakeTheCertificates(t *testing.T) {
	objs := build(t, "config/without-cert-manager")
	for _, u := range objs {
		if strings.HasPrefix(u.GetAPIVersion(), "cert-manager.io/") {
			t.Errorf("%s %s is cert-manager's", u.GetKind(), u.GetName())
		}
		if _, ok := u.GetAnnotations()["cert-manager.io/inject-ca-from"]; ok {
			t.Errorf("%s %s waits for cert-manager's CA injector", u.GetKind(), u.GetName())
		}
		if u.GetKind() == "ClusterRole" && u.GetName() == "kubeforge-webhook-cert-role" {
			rules, _, _ := unstructured.NestedSlice(u.Object, "rules")
			for _, r := range rules {
				verbs, _, _ := unstructured.NestedStringSlice(r.(map[string]any), "verbs")
				names, _, _ := unstructured.NestedStringSlice(r.(map[string]any), "resourceNames")
				if (slices.Contains(verbs, "update") || slices.Contains(verbs, "patch")) && len(names) == 0 {
					t.Error("kubeforge-webhook-cert-role may write every webhook configuration, not only kubeforge's")
				}
			}
		}
	}
	args := managerArgs(objs)
	if !slices.Contains(args, "--webhook-cert-provision") {
		t.Errorf("the manager does not make the webhooks' certificate: %v", args)
	}
	for _, a := range args {
		if strings.Contains(a, "-cert-path=") {
			t.Errorf("the manager still reads a certificate cert-manager would have made: %s", a)
		}
	}
}

// The namespace-scoped kustomize install grants the manager's namespaced
// rules only by RoleBindings, in exactly the namespaces it serves and its
// own, and keeps the cluster-scoped rules cluster-wide.
func TestNamespacedInstallBindsTheNamespacedRoleOnlyWhereItServes(t *testing.T) {
	objs := build(t, "config/namespaced")
	var served []string
	var boundIn, clusterBound []string
	for _, u := range objs {
		role, _, _ := unstructured.NestedString(u.Object, "roleRef", "name")
		switch u.GetKind() {
		case "RoleBinding":
			if role == "kubeforge-manager-role" {
				boundIn = append(boundIn, u.GetNamespace())
			}
		case "ClusterRoleBinding":
			clusterBound = append(clusterBound, role)
		}
	}
	for _, a := range managerArgs(objs) {
		if v, ok := strings.CutPrefix(a, "--watch-namespaces="); ok {
			served = strings.Split(v, ",")
		}
	}
	if len(served) == 0 {
		t.Fatal("the manager has no --watch-namespaces")
	}
	for _, u := range objs {
		if !strings.HasSuffix(u.GetKind(), "WebhookConfiguration") {
			continue
		}
		hooks, _, _ := unstructured.NestedSlice(u.Object, "webhooks")
		for _, h := range hooks {
			exprs, _, _ := unstructured.NestedSlice(h.(map[string]any), "namespaceSelector", "matchExpressions")
			var values []string
			for _, e := range exprs {
				if e.(map[string]any)["key"] == "kubernetes.io/metadata.name" {
					values, _, _ = unstructured.NestedStringSlice(e.(map[string]any), "values")
				}
			}
			if !slices.Equal(values, served) {
				t.Errorf("webhook %v of %s is called for namespaces %v, not the served %v", h.(map[string]any)["name"], u.GetName(), values, served)
			}
		}
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
