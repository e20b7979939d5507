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
	"sync"
	"time"

	"gomodules.xyz/jsonpatch/v2"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ProgressEvery is how often a Pacer writes an object's status when
// nothing but its progress changed: Kubernetes' Job controller batches
// its Pods' updates over the same second.
const ProgressEvery = time.Second

// Pacer spaces out the status writes that only report progress. A kind
// says which changes of its status are progress (counts, lists of names,
// a condition's message); such a change is written at most once per Every
// for an object, and any other change (a condition's status or reason,
// an observed generation, a phase) at once, with the progress so far. A
// PodSet of 50 Pods wrote its status ≈ 90 times while they started, each
// write a watch event and another reconcile; it now writes it about once
// a second and on every transition. The zero Pacer is ready to use.
type Pacer struct {
	now func() time.Time // tests set it; time.Now otherwise

	mu   sync.Mutex
	last map[types.UID]time.Time
}

// Patch is PatchStatus, except that a change for which progress(before,
// obj) holds is held back while obj's status was written less than
// ProgressEvery ago; it returns how long until the held-back write may be made, for the
// caller to come back then (ctrl.Result's RequeueAfter), or 0.
func (p *Pacer) Patch(ctx context.Context, c client.Client, before, obj client.Object, progress func(before, obj client.Object) bool) (time.Duration, error) {
	if equality.Semantic.DeepEqual(before, obj) {
		return 0, nil
	}
	now := time.Now
	if p.now != nil {
		now = p.now
	}
	uid := obj.GetUID()
	p.mu.Lock()
	last, seen := p.last[uid]
	p.mu.Unlock()
	if since := now().Sub(last); seen && since < ProgressEvery && progress(before, obj) {
		return ProgressEvery - since, nil
	}
	wrote, err := patchStatus(ctx, c, before, obj, false)
	if err != nil {
		return 0, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !wrote {
		delete(p.last, uid) // gone: nothing more to pace
		return 0, nil
	}
	if p.last == nil {
		p.last = map[types.UID]time.Time{}
	}
	t := now()
	if len(p.last) >= 4096 {
		// What was written longer than ProgressEvery ago paces nothing.
		for k, at := range p.last {
			if t.Sub(at) >= ProgressEvery {
				delete(p.last, k)
			}
		}
	}
	p.last[uid] = t
	return 0, nil
}

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
	return patchStatus(ctx, c, before, obj, o.optimisticLock)
}

// patchStatus is PatchStatus for a status known to differ from before's.
func patchStatus(ctx context.Context, c client.Client, before, obj client.Object, lock bool) (bool, error) {
	patch, err := statusPatch(before, obj, lock)
	if err != nil {
		return false, err
	}
	if err := c.Status().Patch(ctx, obj, client.RawPatch(types.JSONPatchType, patch)); err != nil {
		if apierrors.IsNotFound(err) || patchDidNotApply(err) {
			// Deleted meanwhile, or deleted and another made under its
			// name (the UID's test failed), which has its own reconcile:
			// nothing left to report on.
			return false, nil
		}
		return false, fmt.Errorf("patching status: %w", err)
	}
	return true, nil
}

// statusPatch is a JSON patch that writes obj's whole status: every field
// of it, even one whose value did not change (a counter that stays 0 is
// still written once, so `kubectl get` columns show 0 rather than
// nothing), and none that obj has dropped. It first tests the UID that
// before was read with, so that it is only ever the status of the object
// that was read: another made under its name since refuses it. (A merge
// patch's metadata.uid would not do: the status subresource keeps the
// stored object's metadata and drops the patch's.) With lock, it also
// holds the write to before's resourceVersion (a Conflict otherwise).
func statusPatch(before, obj client.Object, lock bool) ([]byte, error) {
	full, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("converting %T: %w", obj, err)
	}
	status, _ := full["status"].(map[string]any)
	if status == nil {
		status = map[string]any{}
	}
	var ops []jsonpatch.Operation
	if uid := before.GetUID(); uid != "" {
		ops = append(ops, jsonpatch.NewOperation("test", "/metadata/uid", string(uid)))
	}
	if lock {
		ops = append(ops, jsonpatch.NewOperation("replace", "/metadata/resourceVersion", before.GetResourceVersion()))
	}
	ops = append(ops, jsonpatch.NewOperation("add", "/status", status))
	return json.Marshal(ops)
}
