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
// level, for the builders' unit tests, with the check admission holds a
// tenant's pod template to (validation.PodSecurityLevel: the API server's
// own PodSecurity checks, k8s.io/pod-security-admission).
package podsecurity

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/pod-security-admission/api"

	"github.com/kubeforge/kubeforge/internal/validation"
)

// Restricted returns what in spec the restricted level (latest version)
// forbids: one entry per failed check, none when it passes.
func Restricted(meta metav1.ObjectMeta, spec corev1.PodSpec) []string {
	level, forbidden := validation.PodSecurityLevel(&meta, &spec)
	if level == api.LevelRestricted {
		return nil
	}
	return forbidden
}
