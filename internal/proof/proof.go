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

// Package proof is how kubeforge recognises the objects it made: by proof,
// never by a name, a label, an annotation or an owner reference, which
// anyone who may write the object can set.
//
// After the API server has created an object (and so assigned its UID),
// the engine seals it: it writes into the annotation kubeforge.io/proof an
// HMAC-SHA256, under a key only the operator holds, over the object's
// group, kind, namespace, name and UID and over its binding — whom it was
// made for: an owner's UID, or for an object that outlives its owner the
// identity it is kept for (the owner's kind and name and the user who
// created the owner). A planted object has a UID the seal was not made for;
// a seal copied onto another object does not verify; without the key no
// seal can be made. So an object counts as the operator's exactly when its
// seal verifies for the binding the operator expects.
//
// The key lives in a Secret of the operator's own namespace, made once by
// whichever replica starts first and read by every replica (Load).
package proof

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Annotation holds an object's seal (or, for the moment between its
// create and its seal, the pending mark).
const Annotation = "kubeforge.io/proof"

const (
	version = "v1"
	// pendingPrefix marks the value written at create, before the UID is
	// known: it proves that the operator meant to make an object of this
	// kind, name and binding, not that this object is that one.
	pendingPrefix = "pending"
)

// Binding is whom an object was made for.
type Binding string

// Owner binds an object to the owner it is controlled by.
func Owner(uid string) Binding { return Binding("owner:" + uid) }

// Retained binds an object that may outlive its owner to the identity it
// is kept for; a later owner with the same identity takes it back.
func Retained(identity string) Binding { return Binding("retained:" + identity) }

// HandBack binds an object that an authorised person handed back to an
// owner (the kubeforge API's hand-back): that owner's next apply seals it
// for the binding it wants.
func HandBack(ownerUID string) Binding { return Binding("handback:" + ownerUID) }

// Object is what a seal covers: where the object is and what the API
// server called it.
type Object struct {
	GroupKind schema.GroupKind
	Namespace string
	Name      string
	UID       string
}

// Keyring signs with its first key and verifies with any of them, so that
// a new key can be brought in while seals made with the previous one are
// still accepted (and re-sealed).
type Keyring struct {
	keys [][]byte
	// Since is when the first key was made (the key Secret's
	// creationTimestamp, which the API server assigns): objects created
	// before it were made by a kubeforge without seals.
	Since time.Time
	// Cluster is the cluster's identity: the UID the API server gave the
	// kube-system namespace (Load). Records kept outside the cluster (a
	// database server's) carry it, so that the operators of two clusters
	// sharing that server never take each other's for their own.
	Cluster string
}

// NewKeyring returns a keyring signing with keys[0]. Every key must be at
// least 32 bytes.
func NewKeyring(since time.Time, keys ...[]byte) (*Keyring, error) {
	if len(keys) == 0 {
		return nil, errors.New("no ownership key")
	}
	for _, k := range keys {
		if len(k) < 32 {
			return nil, errors.New("an ownership key is shorter than 32 bytes")
		}
	}
	return &Keyring{keys: keys, Since: since}, nil
}

// Verdict is what a seal says about an object.
type Verdict int

const (
	// None: no seal that verifies. The object is not the operator's.
	None Verdict = iota
	// Sealed: the seal verifies with the current key.
	Sealed
	// SealedWithOldKey: it verifies with a previous key; seal it again.
	SealedWithOldKey
	// Pending: only the pending mark, valid for this kind, name and
	// binding: the operator created an object under this name and stopped
	// before sealing it, or someone copied that mark onto another object.
	// Either way it is nobody's to keep: delete it and create it anew.
	Pending
)

// Seal is the annotation value that proves obj was made for b.
func (k *Keyring) Seal(obj Object, b Binding) string {
	return strings.Join([]string{version, keyID(k.keys[0]), enc([]byte(b)), enc(mac(k.keys[0], obj, b, false))}, ".")
}

// PendingMark is the annotation value written at create, before the UID
// is known.
func (k *Keyring) PendingMark(obj Object, b Binding) string {
	obj.UID = ""
	return strings.Join([]string{pendingPrefix, keyID(k.keys[0]), enc([]byte(b)), enc(mac(k.keys[0], obj, b, true))}, ".")
}

// Check reads the seal of obj (its annotation value) and returns the
// binding it was made for and the verdict. A binding is returned only when
// the verdict is not None.
func (k *Keyring) Check(obj Object, value string) (Binding, Verdict) {
	parts := strings.Split(value, ".")
	if len(parts) != 4 || value == "" {
		return "", None
	}
	pending := parts[0] == pendingPrefix
	if parts[0] != version && !pending {
		return "", None
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return "", None
	}
	b := Binding(raw)
	got, err := base64.RawURLEncoding.DecodeString(parts[3])
	if err != nil {
		return "", None
	}
	if pending {
		obj.UID = ""
	} else if obj.UID == "" {
		return "", None
	}
	for i, key := range k.keys {
		if keyID(key) != parts[1] || !hmac.Equal(got, mac(key, obj, b, pending)) {
			continue
		}
		switch {
		case pending:
			return b, Pending
		case i == 0:
			return b, Sealed
		default:
			return b, SealedWithOldKey
		}
	}
	return "", None
}

// SignedWithCurrentKey reports whether value (a seal or a pending mark)
// names the keyring's current key: one made with a previous key verifies
// until that key is dropped, and should be made again before.
func (k *Keyring) SignedWithCurrentKey(value string) bool {
	parts := strings.Split(value, ".")
	return len(parts) == 4 && parts[1] == keyID(k.keys[0])
}

func mac(key []byte, obj Object, b Binding, pending bool) []byte {
	h := hmac.New(sha256.New, key)
	purpose := version
	if pending {
		purpose = pendingPrefix
	}
	// Each field with its length first, so that no two objects' fields
	// can run together into the same input.
	for _, f := range []string{purpose, obj.GroupKind.Group, obj.GroupKind.Kind, obj.Namespace, obj.Name, obj.UID, string(b)} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(f)))
		h.Write(n[:])
		h.Write([]byte(f))
	}
	return h.Sum(nil)
}

func keyID(key []byte) string {
	sum := sha256.Sum256(append([]byte("kubeforge key id\x00"), key...))
	return hex.EncodeToString(sum[:4])
}

func enc(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// Who a kubeforge object belongs to, recorded at admission from what the
// API server authenticated (never from what the client sent): the
// mutating webhook writes both on create and keeps them on every update,
// and the ValidatingAdmissionPolicy kubeforge-owner-record refuses any
// other value even when the webhook is not called.
const (
	// CreatedByAnnotation is the user who created the object.
	CreatedByAnnotation = "kubeforge.io/created-by"
	// OwnerAnnotation is the user the object belongs to: its creator, or a
	// user the creator named and may impersonate (a GitOps tool creating
	// Workspaces for people).
	OwnerAnnotation = "kubeforge.io/owner"
)

// OwnerOf is the recorded owner of obj: OwnerAnnotation, or for an object
// made before it existed, CreatedByAnnotation; "" when neither is there.
func OwnerOf(obj interface{ GetAnnotations() map[string]string }) string {
	a := obj.GetAnnotations()
	if o := a[OwnerAnnotation]; o != "" {
		return o
	}
	return a[CreatedByAnnotation]
}

// The operator keeps records beside its key (in ConfigMaps of the key's
// namespace, which only it writes) of objects it found at a first start:
// the admission stamps it is to write, the objects made before the key.
// Each is a list of entries, one a line.

// RecordLines writes entries one a line, as many as fit in max bytes.
func RecordLines(entries []string, max int) string {
	var b strings.Builder
	for _, e := range entries {
		if b.Len()+len(e)+1 > max {
			break
		}
		b.WriteString(e)
		b.WriteByte('\n')
	}
	return b.String()
}

// ReadLines reads the entries RecordLines wrote.
func ReadLines(record string) []string {
	var out []string
	for _, l := range strings.Split(record, "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}
