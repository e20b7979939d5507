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

package main

import (
	"maps"
	"strings"
	"testing"

	"github.com/kubeforge/kubeforge/internal/scheme"
	"github.com/kubeforge/kubeforge/internal/validation"
)

func TestKindConcurrency(t *testing.T) {
	ks := kinds("cluster.local", "", false, "", "", validation.DefaultInstallerImages, nil, validation.Policy{})
	for _, tc := range []struct {
		value, err string
		want       map[string]int
	}{
		{value: "", want: map[string]int{}},
		{value: "PodSet=8", want: map[string]int{"PodSet.apps.kubeforge.io": 8}},
		{value: " podset = 8 , Balancer=2,KubernetesCluster=1", want: map[string]int{
			"PodSet.apps.kubeforge.io": 8, "Balancer.networking.kubeforge.io": 2, "KubernetesCluster.cluster.kubeforge.io": 1}},
		{value: "Workspace=3,Platform=5", want: map[string]int{"Workspace.ide.kubeforge.io": 3, "Platform.apps.kubeforge.io": 5}},
		{value: "PodSet", err: "want Kind=count"},
		{value: "Deployment=3", err: `unknown kind "Deployment"; one of Balancer, KubernetesCluster, Platform, PodSet, Workspace`},
		{value: "PodSet=0", err: "at least 1"},
		{value: "PodSet=many", err: "at least 1"},
		{value: "PodSet=2,podset=3", err: "named twice"},
	} {
		got, err := kindConcurrency(tc.value, ks, scheme.New())
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want one containing %q", tc.value, err, tc.err)
			}
			continue
		}
		if err != nil || !maps.Equal(got, tc.want) {
			t.Errorf("%q: got %v, %v; want %v", tc.value, got, err, tc.want)
		}
	}
}
