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

// Package archtest holds the import rules of kubeforge's packages, as a
// test, so that the arrows docs/architecture.md draws stay true: the API
// is a leaf, rules do not reach into controllers, front doors (webhooks,
// the API server) and controllers do not reach into each other.
package archtest

// Module is kubeforge's module path.
const Module = "github.com/kubeforge/kubeforge"

// Rule forbids the packages under From to depend, directly or not, on any
// package under one of Not. Paths are relative to the module.
type Rule struct {
	From string
	Not  []string
	Why  string
}

// Rules are kubeforge's import rules.
var Rules = []Rule{
	{From: "api/", Not: []string{"controllers/", "webhooks/", "internal/", "cmd/"},
		Why: "the API types, defaults and shared names are the leaf every other package builds on"},
	{From: "internal/validation", Not: []string{"controllers/", "webhooks/", "internal/apiserver", "internal/engine"},
		Why: "validation rules are pure functions of the API types"},
	{From: "internal/admit", Not: []string{"controllers/", "webhooks/", "internal/apiserver"},
		Why: "admission joins defaults and rules; the reconcilers call it, not the other way round"},
	{From: "internal/engine", Not: []string{"controllers/", "webhooks/", "internal/apiserver", "api/"},
		Why: "the shared engine knows no kind"},
	{From: "internal/workload", Not: []string{"controllers/", "webhooks/", "internal/apiserver", "api/"},
		Why: "workload status is shared by every kind and knows none"},
	{From: "internal/conditions", Not: []string{"controllers/", "webhooks/", "internal/"},
		Why: "conditions are a leaf helper"},
	{From: "internal/proof", Not: []string{"controllers/", "webhooks/", "internal/", "api/", "cmd/"},
		Why: "the proof of ownership is a leaf: it knows no kind, and what it proves does not depend on who asks"},
	{From: "controllers/", Not: []string{"webhooks/", "internal/apiserver", "cmd/"},
		Why: "controllers run the rules from internal/admit; front doors are not theirs to call"},
	{From: "webhooks/", Not: []string{"controllers/", "internal/apiserver", "cmd/"},
		Why: "webhooks are thin adapters over internal/admit"},
	{From: "internal/apiserver", Not: []string{"controllers/", "webhooks/", "cmd/"},
		Why: "the API server is a front door: names it shares live in the API, the controllers' rules are wired in by the manager"},
	{From: "internal/kubectlplugin", Not: []string{"controllers/", "webhooks/", "internal/apiserver", "internal/engine", "internal/admit", "cmd/"},
		Why: "the kubectl plugin only reads, as its user: it shares the API's names and the workload readers, never the operator's machinery"},
}

// Violations lists, for each package and its dependencies (module
// packages, relative paths), every rule it breaks.
func Violations(deps map[string][]string) []string {
	var out []string
	for pkg, ds := range deps {
		for _, r := range Rules {
			if !under(pkg, r.From) {
				continue
			}
			for _, d := range ds {
				for _, not := range r.Not {
					if under(d, not) && !under(d, r.From) {
						out = append(out, pkg+" depends on "+d+": "+r.Why)
					}
				}
			}
		}
	}
	return out
}

func under(pkg, prefix string) bool {
	if prefix[len(prefix)-1] == '/' {
		return len(pkg) >= len(prefix) && pkg[:len(prefix)] == prefix
	}
	return pkg == prefix || len(pkg) > len(prefix) && pkg[:len(prefix)] == prefix && pkg[len(prefix)] == '/'
}
