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

// Package podsecurity checks pod specs against Pod Security's restricted
// level with the checks the API server's PodSecurity admission runs
// (k8s.io/pod-security-admission), for the builders' unit tests.
package podsecurity

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
)

var evaluator = func() policy.Evaluator {
	e, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		panic(err)
	}
	return e
}()

// Restricted returns what in spec the restricted level (latest version)
// forbids: one line per failed check, none when it passes.
func Restricted(meta metav1.ObjectMeta, spec corev1.PodSpec) []string {
	var out []string
	for _, r := range evaluator.EvaluatePod(api.LevelVersion{Level: api.LevelRestricted, Version: api.LatestVersion()}, &meta, &spec) {
		if !r.Allowed {
			out = append(out, fmt.Sprintf("%s: %s", r.ForbiddenReason, r.ForbiddenDetail))
		}
	}
	return out
}
