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

package engine

import (
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CacheSettings turn the cache's two memory savings off. The zero value
// is what the operator runs with; the flags that set these exist to
// measure what the savings are worth (tests/perf).
type CacheSettings struct {
	// KeepManagedFields caches objects with their metadata.managedFields.
	KeepManagedFields bool
	// AllOwnedTypeObjects caches every object of the owned types, not only
	// those labelled app.kubernetes.io/managed-by=kubeforge.
	AllOwnedTypeObjects bool
}

// CacheOptions are the manager's cache options: managedFields stripped from
// every cached object, and the owned types cached only when they carry
// app.kubernetes.io/managed-by=kubeforge, so that memory does not grow with
// the cluster's unrelated objects. The engine's reads of owned objects go
// through this cache.
func CacheOptions(s CacheSettings, ownedTypes ...client.Object) cache.Options {
	var opts cache.Options
	if !s.KeepManagedFields {
		opts.DefaultTransform = cache.TransformStripManagedFields()
	}
	if !s.AllOwnedTypeObjects {
		managed := labels.SelectorFromSet(labels.Set{LabelManagedBy: ManagedByValue})
		opts.ByObject = map[client.Object]cache.ByObject{}
		for _, t := range ownedTypes {
			opts.ByObject[t] = cache.ByObject{Label: managed}
		}
	}
	return opts
}
