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

// Package v1alpha1 contains the apps.kubeforge.io/v1alpha1 API: PodSet and
// Platform.
// +kubebuilder:object:generate=true
// +groupName=apps.kubeforge.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// GroupVersion is the group and version of this API.
var GroupVersion = schema.GroupVersion{Group: "apps.kubeforge.io", Version: "v1alpha1"}

// SchemeBuilder adds the types of this API to a scheme, with AddToScheme.
var SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

// AddToScheme adds the types of this API to a scheme.
var AddToScheme = SchemeBuilder.AddToScheme
