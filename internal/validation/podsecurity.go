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

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
)

// A pod the spec writes whole — a pod template, such as a PodSet's — runs
// as the spec says: in a namespace whose Pod Security enforces nothing,
// a privileged container or the node's own network, with no right to
// create pods at all. Found by rule over the API types, like a claim: a
// struct with an ObjectMeta beside a corev1.PodSpec Spec (a pod or a pod
// template), or a corev1.PodSpec on its own. Each is held to the checks
// the API server's PodSecurity admission runs (k8s.io/pod-security-admission,
// its latest version): one that passes restricted exposes nothing; one
// below it takes the right to "use" the level it passes — baseline or
// privileged (PodSecurityLevelResource) — as a Platform component's
// podSecurity Baseline does.

var (
	podSpecType = reflect.TypeFor[corev1.PodSpec]()

	podSecurityEvaluator = func() policy.Evaluator {
		e, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
		if err != nil {
			panic(err) // the default checks are the library's own
		}
		return e
	}()
)

// podTemplate reports whether t is a pod or a pod template: an ObjectMeta
// beside a PodSpec Spec.
func podTemplate(t reflect.Type) bool { return objectOf(t, podSpecType) }

// PodSecurityLevel is the strictest of Pod Security's levels (latest
// version) that a pod of meta and spec passes, and, when that is not
// restricted, what restricted forbids in it.
func PodSecurityLevel(meta *metav1.ObjectMeta, spec *corev1.PodSpec) (api.Level, []string) {
	if spec.HostUsers != nil && !*spec.HostUsers {
		// Pod Security waives the user checks (runAsNonRoot, runAsUser)
		// for a pod in a user namespace of its own; but an API server
		// without user namespaces drops hostUsers from the pods made from
		// the template, which then run as root on the node's. The template
		// is held to the checks as if it were on the node's.
		host := *spec
		host.HostUsers = nil
		spec = &host
	}
	var forbidden []string
	for _, level := range []api.Level{api.LevelRestricted, api.LevelBaseline} {
		ok := true
		for _, r := range podSecurityEvaluator.EvaluatePod(api.LevelVersion{Level: level, Version: api.LatestVersion()}, meta, spec) {
			if !r.Allowed {
				ok = false
				if level == api.LevelRestricted {
					forbidden = append(forbidden, r.ForbiddenReason+" ("+r.ForbiddenDetail+")")
				}
			}
		}
		if ok {
			return level, forbidden
		}
	}
	return api.LevelPrivileged, forbidden
}

// podBelowRestricted is the exposure of a pod (meta, spec, at p) that
// does not pass Pod Security's restricted level, nil when it does.
func podBelowRestricted(meta *metav1.ObjectMeta, spec *corev1.PodSpec, p *field.Path) []Exposure {
	level, forbidden := PodSecurityLevel(meta, spec)
	if level == api.LevelRestricted {
		return nil
	}
	return []Exposure{{Group: PodSecurityLevelGroup, Resource: PodSecurityLevelResource, Verb: "use", Name: string(level), OrNames: levelsAbove(level), Path: p,
		Why: "which a pod below Pod Security's restricted level takes, so may not have kubeforge run it; restricted forbids " +
			strings.Join(forbidden, "; ")}}
}

// levelsAbove are the Pod Security levels below restricted that allow
// more than level: the right to use one of them grants level too.
func levelsAbove(level api.Level) []string {
	if level == api.LevelBaseline {
		return []string{string(api.LevelPrivileged)}
	}
	return nil
}
