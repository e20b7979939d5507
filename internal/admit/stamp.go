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
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubeforge/kubeforge/internal/conditions"
	"github.com/kubeforge/kubeforge/internal/proof"
	"github.com/kubeforge/kubeforge/internal/validation"
)

// StampAnnotation holds the admission stamp: the operator's signature (its
// ownership keyring) that the access checks passed for what the object
// names as it is now. The mutating webhook writes it only after running
// those checks itself for the requester (a create, a change of the spec
// beyond the harmless fields, a command annotation), and removes it when
// they fail; on any other update it keeps a stamp that still verifies.
//
// A stamp covers the kind, namespace and name, a digest of the spec
// (defaulted, without its harmless fields), the command annotations and
// the owner and creator records. Made at a create, before the API server
// assigns a UID, it is bound to its time and verifies only for an object
// created within CreateWindow of it; made at an update, it is bound to the
// object's UID. So a client cannot make one, a copy verifies for nothing
// else, and an old stamp does not approve the same name created anew.
//
// The reconcilers require it (Prepare) of every object that makes the
// operator use anything the access checks guard: an object stored while
// kubeforge's webhooks were not called gets the condition NotAdmitted and
// nothing is made for it.
const StampAnnotation = "kubeforge.io/admitted"

// StampedOverAnnotation is, beside a stamp made for an update (by the
// mutating webhook, or by the operator re-signing what it stored), the
// resourceVersion of the stored object that update changed; the stamp's
// record holds it too, and a stamp verifies only when the two agree (none
// on either side for a stamp made at a create). It lets CEL, which cannot
// check a stamp, tell one made for this very update (over the stored
// object it updates) from an older stamp of the same object a client
// writes back: the references policies leave out only the first, and
// check any other change of the stamp (referencepolicy.go). A client that
// changes it to match loses the stamp, which then verifies for nothing.
const StampedOverAnnotation = "kubeforge.io/admitted-over"

// ReadmitAnnotation is a command every kind takes: setting or changing it
// has admission check the object in full for the requester, as a change
// of the spec would, and stamp it when the checks pass. It is how an
// object that reports NotAdmitted (stored without the webhooks) is
// approved again without changing its spec.
const ReadmitAnnotation = "kubeforge.io/readmit"

// CreateWindow is how far from a create's stamp the API server's
// creationTimestamp may be (the admission chain's time and the clocks of
// the webhook and the API server between them).
const CreateWindow = time.Minute

// StampVersion is the version of what a stamp's digest covers. A release
// that changes it (or the defaults the digest is taken after) must
// re-stamp the stored objects whose stamps verified under the previous
// digest, and only those, in StampStored.
const StampVersion = 1

// stampPurpose keeps a stamp apart from every other use of the keyring's
// marks (an owned object's pending mark binds an owner, never this).
const stampPurpose = "admitted:"

// stampRecord is what a stamp binds beside the object's identity.
type stampRecord struct {
	// V is StampVersion when it was made.
	V int `json:"v"`
	// Digest is stampDigest of the object.
	Digest string `json:"d"`
	// By is the user the checks were asked for.
	By string `json:"by"`
	// At is when it was made (Unix seconds).
	At int64 `json:"t"`
	// Over is the resourceVersion of the stored object the update it was
	// made at changed (StampedOverAnnotation); empty for one made
	// elsewhere.
	Over string `json:"over,omitempty"`
}

func (r stampRecord) binding() proof.Binding {
	b, _ := json.Marshal(r)
	return proof.Binding(stampPurpose + string(b))
}

func parseStamp(b proof.Binding) (stampRecord, bool) {
	var r stampRecord
	raw, ok := strings.CutPrefix(string(b), stampPurpose)
	if !ok || json.Unmarshal([]byte(raw), &r) != nil {
		return stampRecord{}, false
	}
	return r, true
}

// stampDigest is what a stamp of obj covers: its spec with the kind's
// defaults and without its harmless fields, its command annotations and
// its owner and creator records.
func (k Kind[T]) stampDigest(obj T) (string, error) {
	c := obj.DeepCopyObject().(T)
	k.Default(c)
	if k.Harmless != nil {
		k.Harmless(c)
	}
	// The spec alone, converted as a whole object's would be (a spec is
	// never left out): the same bytes as ever, so that stored stamps
	// verify, without converting the managed fields too.
	spec, err := unstructuredSpec(c)
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
	}{spec, commands, obj.GetAnnotations()[proof.OwnerAnnotation], obj.GetAnnotations()[proof.CreatedByAnnotation]})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// identity is the object a stamp's MAC covers: kind, namespace, name and
// the UID of who (the stored object on an update, obj itself elsewhere).
func (k Kind[T]) identity(obj client.Object, who metav1.Object) proof.Object {
	return proof.Object{GroupKind: k.GVK.GroupKind(), Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: string(who.GetUID())}
}

// Sign writes obj's stamp for the user whose access was checked, without
// checking anything: for the webhook once its checks passed, for the
// one-time stamping of objects stored before stamps (StampStored), and for
// test kits standing in for the webhooks. An object without a UID (a
// create in admission) gets a stamp bound to now; one with a UID, bound to it.
func (k Kind[T]) Sign(keys *proof.Keyring, obj T, by string, now time.Time) error {
	// Over the version read: the write that stores it must be conditional
	// on that version (StampStored's is), and the references policies
	// then leave it out.
	return k.sign(keys, obj, obj, obj.GetResourceVersion(), by, now)
}

// sign stamps obj for who's UID (the stored object on an update); over is
// the resourceVersion of the stored object an update in admission changes
// ("" elsewhere).
func (k Kind[T]) sign(keys *proof.Keyring, obj T, who metav1.Object, over, by string, now time.Time) error {
	d, err := k.stampDigest(obj)
	if err != nil {
		return err
	}
	rec := stampRecord{V: StampVersion, Digest: d, By: by, At: now.Unix(), Over: over}
	id := k.identity(obj, who)
	v := keys.Seal(id, rec.binding())
	if id.UID == "" {
		v = keys.PendingMark(id, rec.binding())
	}
	setAnnotation(obj, StampAnnotation, v)
	setOver(obj, over)
	return nil
}

// setOver writes StampedOverAnnotation as a stamp's record has it.
func setOver(obj client.Object, over string) {
	if over == "" {
		removeAnnotation(obj, StampedOverAnnotation)
		return
	}
	setAnnotation(obj, StampedOverAnnotation, over)
}

// dropStamp takes obj's stamp away.
func dropStamp(obj client.Object) {
	removeAnnotation(obj, StampAnnotation)
	removeAnnotation(obj, StampedOverAnnotation)
}

// Stamped reports whether obj carries a stamp that verifies for it as it
// is now.
func (k Kind[T]) Stamped(keys *proof.Keyring, obj T) bool {
	_, ok := k.verify(keys, obj, obj.GetAnnotations()[StampAnnotation], obj)
	return ok
}

// verify checks value as the stamp of obj, whose UID and creationTimestamp
// are who's (the stored object on an update), and returns its record.
func (k Kind[T]) verify(keys *proof.Keyring, obj T, value string, who metav1.Object) (stampRecord, bool) {
	if value == "" || keys == nil {
		return stampRecord{}, false
	}
	b, verdict := keys.Check(k.identity(obj, who), value)
	if verdict == proof.None {
		return stampRecord{}, false
	}
	rec, ok := parseStamp(b)
	if !ok || rec.V != StampVersion {
		return stampRecord{}, false
	}
	if verdict == proof.Pending {
		// Made at a create: for the object the API server created then.
		created, at := who.GetCreationTimestamp().Time, time.Unix(rec.At, 0)
		if created.IsZero() || created.Before(at.Add(-CreateWindow)) || created.After(at.Add(CreateWindow)) {
			return stampRecord{}, false
		}
	}
	if rec.Over != obj.GetAnnotations()[StampedOverAnnotation] {
		return stampRecord{}, false
	}
	d, err := k.stampDigest(obj)
	return rec, err == nil && d == rec.Digest
}

// Resign makes obj's stamp again with the current key, for what it
// approved (the same record, now bound to obj's UID), when it verifies
// only with a previous key of the keyring; it reports whether it did.
func (k Kind[T]) Resign(keys *proof.Keyring, obj T) bool {
	v := obj.GetAnnotations()[StampAnnotation]
	rec, ok := k.verify(keys, obj, v, obj)
	if !ok || keys.SignedWithCurrentKey(v) || obj.GetUID() == "" {
		return false
	}
	// Over the version read, as Sign.
	rec.Over = obj.GetResourceVersion()
	setAnnotation(obj, StampAnnotation, keys.Seal(k.identity(obj, obj), rec.binding()))
	setOver(obj, rec.Over)
	return true
}

// WithoutCommand removes the consumed command annotation key from obj,
// once the operator has acted on it, and makes obj's stamp again for obj
// without it, for the same approval (carryStamp, as the webhook does for
// that patch). A stamp that did not verify is removed.
func (k Kind[T]) WithoutCommand(keys *proof.Keyring, obj T, key string) error {
	was := obj.DeepCopyObject().(T)
	removeAnnotation(obj, key)
	return k.carryStamp(keys, obj, was)
}

// carryStamp makes the stamp of old, when it verifies, again for obj,
// which differs from it only by harmless fields and metadata: the same
// approval (who, when), bound to old's UID and made over old's version
// (the write of obj changes old); else obj gets none.
func (k Kind[T]) carryStamp(keys *proof.Keyring, obj, old T) error {
	rec, ok := k.verify(keys, old, old.GetAnnotations()[StampAnnotation], old)
	if !ok || old.GetUID() == "" {
		dropStamp(obj)
		return nil
	}
	d, err := k.stampDigest(obj)
	if err != nil {
		return err
	}
	rec.Digest, rec.Over = d, old.GetResourceVersion()
	setAnnotation(obj, StampAnnotation, keys.Seal(k.identity(obj, old), rec.binding()))
	setOver(obj, rec.Over)
	return nil
}

// onlyConsumed reports whether every command that changed from old to obj
// is one of the kind's Consumed commands, taken away.
func (k Kind[T]) onlyConsumed(old, obj T) bool {
	for _, a := range k.Commands {
		v, ok := obj.GetAnnotations()[a]
		was, had := old.GetAnnotations()[a]
		if ok == had && v == was {
			continue
		}
		if ok || !slices.Contains(k.Consumed, a) {
			return false
		}
	}
	return true
}

// freshlyApproved reports whether obj's stamp was made for user within
// the last half minute: the mutating webhook checked this very request,
// and the validating webhook need not ask the same questions again.
func (k Kind[T]) freshlyApproved(keys *proof.Keyring, obj T, user string, now time.Time) bool {
	rec, ok := k.verify(keys, obj, obj.GetAnnotations()[StampAnnotation], obj)
	at := time.Unix(rec.At, 0)
	return ok && rec.By == user && now.Sub(at) < 30*time.Second && at.Sub(now) < 30*time.Second
}

// keepStamp is the stamp of an update admission does not check in full
// (only harmless fields or metadata changed): the one obj carries if it
// verifies, else the stored object's if that verifies for obj, else none.
// It never stamps what was stored without a valid stamp.
func (k Kind[T]) keepStamp(keys *proof.Keyring, obj, old T) {
	// The one obj carries, as it is, when it is the stored one or was made
	// over the stored version (the operator re-signing what it stored): a
	// stamp written back is not kept here, whatever the policies do...
	v := obj.GetAnnotations()[StampAnnotation]
	if v == old.GetAnnotations()[StampAnnotation] || obj.GetAnnotations()[StampedOverAnnotation] == old.GetResourceVersion() {
		if _, ok := k.verify(keys, obj, v, old); ok {
			return
		}
	}
	// ...else the stored one, with what it was made over as stored.
	setOver(obj, old.GetAnnotations()[StampedOverAnnotation])
	if v := old.GetAnnotations()[StampAnnotation]; v != "" {
		if _, ok := k.verify(keys, obj, v, old); ok {
			setAnnotation(obj, StampAnnotation, v)
			return
		}
	}
	dropStamp(obj)
}

// NeedsApproval reports whether obj makes the operator use anything the
// access checks guard (access.go): a reference or exposure in its spec, a
// named owner, a command, or what the kind makes for its owner and lets
// its pods use (Implicit). Prepare requires a stamp of such an object.
func (k Kind[T]) NeedsApproval(obj T) (bool, string) {
	if k.Implicit != nil {
		if refs := k.Implicit(obj); len(refs) > 0 {
			return true, fmt.Sprintf("what kubeforge makes for its owner (%s)", refs[0].String())
		}
	}
	spec := specOf(obj)
	root := field.NewPath("spec")
	if spec != nil {
		if refs := validation.References(spec, root); len(refs) > 0 {
			return true, fmt.Sprintf("%s (%s)", refs[0].Path, refs[0].String())
		}
		if exp := validation.Exposures(spec, root); len(exp) > 0 {
			what := exp[0].Path.String()
			if e := exp[0]; e.Verb != "" {
				what += " (which takes " + e.Verb + " " + e.Resource
				if e.Name != "" {
					what += "/" + e.Name
				}
				what += ")"
			}
			return true, what
		}
	}
	a := obj.GetAnnotations()
	if owner := a[proof.OwnerAnnotation]; owner != "" && owner != a[proof.CreatedByAnnotation] {
		return true, "the owner " + owner
	}
	for _, c := range k.Commands {
		if _, ok := a[c]; ok && c != ReadmitAnnotation {
			return true, "the command " + c
		}
	}
	return false, ""
}

// NotAdmittedError is Prepare's answer for an object that needs an
// approval (NeedsApproval) and carries no stamp that verifies: the
// reconciler makes nothing for it, and its status says why with the
// reason NotAdmitted.
type NotAdmittedError struct{ msg string }

func (e *NotAdmittedError) Error() string { return e.msg }

// Reason is the condition reason the object's status reports.
func (e *NotAdmittedError) Reason() string { return conditions.ReasonNotAdmitted }

func (k Kind[T]) notAdmitted(obj T, what string) error {
	return &NotAdmittedError{msg: fmt.Sprintf("kubeforge's admission has not approved this %s as it is: it names %s, and it carries no "+
		"%s stamp that verifies, so it was stored or changed while kubeforge's webhooks were not called. kubeforge makes nothing for it. "+
		"With the webhooks in place, change its spec or set the annotation %s (any value), as a user who may use what it names",
		k.GVK.Kind, what, StampAnnotation, ReadmitAnnotation)}
}

func setAnnotation(obj client.Object, key, value string) {
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[key] = value
	obj.SetAnnotations(a)
}

func removeAnnotation(obj client.Object, key string) {
	a := obj.GetAnnotations()
	if _, ok := a[key]; ok {
		delete(a, key)
		obj.SetAnnotations(a)
	}
}

// Stamper is a kind's admission stamp for code that holds objects of
// every kind: the one-time stamping of stored objects (StampStored) and
// test kits that stand in for the webhooks.
type Stamper interface {
	GroupVersionKind() schema.GroupVersionKind
	// SignObject is Sign; an object of another kind is an error.
	SignObject(keys *proof.Keyring, obj client.Object, by string, now time.Time) error
	// NeedsStamp reports whether obj needs an approval and carries no
	// stamp that verifies: what Prepare refuses.
	NeedsStamp(keys *proof.Keyring, obj client.Object) bool // ResignObject is Resign.
	ResignObject(keys *proof.Keyring, obj client.Object) bool
}

// GroupVersionKind is the kind's.
func (k Kind[T]) GroupVersionKind() schema.GroupVersionKind { return k.GVK }

// SignObject is Sign for a client.Object of the kind.
func (k Kind[T]) SignObject(keys *proof.Keyring, obj client.Object, by string, now time.Time) error {
	t, ok := obj.(T)
	if !ok {
		return fmt.Errorf("a %T is not a %s", obj, k.GVK.Kind)
	}
	return k.Sign(keys, t, by, now)
}

// NeedsStamp reports whether Prepare would refuse obj as not admitted.
func (k Kind[T]) NeedsStamp(keys *proof.Keyring, obj client.Object) bool {
	t, ok := obj.(T)
	if !ok {
		return false
	}
	defaulted := t.DeepCopyObject().(T)
	k.Default(defaulted)
	need, _ := k.NeedsApproval(defaulted)
	return need && !k.Stamped(keys, t)
}

// ResignObject is Resign for a client.Object of the kind.
func (k Kind[T]) ResignObject(keys *proof.Keyring, obj client.Object) bool {
	t, ok := obj.(T)
	return ok && k.Resign(keys, t)
}

// Stampers are the stamps of every kubeforge kind.
func Stampers() []Stamper {
	return []Stamper{PodSet, Platform, Balancer, Workspace, KubernetesCluster}
}

// StamperFor is the Stamper of obj's kind (by its Go type), nil for an
// object that is not a kubeforge kind.
func StamperFor(s *runtime.Scheme, obj client.Object) Stamper {
	gvks, _, err := s.ObjectKinds(obj)
	if err != nil {
		return nil
	}
	for _, st := range Stampers() {
		for _, gvk := range gvks {
			if gvk == st.GroupVersionKind() {
				return st
			}
		}
	}
	return nil
}
