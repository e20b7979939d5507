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
	"encoding/json"
	"io"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

// TestImportRules reads every package's dependencies with go list (test
// files excluded: a test may wire what production code may not) and
// fails on each rule broken.
func TestImportRules(t *testing.T) {
	cmd := exec.Command("go", "list", "-json", Module+"/...")
	cmd.Dir = "../.."
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deps := map[string][]string{}
	dec := json.NewDecoder(out)
	for {
		var p struct {
			ImportPath string
			Deps       []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkg, ok := rel(p.ImportPath)
		if !ok {
			continue
		}
		deps[pkg] = nil
		for _, d := range p.Deps {
			if r, ok := rel(d); ok {
				deps[pkg] = append(deps[pkg], r)
			}
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, must := range []string{"api/apps/v1alpha1", "controllers/podset", "internal/apiserver", "webhooks/apps/v1alpha1"} {
		if _, ok := deps[must]; !ok {
			t.Fatalf("go list did not report %s: the check would see nothing", must)
		}
	}
	v := Violations(deps)
	sort.Strings(v)
	for _, line := range v {
		t.Error(line)
	}
}

func rel(path string) (string, bool) {
	if !strings.HasPrefix(path, Module+"/") {
		return "", false
	}
	return strings.TrimPrefix(path, Module+"/"), true
}

// TestViolationsFindsBrokenRules makes sure the check can fail.
func TestViolationsFindsBrokenRules(t *testing.T) {
	cases := map[string]struct {
		deps map[string][]string
		want int
	}{
		"the API server importing a controller":             {map[string][]string{"internal/apiserver": {"controllers/workspace"}}, 1},
		"a controller importing a webhook package":          {map[string][]string{"controllers/podset": {"webhooks/apps/v1alpha1"}}, 1},
		"the API importing the engine":                      {map[string][]string{"api/apps/v1alpha1": {"internal/engine"}}, 1},
		"a controller using the engine, admit and the API":  {map[string][]string{"controllers/podset": {"internal/engine", "internal/admit", "api/apps/v1alpha1"}}, 0},
		"a sub-package of the API server":                   {map[string][]string{"internal/apiserver/idev1": {"controllers/kubernetescluster"}}, 1},
		"a package whose name only starts like a ruled one": {map[string][]string{"internal/apiserverx": {"controllers/podset"}}, 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Violations(tc.deps); len(got) != tc.want {
				t.Fatalf("violations = %v, want %d", got, tc.want)
			}
		})
	}
}
