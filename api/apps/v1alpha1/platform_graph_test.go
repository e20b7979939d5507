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

package v1alpha1_test

import (
	"reflect"
	"strings"
	"testing"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
)

// components builds components from "name:dep1,dep2" strings.
func components(specs ...string) []appsv1alpha1.PlatformComponent {
	var out []appsv1alpha1.PlatformComponent
	for _, s := range specs {
		name, deps, _ := strings.Cut(s, ":")
		c := appsv1alpha1.PlatformComponent{Name: name}
		if deps != "" {
			c.DependsOn = strings.Split(deps, ",")
		}
		out = append(out, c)
	}
	return out
}

func TestDependencyOrder(t *testing.T) {
	cases := []struct {
		name  string
		comps []string
		order []string
		cycle []string
	}{
		{"independent components keep spec order", []string{"a", "b", "c"}, []string{"a", "b", "c"}, nil},
		{"a chain comes out dependencies first", []string{"c:b", "b:a", "a"}, []string{"a", "b", "c"}, nil},
		{"a diamond puts the join last", []string{"d:b,c", "b:a", "c:a", "a"}, []string{"a", "b", "c", "d"}, nil},
		{"a cycle is named along dependsOn", []string{"a:c", "b:a", "c:b", "x"}, nil, []string{"a", "c", "b", "a"}},
		{"a cycle behind a dependent is found", []string{"x:a", "a:b", "b:a"}, nil, []string{"a", "b", "a"}},
		{"a self-dependency is ignored here (validation refuses it)", []string{"a:a"}, []string{"a"}, nil},
		{"an unknown dependency is ignored here (validation refuses it)", []string{"a:zz", "b:a"}, []string{"a", "b"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			comps := components(tc.comps...)
			order, cycle := appsv1alpha1.DependencyOrder(comps)
			var got []string
			for _, i := range order {
				got = append(got, comps[i].Name)
			}
			if !reflect.DeepEqual(got, tc.order) || !reflect.DeepEqual(cycle, tc.cycle) {
				t.Fatalf("order = %v, cycle = %v; want %v, %v", got, cycle, tc.order, tc.cycle)
			}
		})
	}
}
