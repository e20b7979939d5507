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

package kubernetescluster

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
)

func ops(list ...string) []clusterv1alpha1.Operation {
	var out []clusterv1alpha1.Operation
	for i := 0; i < len(list); i += 2 {
		out = append(out, clusterv1alpha1.Operation{Type: clusterv1alpha1.OperationType(list[i]), Result: clusterv1alpha1.OperationResult(list[i+1])})
	}
	return out
}

func TestNextOperation(t *testing.T) {
	now := metav1.Now()
	installed := func(version string, nodes ...string) func(*clusterv1alpha1.KubernetesCluster) {
		return func(kc *clusterv1alpha1.KubernetesCluster) {
			kc.Status.Version = version
			kc.Status.InstalledNodes = nodes
			kc.Status.Operations = ops("precheck", "Succeeded", "create", "Succeeded")
		}
	}
	cases := []struct {
		name   string
		mutate func(*clusterv1alpha1.KubernetesCluster)
		want   *Next
	}{
		{"no status: precheck", nil, &Next{Type: clusterv1alpha1.OpPrecheck}},
		{"precheck passed: create with every node", func(kc *clusterv1alpha1.KubernetesCluster) {
			kc.Status.Operations = ops("precheck", "Succeeded")
		}, &Next{Type: clusterv1alpha1.OpCreate, Version: "v1.31.4", Hosts: []string{"10.0.0.21", "node2.example.com"}}},
		{"precheck failed: precheck again (on retry)", func(kc *clusterv1alpha1.KubernetesCluster) {
			kc.Status.Operations = ops("precheck", "Failed")
		}, &Next{Type: clusterv1alpha1.OpPrecheck}},
		{"create failed: create again (on retry)", func(kc *clusterv1alpha1.KubernetesCluster) {
			kc.Status.Operations = ops("precheck", "Succeeded", "create", "Failed")
		}, &Next{Type: clusterv1alpha1.OpCreate, Version: "v1.31.4", Hosts: []string{"10.0.0.21", "node2.example.com"}}},
		{"installed as specified: nothing", installed("v1.31.4", "10.0.0.21", "node2.example.com"), nil},
		{"a node added: scale-up of that node only", installed("v1.31.4", "10.0.0.21"),
			&Next{Type: clusterv1alpha1.OpScaleUp, Hosts: []string{"node2.example.com"}}},
		{"a node removed: scale-down of that node only", installed("v1.31.4", "10.0.0.21", "node2.example.com", "10.0.0.99"),
			&Next{Type: clusterv1alpha1.OpScaleDown, Hosts: []string{"10.0.0.99"}}},
		{"scale-down comes before scale-up", installed("v1.31.4", "10.0.0.21", "10.0.0.99"),
			&Next{Type: clusterv1alpha1.OpScaleDown, Hosts: []string{"10.0.0.99"}}},
		{"the version raised: upgrade", func(kc *clusterv1alpha1.KubernetesCluster) {
			installed("v1.30.2", "10.0.0.21", "node2.example.com")(kc)
		}, &Next{Type: clusterv1alpha1.OpUpgrade, Version: "v1.31.4"}},
		{"a node added and the version raised: scale first", func(kc *clusterv1alpha1.KubernetesCluster) {
			installed("v1.30.2", "10.0.0.21")(kc)
		}, &Next{Type: clusterv1alpha1.OpScaleUp, Hosts: []string{"node2.example.com"}}},
		{"deleting an installed cluster: reset", func(kc *clusterv1alpha1.KubernetesCluster) {
			installed("v1.31.4", "10.0.0.21", "node2.example.com")(kc)
			kc.DeletionTimestamp = &now
		}, &Next{Type: clusterv1alpha1.OpReset}},
		{"deleting with resetOnDelete false: nothing", func(kc *clusterv1alpha1.KubernetesCluster) {
			installed("v1.31.4")(kc)
			kc.DeletionTimestamp = &now
			kc.Spec.ResetOnDelete = ptr.To(false)
		}, nil},
		{"deleting a cluster that never got past precheck: nothing to reset", func(kc *clusterv1alpha1.KubernetesCluster) {
			kc.Status.Operations = ops("precheck", "Failed")
			kc.DeletionTimestamp = &now
		}, nil},
		{"deleting after a successful reset: nothing more", func(kc *clusterv1alpha1.KubernetesCluster) {
			kc.Status.Operations = ops("precheck", "Succeeded", "create", "Succeeded", "reset", "Succeeded")
			kc.DeletionTimestamp = &now
		}, nil},
		{"deleting after a failed create: reset", func(kc *clusterv1alpha1.KubernetesCluster) {
			kc.Status.Operations = ops("precheck", "Succeeded", "create", "Failed")
			kc.DeletionTimestamp = &now
		}, &Next{Type: clusterv1alpha1.OpReset}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			kc := cluster(tc.mutate)
			if got := NextOperation(kc); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("NextOperation = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestCompareVersions(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{{"v1.31.4", "v1.31.4", 0}, {"v1.31.10", "v1.31.9", 1}, {"v1.30.0", "v1.31.0", -1}, {"v2.0.0", "v1.99.99", 1}, {"1.31.4", "v1.0.0", -1}} {
		if got := clusterv1alpha1.CompareVersions(tc.a, tc.b); got != tc.want {
			t.Errorf("CompareVersions(%s, %s) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
