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
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// Every controller is completed with engine.Waits, so an object being
// made anew is a short requeue in every kind, never a "Reconciler error"
// with back-off (docs/engine.md). A controller completed otherwise, or a
// kind without a controller found here, fails.
func TestEveryControllerIsCompletedWithTheEnginesWaits(t *testing.T) {
	files, err := filepath.Glob("../../controllers/*/*.go")
	if err != nil {
		t.Fatal(err)
	}
	completed := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); !ok || sel.Sel.Name != "Complete" || len(call.Args) != 1 {
				return true
			}
			kind := filepath.Base(filepath.Dir(f))
			if arg, ok := call.Args[0].(*ast.CallExpr); ok {
				if sel, ok := arg.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Waits" {
					if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "engine" {
						completed[kind] = true
						return true
					}
				}
			}
			t.Errorf("%s: a controller completed without engine.Waits", f)
			return true
		})
	}
	for _, kind := range []string{"balancer", "kubernetescluster", "platform", "podset", "workspace"} {
		if !completed[kind] {
			t.Errorf("controllers/%s: no controller completed with engine.Waits", kind)
		}
	}
}
