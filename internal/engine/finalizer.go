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
	"errors"
	"fmt"
	"strconv"
	"time"

	"gomodules.xyz/jsonpatch/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// SyncFinalizer makes obj carry the finalizer when want is true and not
// otherwise, with one metadata patch, and none when it already does. A
// finalizer is added only to an object not being deleted; removing one
// from an object being deleted lets it go, and an object already gone is
// no error then. Of the API server's answer, obj takes the finalizers and
// the resourceVersion only: the rest of it (a defaulted spec, a status
// being computed) stays as the caller has it.
//
// Neither patch can drop a finalizer another writer added since obj was
// read (a cache behind, the garbage collector's foregroundDeletion): the
// removal is a JSON patch that tests, at each index where obj has the
// finalizer, that the object still has it there, and removes it there
// only; the addition is a merge patch (the whole list) held to obj's
// resourceVersion. When the object changed so that the patch no longer
// fits it, the API server refuses it and that is a wait
// (ErrChangedSinceRead): the next pass reads the object again.
func SyncFinalizer(ctx context.Context, c client.Client, obj client.Object, finalizer string, want bool) error {
	if want == controllerutil.ContainsFinalizer(obj, finalizer) || want && obj.GetDeletionTimestamp() != nil {
		return nil
	}
	written := obj.DeepCopyObject().(client.Object)
	var patch client.Patch
	verb := "adding"
	if want {
		patch = client.MergeFromWithOptions(obj.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
		controllerutil.AddFinalizer(written, finalizer)
	} else {
		verb = "removing"
		var err error
		if patch, err = removal(obj.GetUID(), obj.GetFinalizers(), finalizer); err != nil {
			return fmt.Errorf("%s the finalizer %s: %w", verb, finalizer, err)
		}
		controllerutil.RemoveFinalizer(written, finalizer)
	}
	if err := c.Patch(ctx, written, patch); err != nil {
		switch {
		case !want && apierrors.IsNotFound(err):
			return nil // gone already
		case apierrors.IsConflict(err) || !want && patchDidNotApply(err):
			// Held to what was read (the resourceVersion, or the test of
			// an index), and the object has changed since.
			logf.FromContext(ctx).V(1).Info("Finalizer not synced: the object changed since it was read", "finalizer", finalizer, "error", err.Error())
			return fmt.Errorf("%s the finalizer %s: the object changed since it was read (%v), read again on the next pass: %w", verb, finalizer, err, ErrChangedSinceRead)
		}
		return fmt.Errorf("%s the finalizer %s: %w", verb, finalizer, err)
	}
	obj.SetFinalizers(written.GetFinalizers())
	obj.SetResourceVersion(written.GetResourceVersion())
	return nil
}

// patchDidNotApply reports whether err is the API server's refusal of a
// JSON patch that does not apply to the object (a failed test, an index
// past the end): Invalid, with no kind and no causes, unlike a refusal by
// validation or admission, which names the object and its fields.
func patchDidNotApply(err error) bool {
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) {
		return false
	}
	d := status.Status().Details
	return d == nil || d.Kind == "" && len(d.Causes) == 0
}

// removal is the JSON patch that removes finalizer from the object of
// uid whose finalizers were read as list: a test of the UID (another
// object made under the name since keeps its own), then at each index
// that holds it, from the last (so the earlier indexes stay where they
// were), a test that the index still holds it, then its removal. What is
// appended since stays; a list changed before one of those indexes fails
// its test, and the API server refuses the whole patch.
func removal(uid types.UID, list []string, finalizer string) (client.Patch, error) {
	var ops []jsonpatch.Operation
	if uid != "" {
		ops = append(ops, jsonpatch.NewOperation("test", "/metadata/uid", string(uid)))
	}
	for i := len(list) - 1; i >= 0; i-- {
		if list[i] != finalizer {
			continue
		}
		path := "/metadata/finalizers/" + strconv.Itoa(i)
		ops = append(ops, jsonpatch.NewOperation("test", path, finalizer), jsonpatch.NewOperation("remove", path, nil))
	}
	raw, err := json.Marshal(ops)
	if err != nil {
		return nil, err
	}
	return client.RawPatch(types.JSONPatchType, raw), nil
}

// DefaultCleanupTimeout is how long a deleting object waits for a cleanup
// that cannot run before it is let go (ReleaseAfter).
const DefaultCleanupTimeout = time.Minute

// ReleaseAfter lets a deleting object go whose cleanup cannot run — the
// Secret it needs is gone, its namespace is being deleted — so that
// deleting it, or its namespace, never hangs. Until timeout has passed
// since the deletion it only returns how long is left (to requeue after);
// then it records a Warning event, reason CleanupSkipped, saying what was
// not cleaned up and why, and removes the finalizer.
func (e *Engine) ReleaseAfter(ctx context.Context, obj client.Object, finalizer string, timeout time.Duration,
	notDone string, why error) (time.Duration, error) {
	if obj.GetDeletionTimestamp() == nil || !controllerutil.ContainsFinalizer(obj, finalizer) {
		return 0, nil
	}
	if timeout <= 0 {
		timeout = DefaultCleanupTimeout
	}
	if left := time.Until(obj.GetDeletionTimestamp().Add(timeout)); left > 0 {
		return left, nil
	}
	return 0, e.release(ctx, obj, finalizer, notDone, fmt.Sprintf("%s; let go after waiting %s", why.Error(), timeout))
}

// ReleaseUnapproved lets a deleting object go at once, without its
// cleanup, when its spec breaks a rule or no admission approved it (why,
// the error of admit.Prepare): a cleanup would use what the spec names
// (a database server and its admin Secret, an installer's hosts and SSH
// key), which nobody's admission approved. A Warning event, reason
// CleanupSkipped, says what was not cleaned up and why.
func (e *Engine) ReleaseUnapproved(ctx context.Context, obj client.Object, finalizer, notDone string, why error) error {
	if obj.GetDeletionTimestamp() == nil || !controllerutil.ContainsFinalizer(obj, finalizer) {
		return nil
	}
	return e.release(ctx, obj, finalizer, notDone, why.Error())
}

// release lets obj go, then says what was not cleaned up: once, when the
// finalizer is gone (a removal refused as a wait is tried again, not said
// again).
func (e *Engine) release(ctx context.Context, obj client.Object, finalizer, notDone, why string) error {
	if err := SyncFinalizer(ctx, e.Client, obj, finalizer, false); err != nil {
		return err
	}
	logf.FromContext(ctx).Info("Let go without cleaning up", "notDone", notDone, "why", why)
	e.warn(obj, nil, ReasonCleanupSkipped, "Delete", "%s: %s", notDone, why)
	return nil
}

// ReasonCleanupSkipped is the Warning event of an object let go without
// its cleanup (ReleaseAfter).
const ReasonCleanupSkipped = "CleanupSkipped"

// NamespaceTerminating reports whether err (or one of an aggregate's) is
// the API server refusing to create an object in a namespace being deleted.
func NamespaceTerminating(err error) bool {
	return anyError(err, func(e error) bool { return apierrors.HasStatusCause(e, corev1.NamespaceTerminatingCause) })
}

// PatchAsRead writes ops (JSON patch operations) onto obj as it was read
// and onto no other: the patch first tests obj's UID, so an object
// deleted and made anew under the name since it was read is left alone,
// and its generation (when it has one), so a spec changed since — a
// Workspace started again while the read came from a cache behind — is
// not acted on from the old one. It reports whether the patch was
// written; an object gone, made anew or changed since is not an error
// (the next reconcile reads it as it is), and obj is left as it was. A
// refusal by validation or admission is the error it is.
func PatchAsRead(ctx context.Context, c client.Client, obj client.Object, ops ...jsonpatch.Operation) (bool, error) {
	if g := obj.GetGeneration(); g != 0 {
		ops = append([]jsonpatch.Operation{jsonpatch.NewOperation("test", "/metadata/generation", g)}, ops...)
	}
	if uid := obj.GetUID(); uid != "" {
		ops = append([]jsonpatch.Operation{jsonpatch.NewOperation("test", "/metadata/uid", string(uid))}, ops...)
	}
	raw, err := json.Marshal(ops)
	if err != nil {
		return false, err
	}
	written := obj.DeepCopyObject().(client.Object)
	switch err := c.Patch(ctx, written, client.RawPatch(types.JSONPatchType, raw)); {
	case apierrors.IsNotFound(err) || patchDidNotApply(err):
		logf.FromContext(ctx).V(1).Info("Not patched: the object is gone, made anew or changed since it was read", "error", fmt.Sprint(err))
		return false, nil
	case err != nil:
		return false, err
	}
	return true, nil
}
