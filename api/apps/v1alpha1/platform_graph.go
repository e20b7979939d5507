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

package v1alpha1

import "sort"

// DependencyOrder is the one reading of the components' dependsOn graph:
// the admission rules refuse a cycle with it, and the controller deploys in
// the order it returns.
//
// It returns the indexes of comps in dependency order (a component after
// everything it depends on; ties in spec order). When dependsOn forms a
// cycle it returns no order but the names along one cycle, following
// dependsOn, the first name repeated at the end ("a → c → b → a").
// Unknown names and a component naming itself are ignored: validation
// reports those on their own.
func DependencyOrder(comps []PlatformComponent) (order []int, cycle []string) {
	index := map[string]int{}
	for i, c := range comps {
		index[c.Name] = i
	}
	deps := make([][]int, len(comps))
	indegree := make([]int, len(comps))
	dependents := make([][]int, len(comps))
	for i, c := range comps {
		for _, d := range c.DependsOn {
			j, ok := index[d]
			if !ok || j == i {
				continue
			}
			deps[i] = append(deps[i], j)
			indegree[i]++
			dependents[j] = append(dependents[j], i)
		}
	}
	var ready []int
	for i := range comps {
		if indegree[i] == 0 {
			ready = append(ready, i)
		}
	}
	for len(ready) > 0 {
		sort.Ints(ready)
		i := ready[0]
		ready = ready[1:]
		order = append(order, i)
		for _, j := range dependents[i] {
			if indegree[j]--; indegree[j] == 0 {
				ready = append(ready, j)
			}
		}
	}
	if len(order) == len(comps) {
		return order, nil
	}
	// Every component left over waits for another one left over: walking
	// from the first of them along such dependencies must come back.
	start := -1
	for i := range comps {
		if indegree[i] > 0 {
			start = i
			break
		}
	}
	seen := map[int]int{}
	var path []int
	for i := start; ; {
		if at, ok := seen[i]; ok {
			for _, j := range path[at:] {
				cycle = append(cycle, comps[j].Name)
			}
			return nil, append(cycle, comps[i].Name)
		}
		seen[i] = len(path)
		path = append(path, i)
		for _, j := range deps[i] {
			if indegree[j] > 0 {
				i = j
				break
			}
		}
	}
}
