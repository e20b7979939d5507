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
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
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
		"find a resources name written with an escape": {
			raw:   `{"spec":{"res\u006furces":{"limits":{"cpu":" 1"}}}}`,
			paths: []string{"spec.resources.limits[cpu]"},
		},
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
	f.Add([]byte(`{"spec":{"res\u006furces":{"limits":{"cpu":" 1"}}}}`))
	f.Add([]byte(`{"spec":{"containers":[{"name":"a","resources":{}}]}}`))
	f.Add([]byte(`{"spec":{"containers":[{"name":"a","resources":{"limits":{"cpu":"x"}}}]}}`))
	f.Add([]byte(`{"spec":{"resources":{"requ\u0065sts":{"cpu":"x"}}}}`))
	f.Add([]byte(`{"spec":`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		// Must never panic, whatever the input.
		errs := RawQuantityErrors(raw)
		for _, e := range errs {
			if e.Detail == "" {
				t.Fatalf("error without a message: %v", e)
			}
		}
		// The shortcut for documents without those names finds every bad
		// quantity the whole walk finds. (Where the walk cannot decode a
		// valid document — a number beyond float64, which no object the API
		// server sends holds — the shortcut leaves it to the typed decoding
		// to refuse.)
		if len(raw) == 0 {
			return
		}
		quantities := func(errs field.ErrorList) (out field.ErrorList) {
			for _, e := range errs {
				if e.Field != "object" {
					out = append(out, e)
				}
			}
			return out
		}
		if walked := walkRawQuantities(raw); !reflect.DeepEqual(quantities(errs), quantities(walked)) {
			t.Fatalf("RawQuantityErrors(%q) = %v, the whole walk %v", raw, errs, walked)
		}
	})
}
