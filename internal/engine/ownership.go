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
	"net/url"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/kubeforge/kubeforge/internal/proof"
)

// How the engine knows an object is its owner's: the seal of package
// proof, made after the API server created the object, for a binding —
// the owner's UID, or for an object that may be retained the identity it
// is kept for. Labels, annotations and owner references are never proof:
// anyone who may write an object may write them.

// standing is what the engine may do with a live object under a wanted name.
type standing int

const (
	// notOurs: leave it exactly as it is and report a NameConflict.
	notOurs standing = iota
	// ours: sealed for this binding.
	ours
	// reseal: sealed for this binding with a previous key.
	reseal
	// migrate: made before seals existed (before the ownership key),
	// controlled by this owner: sealed once, then ours.
	migrate
	// unfinished: the pending mark for this binding and no seal: created by
	// the operator (or a copy of its mark) and never sealed. Deleted and
	// made anew.
	unfinished
	// handedBack: sealed by the API's hand-back for this owner (someone
	// allowed to read it gave it back): sealed for this binding, then ours.
	handedBack
	// retainedBeforeSeals: kept without an owner by a kubeforge before
	// seals. Never handed back automatically (the marks it carries could
	// have been written by anyone); see HandBack.
	retainedBeforeSeals
)

// made remembers the objects this engine created, for madeMemory: the
// API server's answer to a create (which fails on anything under the
// name) gave each its UID, and the API server gives no other object that
// UID. Until an object's seal is written and seen, that is the proof it is
// the engine's — so what waits for a new object to be proven ours (the
// API's create-and-wait, for a Workspace's Pod) does not wait for the
// seal's round trip. Only this process knows it: another replica, or this
// one restarted, goes by the seal.
type made struct {
	mu    sync.Mutex
	byUID map[types.UID]madeObject
}

type madeObject struct {
	gk   schema.GroupKind
	key  client.ObjectKey
	bind proof.Binding
	at   time.Time
}

// madeMemory is how long a created object is remembered; its seal is
// written right after the create.
const madeMemory = unfinishedFor

func (m *made) add(uid types.UID, gk schema.GroupKind, key client.ObjectKey, bind proof.Binding, now time.Time) {
	if uid == "" {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.byUID == nil {
		m.byUID = map[types.UID]madeObject{}
	}
	for u, o := range m.byUID {
		if now.Sub(o.at) > madeMemory {
			delete(m.byUID, u)
		}
	}
	m.byUID[uid] = madeObject{gk: gk, key: key, bind: bind, at: now}
}

// binding is the binding the engine created the object of uid with, if
// it did so within madeMemory as gk's key.
func (m *made) binding(uid types.UID, gk schema.GroupKind, key client.ObjectKey, now time.Time) (proof.Binding, bool) {
	if uid == "" {
		return "", false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.byUID[uid]
	if !ok || o.gk != gk || o.key != key || now.Sub(o.at) > madeMemory {
		return "", false
	}
	return o.bind, true
}

// unfinishedFor is how young an object with only the pending mark must be
// to be taken as one the operator created and did not get to seal.
const unfinishedFor = 2 * time.Minute

var claimKind = schema.GroupKind{Kind: "PersistentVolumeClaim"}

// ReasonRetainedBeforeUpgrade is the status reason for an object kept by
// a kubeforge version without ownership proofs, waiting for someone
// allowed to hand it back.
const ReasonRetainedBeforeUpgrade = "RetainedBeforeUpgrade"

// binding is whom desired is made for: the owner's UID, or, for an object
// that may be retained (Claim), the identity it is kept for — the owner's
// kind, name and recorded owner and what the builder named. An owner
// without a recorded owner (admitted with neither webhook nor policy) has
// no identity: what is kept for it is never handed back.
func binding(ownerKind string, owner, desired client.Object) (proof.Binding, bool) {
	claim, ok := desired.GetAnnotations()[AnnotationRetainedFor]
	if !ok {
		return proof.Owner(string(owner.GetUID())), true
	}
	who := proof.OwnerOf(owner)
	if who == "" {
		// Unique to this owner: kept, but nobody else's to take back.
		return proof.Retained(ownerKind + "/" + owner.GetName() + "/uid=" + string(owner.GetUID()) + "/" + claim), true
	}
	// Escaped, so that no user name can stand for another's prefix
	// ("bob/x" is not "bob" and a claim "x").
	return proof.Retained(ownerKind + "/" + owner.GetName() + "/owner=" + url.PathEscape(who) + "/" + claim), true
}

func sealed(gk schema.GroupKind, obj client.Object) proof.Object {
	return proof.Object{GroupKind: gk, Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: string(obj.GetUID())}
}

// standingOf decides what live, under a name desired wants, is to owner.
func (e *Engine) standingOf(gk schema.GroupKind, owner, live client.Object, want proof.Binding) standing {
	b, verdict := e.Proof.Check(sealed(gk, live), live.GetAnnotations()[proof.Annotation])
	if b == want {
		switch verdict {
		case proof.Sealed:
			return ours
		case proof.SealedWithOldKey:
			return reseal
		case proof.Pending:
			// Only just created (the seal follows the create at once), and
			// never a claim: anyone who may update an object could copy the
			// mark onto it, and a claim holds data.
			if time.Since(live.GetCreationTimestamp().Time) < unfinishedFor && gk != claimKind {
				return unfinished
			}
			return notOurs
		}
	}
	if verdict == proof.Sealed || verdict == proof.SealedWithOldKey {
		if b == proof.HandBack(string(owner.GetUID())) {
			return handedBack
		}
	}
	if verdict != proof.None || !live.GetCreationTimestamp().Time.Before(e.Proof.Since) {
		// Sealed for someone else, or made since seals exist without one.
		return notOurs
	}
	// Controlled by an owner that itself existed before the key, as the
	// record of what was made before the key says (Premade): an owner
	// reference is writable by anyone who may update the object, so one
	// written onto an object kept from before (a retained home) — for an
	// owner made since, or after the record was made — proves nothing.
	if metav1.IsControlledBy(live, owner) && owner.GetCreationTimestamp().Time.Before(e.Proof.Since) &&
		live.GetAnnotations()[AnnotationRetain] != "true" && e.Premade.allows(live, owner) {
		return migrate
	}
	if live.GetAnnotations()[AnnotationRetain] == "true" && strings.HasPrefix(string(want), "retained:") {
		return retainedBeforeSeals
	}
	return notOurs
}

// seal writes the seal of live for b. The patch names live's UID, which
// the API server refuses to change: it seals this object or none. It is
// not guarded by the resourceVersion — a Kubernetes controller writes a new
// object's status right after its create, and the seal must not lose to
// that write.
func (e *Engine) seal(ctx context.Context, gk schema.GroupKind, live client.Object, b proof.Binding, extra map[string]any) error {
	return e.sealWith(ctx, gk, live, b, extra, nil)
}

// sealWith is seal, writing managed as live's managed fields when it is
// not nil (in the same patch: the API server takes a client's managed
// fields as they are, then records the seal as kubeforge-proof's), and
// then only if live's resourceVersion is still the stored one.
func (e *Engine) sealWith(ctx context.Context, gk schema.GroupKind, live client.Object, b proof.Binding, extra map[string]any, managed []metav1.ManagedFieldsEntry) error {
	md := map[string]any{
		"uid":         string(live.GetUID()),
		"annotations": map[string]any{proof.Annotation: e.Proof.Seal(sealed(gk, live), b)},
	}
	if managed != nil {
		md["managedFields"] = managed
		md["resourceVersion"] = live.GetResourceVersion()
	}
	body := map[string]any{"metadata": md}
	for k, v := range extra {
		body[k] = v
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	if err := e.Client.Patch(ctx, live, client.RawPatch(types.MergePatchType, raw), client.FieldOwner(ProofFieldOwner)); err != nil {
		return fmt.Errorf("sealing %s %s: %w", gk.Kind, live.GetName(), err)
	}
	return nil
}

// ProofFieldOwner is the field manager of the seal, apart from FieldOwner
// so that applying the desired object (which does not carry the seal)
// never removes it.
const ProofFieldOwner = "kubeforge-proof"

// Owns reports whether obj is proven to be owner's: sealed for owner's UID,
// or, when the builder claimed it (Claim), for an identity owner's kind,
// name and recorded owner make; or, before its seal is seen, created for
// owner by this engine within madeMemory (made). Controllers use it for every object they
// read by name or label before they rely on it; pruning deletes only what
// it approves.
func (e *Engine) Owns(owner, obj client.Object) bool {
	gvk, err := apiutil.GVKForObject(obj, e.Scheme)
	if err != nil {
		return false
	}
	return e.owns(gvk.GroupKind(), owner, obj)
}

func (e *Engine) owns(gk schema.GroupKind, owner, obj client.Object) bool {
	b, verdict := e.Proof.Check(sealed(gk, obj), obj.GetAnnotations()[proof.Annotation])
	if verdict != proof.Sealed && verdict != proof.SealedWithOldKey {
		// Not sealed yet: the object this engine created a moment ago, by
		// the UID the API server answered its create with — and only as
		// the create left it, with its pending mark for that binding. A
		// copy without it (the cache keeps an unsealed object's metadata
		// only) shows nothing a caller could rely on.
		made, ok := e.made.binding(obj.GetUID(), gk, client.ObjectKeyFromObject(obj), time.Now())
		if !ok || verdict != proof.Pending || b != made {
			return false
		}
	}
	return e.boundTo(owner, b)
}

// boundTo reports whether binding b (of a seal, or of an object this
// engine created) is owner's: owned by it, or retained for it.
func (e *Engine) boundTo(owner client.Object, b proof.Binding) bool {
	if b == proof.Owner(string(owner.GetUID())) {
		return true
	}
	ownerGVK, err := apiutil.GVKForObject(owner, e.Scheme)
	if err != nil {
		return false
	}
	prefix, _ := binding(ownerGVK.Kind, owner, &metav1.PartialObjectMetadata{
		ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{AnnotationRetainedFor: ""}}})
	return strings.HasPrefix(string(b), string(prefix))
}

// Proven reports whether obj carries a seal that verifies, for anyone:
// what the cache keeps whole (CacheTransform).
func (e *Engine) Proven(gk schema.GroupKind, obj metav1.Object) bool {
	_, verdict := e.Proof.Check(proof.Object{GroupKind: gk, Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: string(obj.GetUID())},
		obj.GetAnnotations()[proof.Annotation])
	return verdict == proof.Sealed || verdict == proof.SealedWithOldKey
}

// GetOwned reads the object named key into obj and reports whether it
// exists and is proven owner's (Owns). It reads through the cache and,
// when the cached copy is not proven (the cache may not have seen the seal
// written right after the create), from the API server. An object that
// exists but is not owner's is reported as not found: callers never rely
// on it, and Apply reports the conflict.
func (e *Engine) GetOwned(ctx context.Context, owner client.Object, key client.ObjectKey, obj client.Object) (bool, error) {
	return e.getOwned(ctx, owner, key, obj, false)
}

// OwnedInCache is GetOwned for a look whose miss costs nothing (the object
// is applied right after, which asks the API server before creating
// anything), on the path where a round trip is what a user waits for: an
// object the cache has not seen is taken as absent, without asking the API
// server. A cached copy that is not proven is still read again from the
// API server, as GetOwned does: the cache keeps only the metadata of an
// object it has not seen sealed, so that copy says nothing of its content
// (an IDE's Pod made for an older spec looks like one made for this one).
func (e *Engine) OwnedInCache(ctx context.Context, owner client.Object, key client.ObjectKey, obj client.Object) (bool, error) {
	return e.getOwned(ctx, owner, key, obj, true)
}

func (e *Engine) getOwned(ctx context.Context, owner client.Object, key client.ObjectKey, obj client.Object, missIsAbsent bool) (bool, error) {
	if err := e.Client.Get(ctx, key, obj); err != nil {
		if !apierrors.IsNotFound(err) || missIsAbsent {
			return false, client.IgnoreNotFound(err)
		}
	} else if e.Owns(owner, obj) {
		return true, nil
	}
	if err := e.reader().Get(ctx, key, obj); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	return e.Owns(owner, obj), nil
}
