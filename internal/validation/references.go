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

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubeforge/kubeforge/internal/refwalk"
)

// The reference walker is internal/refwalk, which knows no kind (the
// shared engine uses it too); admission reads it through these names.

// Reference is one object a spec names (refwalk.Reference).
type Reference = refwalk.Reference

// Site is one place in a type where a spec may name an object.
type Site = refwalk.Site

// Step is one step of a Site's path.
type Step = refwalk.Step

// The kinds of reference the walker reports.
const (
	RefSecret                = refwalk.RefSecret
	RefConfigMap             = refwalk.RefConfigMap
	RefClaim                 = refwalk.RefClaim
	RefServiceAccount        = refwalk.RefServiceAccount
	RefResourceClaim         = refwalk.RefResourceClaim
	RefResourceClaimTemplate = refwalk.RefResourceClaimTemplate
)

// References are the objects v (a spec) names, each with its path under root.
func References(v any, root *field.Path) []Reference { return refwalk.References(v, root) }

// Sites are the places in type t where a spec may name an object.
func Sites(t reflect.Type) []Site { return refwalk.Sites(t) }

// typePlans and jsonName0 are the walker's, for the exposure walk.
type typePlans[P any] = refwalk.TypePlans[P]

func jsonName0(f reflect.StructField) (string, bool) { return refwalk.JSONName(f) }
