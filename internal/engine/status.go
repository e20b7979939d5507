/*
Copyright 2026 The kubeforge Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package engine

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// PatchStatus writes obj's status when it differs from before's, and makes
// no API call at all when it does not. before is a deep copy of obj taken
// when it was read; only the status may differ between the two.
func PatchStatus(ctx context.Context, c client.Client, before, obj client.Object) (bool, error) {
	if equality.Semantic.DeepEqual(before, obj) {
		return false, nil
	}
	if err := c.Status().Patch(ctx, obj, client.MergeFrom(before)); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil // deleted meanwhile: nothing left to report on
		}
		return false, fmt.Errorf("patching status: %w", err)
	}
	return true, nil
}
