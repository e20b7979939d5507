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
	"fmt"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// defaultKindConcurrency is --max-concurrent-reconciles-per-kind's
// default. A Workspace's start is what a person waits for (the API's
// create-and-wait, a portal): with 4 workers, five Workspaces created at
// once queued the fifth behind the others' follow-up reconciles, and the
// median start overhead on the local cluster went from ≈ 430 ms to
// ≈ 290 ms with 8 (docs/performance.md). Its reconciles mostly wait on
// the API server, so the workers cost little.
const defaultKindConcurrency = "Workspace=8"

// kindConcurrency parses --max-concurrent-reconciles-per-kind, e.g.
// "PodSet=8,Balancer=2", into controller-runtime's GroupKindConcurrency
// (keys like PodSet.apps.kubeforge.io). Kinds not named keep
// --max-concurrent-reconciles.
func kindConcurrency(value string, ks []kind, s *runtime.Scheme) (map[string]int, error) {
	out := map[string]int{}
	if strings.TrimSpace(value) == "" {
		return out, nil
	}
	byName := map[string]string{}
	var names []string
	for _, k := range ks {
		gvk, err := apiutil.GVKForObject(k.object, s)
		if err != nil {
			return nil, err
		}
		byName[strings.ToLower(k.name)] = gvk.GroupKind().String()
		names = append(names, k.name)
	}
	sort.Strings(names)
	for _, pair := range strings.Split(value, ",") {
		name, count, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok {
			return nil, fmt.Errorf("%q: want Kind=count, e.g. PodSet=8", pair)
		}
		gk, known := byName[strings.ToLower(strings.TrimSpace(name))]
		if !known {
			return nil, fmt.Errorf("%q: unknown kind %q; one of %s", pair, name, strings.Join(names, ", "))
		}
		if _, twice := out[gk]; twice {
			return nil, fmt.Errorf("%q: %s named twice", pair, name)
		}
		n, err := strconv.Atoi(strings.TrimSpace(count))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q: the count must be a whole number of at least 1", pair)
		}
		out[gk] = n
	}
	return out, nil
}
