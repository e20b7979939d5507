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

package proof

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func keyring(t *testing.T, keys ...[]byte) *Keyring {
	t.Helper()
	k, err := NewKeyring(time.Now(), keys...)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

var (
	keyA = bytes.Repeat([]byte{1}, 32)
	keyB = bytes.Repeat([]byte{2}, 32)
	obj  = Object{GroupKind: schema.GroupKind{Kind: "ConfigMap"}, Namespace: "team", Name: "prod-precheck-1", UID: "uid-1"}
	b    = Owner("owner-uid")
)

func TestASealVerifiesOnlyForTheObjectAndBindingItWasMadeFor(t *testing.T) {
	k := keyring(t, keyA)
	seal := k.Seal(obj, b)
	if got, v := k.Check(obj, seal); v != Sealed || got != b {
		t.Fatalf("Check(own seal) = %q, %v; want %q, Sealed", got, v, b)
	}
	for name, other := range map[string]Object{
		"another UID (planted anew under the name)": {GroupKind: obj.GroupKind, Namespace: obj.Namespace, Name: obj.Name, UID: "uid-2"},
		"another name":      {GroupKind: obj.GroupKind, Namespace: obj.Namespace, Name: "prod-precheck-2", UID: obj.UID},
		"another namespace": {GroupKind: obj.GroupKind, Namespace: "other", Name: obj.Name, UID: obj.UID},
		"another kind":      {GroupKind: schema.GroupKind{Kind: "Secret"}, Namespace: obj.Namespace, Name: obj.Name, UID: obj.UID},
		"no UID":            {GroupKind: obj.GroupKind, Namespace: obj.Namespace, Name: obj.Name},
	} {
		if _, v := k.Check(other, seal); v != None {
			t.Errorf("a seal copied onto %s verified (%v)", name, v)
		}
	}
	// The binding is in the seal: changing it breaks it.
	parts := strings.Split(seal, ".")
	parts[2] = enc([]byte(Owner("attacker-uid")))
	if _, v := k.Check(obj, strings.Join(parts, ".")); v != None {
		t.Errorf("a seal with another binding verified (%v)", v)
	}
	for _, forged := range []string{"", "v1", "v1.x.y.z", "v1." + keyID(keyA) + ".YQ.YQ", seal + "x"} {
		if _, v := k.Check(obj, forged); v != None {
			t.Errorf("Check(%q) = %v, want None", forged, v)
		}
	}
}

func TestASealMadeWithAnotherKeyDoesNotVerify(t *testing.T) {
	if _, v := keyring(t, keyA).Check(obj, keyring(t, keyB).Seal(obj, b)); v != None {
		t.Fatalf("a seal made without the operator's key verified (%v)", v)
	}
}

func TestAPreviousKeyStillVerifiesAndAsksForANewSeal(t *testing.T) {
	old := keyring(t, keyA).Seal(obj, b)
	rotated := keyring(t, keyB, keyA)
	if got, v := rotated.Check(obj, old); v != SealedWithOldKey || got != b {
		t.Fatalf("Check(seal of the previous key) = %q, %v; want SealedWithOldKey", got, v)
	}
	if _, v := rotated.Check(obj, rotated.Seal(obj, b)); v != Sealed {
		t.Fatalf("a seal of the current key = %v, want Sealed", v)
	}
}

func TestThePendingMarkProvesIntentNotIdentity(t *testing.T) {
	k := keyring(t, keyA)
	mark := k.PendingMark(obj, b)
	// Any object of that kind and name carries it validly: it is never
	// taken as sealed, only as "made and never sealed".
	for _, uid := range []string{"uid-1", "uid-2", ""} {
		o := obj
		o.UID = uid
		if got, v := k.Check(o, mark); v != Pending || got != b {
			t.Errorf("Check(pending mark, uid %q) = %q, %v; want Pending", uid, got, v)
		}
	}
	o := obj
	o.Name = "other"
	if _, v := k.Check(o, mark); v != None {
		t.Errorf("a pending mark verified for another name (%v)", v)
	}
}

func TestKeysShorterThan32BytesAreRefused(t *testing.T) {
	if _, err := NewKeyring(time.Now(), []byte("short")); err == nil {
		t.Fatal("NewKeyring accepted a 5-byte key")
	}
	if _, err := NewKeyring(time.Now()); err == nil {
		t.Fatal("NewKeyring accepted no key")
	}
}

func TestOwnerOfPrefersTheOwnerRecord(t *testing.T) {
	for _, tc := range []struct {
		annotations map[string]string
		want        string
	}{
		{map[string]string{CreatedByAnnotation: "gitops", OwnerAnnotation: "alice"}, "alice"},
		{map[string]string{CreatedByAnnotation: "alice"}, "alice"},
		{nil, ""},
	} {
		if got := OwnerOf(annotated(tc.annotations)); got != tc.want {
			t.Errorf("OwnerOf(%v) = %q, want %q", tc.annotations, got, tc.want)
		}
	}
}

type annotated map[string]string

func (a annotated) GetAnnotations() map[string]string { return a }
