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

package validation

import (
	"strings"
	"testing"
)

func TestRawQuantityErrors(t *testing.T) {
	cases := map[string]struct {
		raw   string
		paths []string
	}{
		"accept good quantities everywhere": {
			raw: `{"spec":{"template":{"spec":{"containers":[{"resources":{"requests":{"cpu":"500m","memory":"1Gi"},"limits":{"cpu":2}}}]}}}}`,
		},
		"report a bad request with its full path": {
			raw:   `{"spec":{"template":{"spec":{"containers":[{"name":"a"},{"resources":{"requests":{"cpu":"abc"}}}]}}}}`,
			paths: []string{"spec.template.spec.containers[1].resources.requests[cpu]"},
		},
		"report every bad quantity, in a stable order": {
			raw: `{"spec":{"resources":{"limits":{"memory":"1GG","cpu":"x"},"requests":{"cpu":true}}}}`,
			paths: []string{
				"spec.resources.limits[cpu]", "spec.resources.limits[memory]", "spec.resources.requests[cpu]",
			},
		},
		"ignore requests and limits outside a resources object": {
			raw: `{"spec":{"requests":{"cpu":"abc"},"limits":"whatever"}}`,
		},
		"accept an empty body":            {raw: ``},
		"report JSON that does not parse": {raw: `{"spec":`, paths: []string{"object"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			errs := RawQuantityErrors([]byte(tc.raw))
			var got []string
			for _, e := range errs {
				got = append(got, e.Field)
			}
			if strings.Join(got, " ") != strings.Join(tc.paths, " ") {
				t.Fatalf("paths = %q, want %q (errors: %v)", got, tc.paths, errs)
			}
		})
	}
}

func FuzzRawQuantityErrors(f *testing.F) {
	f.Add([]byte(`{"resources":{"requests":{"cpu":"1"}}}`))
	f.Add([]byte(`{"a":[{"resources":{"limits":{"memory":"1e3"}}}]}`))
	f.Add([]byte(`[1,2,{"resources":null}]`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		// Must never panic, whatever the input.
		for _, e := range RawQuantityErrors(raw) {
			if e.Detail == "" {
				t.Fatalf("error without a message: %v", e)
			}
		}
	})
}
