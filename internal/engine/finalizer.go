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
	"fmt"

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
func SyncFinalizer(ctx context.Context, c client.Client, obj client.Object, finalizer string, want bool) error {
	if want == controllerutil.ContainsFinalizer(obj, finalizer) || want && obj.GetDeletionTimestamp() != nil {
		return nil
	}
	written := obj.DeepCopyObject().(client.Object)
	patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
	if want {
		controllerutil.AddFinalizer(written, finalizer)
	} else {
		controllerutil.RemoveFinalizer(written, finalizer)
	}
	defer func() {
		obj.SetFinalizers(written.GetFinalizers())
		obj.SetResourceVersion(written.GetResourceVersion())
	}()
	if err := c.Patch(ctx, written, patch); err != nil {
		if !want && client.IgnoreNotFound(err) == nil {
			return nil
		}
		verb := "adding"
		if !want {
			verb = "removing"
		}
		return fmt.Errorf("%s the finalizer %s: %w", verb, finalizer, err)
	}
	return nil
}
