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
	"os"
	"regexp"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

func readRole(t *testing.T, path string) []rbacv1.PolicyRule {
	t.Helper()
	b, err := os.ReadFile("../../" + path)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Rules []rbacv1.PolicyRule `json:"rules"`
	}
	if err := yaml.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Rules) == 0 {
		t.Fatalf("%s has no rules", path)
	}
	return r.Rules
}

// TestClusterRoleIsListedAndLeasesAreNamespaced keeps the operator's
// cluster-wide rights what docs/install.md says they are, and leader
// election in its own namespace.
func TestClusterRoleIsListedAndLeasesAreNamespaced(t *testing.T) {
	doc, err := os.ReadFile("../../docs/install.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, role := range []string{"config/rbac/role.yaml", "config/rbac/cluster_role.yaml"} {
		for _, rule := range readRole(t, role) {
			for _, res := range rule.Resources {
				if res == "leases" {
					t.Errorf("%s grants leases: leader election belongs in a Role in the operator's namespace", role)
				}
				named := strings.TrimSuffix(strings.TrimSuffix(res, "/status"), "/finalizers")
				if !regexp.MustCompile(`\b` + regexp.QuoteMeta(named) + `\b`).Match(doc) {
					t.Errorf("%s grants %s %v, which docs/install.md does not list", role, res, rule.Verbs)
				}
			}
		}
	}
	leases := false
	for _, rule := range readRole(t, "config/rbac/leader_election_role.yaml") {
		leases = leases || strings.Join(rule.Resources, ",") == "leases"
	}
	if !leases {
		t.Error("the leader election Role does not grant leases")
	}
}
