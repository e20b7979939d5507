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

package admit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubeforge/kubeforge/internal/proof"
)

// StampAnnotation holds the admission stamp: the operator's signature
// (its ownership keyring) that an object's current spec came through
// kubeforge's admission — written by the mutating webhook on a create, and
// on an update the validating webhook checks in full (a change beyond the
// harmless fields, or of a command annotation); carried over an update it
// does not check only from a stamp that verified. A client cannot make
// one: whatever it writes is replaced by the webhook, and a copy verifies
// only for the same kind, namespace, name, spec, commands and owner.
//
// It is the record the reconcilers will require before they act on the
// references of an object (docs/security.md); today it is written and
// verified, not yet required.
const StampAnnotation = "kubeforge.io/admitted"

// stampPurpose keeps a stamp apart from every other use of the keyring's
// marks (an owned object's pending mark binds an owner, never this).
const stampPurpose = "admitted/v1:"

// stampBinding is what a stamp of obj is for: a digest of its spec with
// the kind's defaults and without its harmless fields, its command
// annotations and its owner and creator records.
func (k Kind[T]) stampBinding(obj T) (proof.Binding, error) {
	c := obj.DeepCopyObject().(T)
	k.Default(c)
	if k.Harmless != nil {
		k.Harmless(c)
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(c)
	if err != nil {
		return "", err
	}
	commands := map[string]string{}
	for _, a := range k.Commands {
		if v, ok := obj.GetAnnotations()[a]; ok {
			commands[a] = v
		}
	}
	// encoding/json writes map keys sorted: the same object, the same bytes.
	// Both records of whom the object is for: the engine falls back to
	// the creator where there is no owner.
	b, err := json.Marshal(struct {
		Spec      any               `json:"spec"`
		Commands  map[string]string `json:"commands"`
		Owner     string            `json:"owner"`
		CreatedBy string            `json:"createdBy"`
	}{u["spec"], commands, obj.GetAnnotations()[proof.OwnerAnnotation], obj.GetAnnotations()[proof.CreatedByAnnotation]})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return proof.Binding(stampPurpose + hex.EncodeToString(sum[:])), nil
}

func (k Kind[T]) stampObject(obj client.Object) proof.Object {
	return proof.Object{GroupKind: k.GVK.GroupKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// Stamp is the admission stamp of obj as it is.
func (k Kind[T]) Stamp(keys *proof.Keyring, obj T) (string, error) {
	b, err := k.stampBinding(obj)
	if err != nil {
		return "", err
	}
	return keys.PendingMark(k.stampObject(obj), b), nil
}

// Stamped reports whether obj carries a stamp that verifies for it as it
// is now.
func (k Kind[T]) Stamped(keys *proof.Keyring, obj T) bool {
	v := obj.GetAnnotations()[StampAnnotation]
	if v == "" || keys == nil {
		return false
	}
	want, err := k.stampBinding(obj)
	if err != nil {
		return false
	}
	b, verdict := keys.Check(k.stampObject(obj), v)
	return verdict == proof.Pending && b == want
}

// stamp writes (or, when the request is not one admission checks in full
// and the stored object was not stamped, removes) obj's stamp.
func (k Kind[T]) stamp(keys *proof.Keyring, obj T, old *T) error {
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	checked := old == nil || !k.onlyHarmless(*old, obj) || k.commandChanged(*old, obj)
	if !checked && !k.Stamped(keys, *old) {
		delete(annotations, StampAnnotation)
		obj.SetAnnotations(annotations)
		return nil
	}
	v, err := k.Stamp(keys, obj)
	if err != nil {
		return err
	}
	annotations[StampAnnotation] = v
	obj.SetAnnotations(annotations)
	return nil
}
