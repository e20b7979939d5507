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
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// StatusOption changes how PatchStatus writes.
type StatusOption func(*statusOptions)

type statusOptions struct{ optimisticLock bool }

// WithOptimisticLock makes the status write conditional on the object's
// resourceVersion being the one before was read at: a write computed from
// a stale read fails with a Conflict (and the reconcile is retried with
// fresh data) instead of overwriting newer status. For kinds whose status
// is a record that decisions are made from, such as a KubernetesCluster's
// operations.
func WithOptimisticLock() StatusOption {
	return func(o *statusOptions) { o.optimisticLock = true }
}

// PatchStatus writes obj's status when it differs from before's, and makes
// no API call at all when it does not. before is a deep copy of obj taken
// when it was read; only the status may differ between the two.
func PatchStatus(ctx context.Context, c client.Client, before, obj client.Object, opts ...StatusOption) (bool, error) {
	if equality.Semantic.DeepEqual(before, obj) {
		return false, nil
	}
	var o statusOptions
	for _, opt := range opts {
		opt(&o)
	}
	patch, err := statusPatch(before, obj, o.optimisticLock)
	if err != nil {
		return false, err
	}
	if err := c.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch)); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil // deleted meanwhile: nothing left to report on
		}
		return false, fmt.Errorf("patching status: %w", err)
	}
	return true, nil
}

// statusPatch is a JSON merge patch that writes obj's whole status: every
// field of it, even one whose value did not change (a counter that stays 0
// is still written once, so `kubectl get` columns show 0 rather than
// nothing), and null for each field that before had and obj has dropped.
func statusPatch(before, obj client.Object, lock bool) ([]byte, error) {
	diff, err := client.MergeFrom(before).Data(obj)
	if err != nil {
		return nil, fmt.Errorf("computing status patch: %w", err)
	}
	var patch map[string]any
	if err := json.Unmarshal(diff, &patch); err != nil {
		return nil, fmt.Errorf("reading status patch: %w", err)
	}
	full, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("converting %T: %w", obj, err)
	}
	status, _ := full["status"].(map[string]any)
	changed, _ := patch["status"].(map[string]any)
	if changed == nil {
		changed = map[string]any{}
	}
	for k, v := range status {
		if _, ok := changed[k]; !ok {
			changed[k] = v
		}
	}
	out := map[string]any{"status": changed}
	if lock {
		out["metadata"] = map[string]any{"resourceVersion": before.GetResourceVersion()}
	}
	return json.Marshal(out)
}
