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
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/conditions"
	"github.com/kubeforge/kubeforge/internal/proof"
)

func stampKeys(t *testing.T, b byte) *proof.Keyring {
	t.Helper()
	keys, err := proof.NewKeyring(time.Now(), bytes.Repeat([]byte{b}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// podSetNamingASecret is a stored PodSet (UID, creationTimestamp) whose
// pods read the Secret alice-token; they pass Pod Security's restricted
// level, so that naming the Secret is all it needs approved.
func podSetNamingASecret() *appsv1alpha1.PodSet {
	return &appsv1alpha1.PodSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web", UID: "uid-1", CreationTimestamp: metav1.Now(),
			Annotations: map[string]string{proof.OwnerAnnotation: "alice", proof.CreatedByAnnotation: "alice"}},
		Spec: appsv1alpha1.PodSetSpec{Replicas: new(int32(2)), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: new(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Containers: []corev1.Container{{Name: "app", Image: "nginx", SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: new(false),
				Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}, Env: []corev1.EnvVar{{Name: "T", ValueFrom: &corev1.EnvVarSource{
				SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "alice-token"}, Key: "t"}}}}}}}}},
	}
}

func stampedPodSet(t *testing.T, keys *proof.Keyring) *appsv1alpha1.PodSet {
	t.Helper()
	ps := podSetNamingASecret()
	if err := PodSet.Sign(keys, ps, "alice", time.Now()); err != nil {
		t.Fatal(err)
	}
	if !PodSet.Stamped(keys, ps) {
		t.Fatal("a fresh stamp does not verify")
	}
	return ps
}

// A stamp verifies only for the object it was made for as it is: any
// change a client makes on its own (the spec, the owner, the name, the
// UID, the stamp) breaks it, but a harmless field does not.
func TestAStampVerifiesOnlyForTheSpecAndOwnerItWasMadeFor(t *testing.T) {
	keys := stampKeys(t, 1)
	for _, tc := range []struct {
		name   string
		change func(*appsv1alpha1.PodSet)
		holds  bool
	}{
		{"replicas, a harmless field", func(ps *appsv1alpha1.PodSet) { ps.Spec.Replicas = new(int32(5)) }, true},
		{"a label", func(ps *appsv1alpha1.PodSet) { ps.Labels = map[string]string{"a": "b"} }, true},
		{"the image beside the Secret", func(ps *appsv1alpha1.PodSet) { ps.Spec.Template.Spec.Containers[0].Image = "mallory/steal" }, false},
		{"the Secret named", func(ps *appsv1alpha1.PodSet) {
			ps.Spec.Template.Spec.Containers[0].Env[0].ValueFrom.SecretKeyRef.Name = "bob-token"
		}, false},
		{"the owner record", func(ps *appsv1alpha1.PodSet) { ps.Annotations[proof.OwnerAnnotation] = "mallory" }, false},
		{"the creator record", func(ps *appsv1alpha1.PodSet) { ps.Annotations[proof.CreatedByAnnotation] = "mallory" }, false},
		{"the name (a stamp copied to another object)", func(ps *appsv1alpha1.PodSet) { ps.Name = "other" }, false},
		{"the namespace", func(ps *appsv1alpha1.PodSet) { ps.Namespace = "team-b" }, false},
		{"the UID (the same name created anew)", func(ps *appsv1alpha1.PodSet) { ps.UID = types.UID("uid-2") }, false},
		{"the stamp itself", func(ps *appsv1alpha1.PodSet) { ps.Annotations[StampAnnotation] += "x" }, false},
		{"a readmit command", func(ps *appsv1alpha1.PodSet) { ps.Annotations[ReadmitAnnotation] = "1" }, false},
	} {
		ps := stampedPodSet(t, keys)
		tc.change(ps)
		if got := PodSet.Stamped(keys, ps); got != tc.holds {
			t.Errorf("%s: stamp verifies %v, want %v", tc.name, got, tc.holds)
		}
	}
	if PodSet.Stamped(stampKeys(t, 2), stampedPodSet(t, keys)) {
		t.Error("a stamp verifies under another operator's key")
	}
	kc := &clusterv1alpha1.KubernetesCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "c1", UID: "uid-kc"}}
	if err := KubernetesCluster.Sign(keys, kc, "alice", time.Now()); err != nil {
		t.Fatal(err)
	}
	kc.Annotations[clusterv1alpha1.RetryAnnotation] = "again"
	if KubernetesCluster.Stamped(keys, kc) {
		t.Error("a command annotation added by a client keeps the stamp")
	}
}

// A stamp made at a create, before the API server assigns a UID, approves
// only the object created then: the same name created again later with
// the old stamp and owner records copied is not approved.
func TestACreateStampApprovesOnlyAnObjectCreatedWithinTheWindow(t *testing.T) {
	keys := stampKeys(t, 1)
	signed := time.Now().Add(-time.Hour)
	ps := podSetNamingASecret()
	ps.UID, ps.CreationTimestamp = "", metav1.Time{} // in admission: not yet assigned
	if err := PodSet.Sign(keys, ps, "alice", signed); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		created time.Time
		holds   bool
	}{
		{"created as it was admitted", signed.Add(2 * time.Second), true},
		{"created at the window's end", signed.Add(CreateWindow - time.Second), true},
		{"created anew an hour later", signed.Add(time.Hour), false},
		{"created before it was stamped", signed.Add(-2 * CreateWindow), false},
	} {
		stored := ps.DeepCopy()
		stored.UID, stored.CreationTimestamp = "uid-9", metav1.NewTime(tc.created)
		if got := PodSet.Stamped(keys, stored); got != tc.holds {
			t.Errorf("%s: stamp verifies %v, want %v", tc.name, got, tc.holds)
		}
	}
}

// An update admission does not check in full (only harmless fields, or
// metadata) keeps a stamp that verifies, the client's or the stored
// object's, and never stamps what was stored without one.
func TestAnUpdateNotCheckedInFullNeverStampsWhatWasNotStamped(t *testing.T) {
	keys := stampKeys(t, 1)
	stored := stampedPodSet(t, keys)
	scaled := stored.DeepCopy()
	scaled.Spec.Replicas = new(int32(7))
	delete(scaled.Annotations, StampAnnotation) // a client's update without it
	PodSet.keepStamp(keys, scaled, stored)
	if !PodSet.Stamped(keys, scaled) {
		t.Error("scaling a stamped PodSet lost its stamp")
	}

	unstamped := podSetNamingASecret() // stored while the webhooks were not called
	relabelled := unstamped.DeepCopy()
	relabelled.Labels = map[string]string{"a": "b"}
	relabelled.Annotations[StampAnnotation] = stored.Annotations[StampAnnotation] + "x"
	PodSet.keepStamp(keys, relabelled, unstamped)
	if _, has := relabelled.Annotations[StampAnnotation]; has {
		t.Error("a metadata-only update kept a stamp on an object stored without one")
	}
}

// The validating webhook skips the questions the mutating webhook asked
// only for a stamp made for the same requester moments ago.
func TestOnlyAFreshStampForTheRequesterSparesTheValidatingChecks(t *testing.T) {
	keys := stampKeys(t, 1)
	now := time.Now()
	ps := podSetNamingASecret()
	if err := PodSet.Sign(keys, ps, "alice", now); err != nil {
		t.Fatal(err)
	}
	if !PodSet.freshlyApproved(keys, ps, "alice", now.Add(time.Second)) {
		t.Error("the stamp the mutating webhook just made for alice is not taken")
	}
	if PodSet.freshlyApproved(keys, ps, "mallory", now) {
		t.Error("alice's stamp spares mallory's request the checks")
	}
	if PodSet.freshlyApproved(keys, ps, "alice", now.Add(time.Minute)) {
		t.Error("a minute-old stamp spares a request the checks")
	}
}

// Prepare refuses, with the reason NotAdmitted, an object that names
// what the access checks guard without a stamp that verifies; an object
// that names nothing needs none.
func TestPrepareRefusesWhatNamesReferencesWithoutAStamp(t *testing.T) {
	keys := stampKeys(t, 1)
	_, err := Prepare(PodSet, keys, podSetNamingASecret())
	var na *NotAdmittedError
	if !errors.As(err, &na) || na.Reason() != conditions.ReasonNotAdmitted {
		t.Fatalf("an unstamped PodSet naming a Secret: got %v, want NotAdmitted", err)
	}
	if _, err := Prepare(PodSet, keys, stampedPodSet(t, keys)); err != nil {
		t.Errorf("a stamped PodSet: %v", err)
	}
	plain := podSetNamingASecret()
	plain.Spec.Template.Spec.Containers[0].Env = nil
	if _, err := Prepare(PodSet, keys, plain); err != nil {
		t.Errorf("an unstamped PodSet naming nothing: %v", err)
	}
	named := plain.DeepCopy()
	named.Annotations[proof.OwnerAnnotation] = "bob"
	if _, err := Prepare(PodSet, keys, named); !errors.As(err, &na) {
		t.Errorf("an unstamped PodSet naming another owner: got %v, want NotAdmitted", err)
	}
	asRoot := plain.DeepCopy()
	asRoot.Spec.Template.Spec.SecurityContext = nil
	if _, err := Prepare(PodSet, keys, asRoot); !errors.As(err, &na) || !strings.Contains(err.Error(), "use podsecuritylevels/baseline") {
		t.Errorf("an unstamped PodSet below Pod Security's restricted level: got %v, want NotAdmitted naming the level", err)
	}
	ws := &idev1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "ide", UID: "uid-w"},
		Spec: idev1alpha1.WorkspaceSpec{User: "alice"}}
	if _, err := Prepare(Workspace, keys, ws); !errors.As(err, &na) {
		t.Errorf("an unstamped Workspace (its home is its owner's): got %v, want NotAdmitted", err)
	}
	if _, err := Prepare(PodSet, nil, podSetNamingASecret()); err != nil {
		t.Errorf("without a keyring no stamp is required: %v", err)
	}
}

// After a key rotation a stamp made with the previous key still verifies,
// and Resign makes it again with the new one, for the same approval, so
// that the previous key can be dropped.
func TestResignMovesAStampToTheCurrentKey(t *testing.T) {
	old, fresh := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	before, err := proof.NewKeyring(time.Now(), old)
	if err != nil {
		t.Fatal(err)
	}
	ps := stampedPodSet(t, before)
	rotated, err := proof.NewKeyring(time.Now(), fresh, old)
	if err != nil {
		t.Fatal(err)
	}
	if !PodSet.Stamped(rotated, ps) {
		t.Fatal("a stamp of the previous key does not verify during the rotation")
	}
	if !PodSet.Resign(rotated, ps) {
		t.Fatal("Resign did not make the stamp again")
	}
	dropped, err := proof.NewKeyring(time.Now(), fresh)
	if err != nil {
		t.Fatal(err)
	}
	if !PodSet.Stamped(dropped, ps) {
		t.Error("the re-made stamp does not verify once the previous key is dropped")
	}
	if PodSet.Resign(dropped, ps) {
		t.Error("Resign made again a stamp of the current key")
	}
	unstamped := podSetNamingASecret()
	if PodSet.Resign(rotated, unstamped) {
		t.Error("Resign stamped an object that had no stamp")
	}
}

// The operator consuming a command (a Platform's rotate annotation)
// keeps the approval: the stamp is made again for the object without it.
func TestConsumingACommandKeepsTheApproval(t *testing.T) {
	keys := stampKeys(t, 1)
	p := &appsv1alpha1.Platform{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "shop", UID: "uid-p",
		Annotations: map[string]string{appsv1alpha1.RotateSecretAnnotation: "session"}},
		Spec: appsv1alpha1.PlatformSpec{ImageRepository: "r.example.com", Version: "1",
			Secrets: []appsv1alpha1.PlatformSecret{{Name: "session", Keys: []string{"key"}}}}}
	if err := Platform.Sign(keys, p, "alice", time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := Platform.WithoutCommand(keys, p, appsv1alpha1.RotateSecretAnnotation); err != nil {
		t.Fatal(err)
	}
	if _, ok := p.Annotations[appsv1alpha1.RotateSecretAnnotation]; ok || !Platform.Stamped(keys, p) {
		t.Errorf("after the rotation: annotation kept %v, stamped %v; want removed and stamped", ok, Platform.Stamped(keys, p))
	}
	unstamped := p.DeepCopy()
	delete(unstamped.Annotations, StampAnnotation)
	unstamped.Annotations[appsv1alpha1.RotateSecretAnnotation] = "session"
	if err := Platform.WithoutCommand(keys, unstamped, appsv1alpha1.RotateSecretAnnotation); err != nil || Platform.Stamped(keys, unstamped) {
		t.Error("consuming a command stamped a Platform that had no stamp")
	}
}

// A stamp covers the spec as a whole object's conversion gives it: the
// digest is made from the spec alone, and must be byte for byte what it
// was made from when the object's stamp was stored.
func TestTheStampDigestIsTheSpecAsAWholeObjectConvertsIt(t *testing.T) {
	whole := func(obj any, defaults func(), harmless func()) string {
		defaults()
		if harmless != nil {
			harmless()
		}
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(struct {
			Spec      any               `json:"spec"`
			Commands  map[string]string `json:"commands"`
			Owner     string            `json:"owner"`
			CreatedBy string            `json:"createdBy"`
		}{u["spec"], map[string]string{}, "alice", "alice"})
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		return hex.EncodeToString(sum[:])
	}
	records := metav1.ObjectMeta{Name: "a", Namespace: "team",
		Annotations:   map[string]string{proof.OwnerAnnotation: "alice", proof.CreatedByAnnotation: "alice"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate}}}

	ps := podSetNamingASecret()
	ps.ObjectMeta = *records.DeepCopy()
	got, err := PodSet.stampDigest(ps)
	if err != nil {
		t.Fatal(err)
	}
	c := ps.DeepCopy()
	if want := whole(c, func() { PodSet.Default(c) }, func() { PodSet.Harmless(c) }); got != want {
		t.Errorf("PodSet: digest %s, a whole object's %s", got, want)
	}

	// A spec with nothing set, under a field that may be omitted when empty.
	ws := &idev1alpha1.Workspace{ObjectMeta: *records.DeepCopy()}
	got, err = Workspace.stampDigest(ws)
	if err != nil {
		t.Fatal(err)
	}
	w := ws.DeepCopy()
	if want := whole(w, func() { Workspace.Default(w) }, func() { Workspace.Harmless(w) }); got != want {
		t.Errorf("Workspace: digest %s, a whole object's %s", got, want)
	}
}

// A stamp made at an update says which stored version it was made over,
// in its record and in StampedOverAnnotation, and verifies only while the
// two agree: an older stamp written back cannot claim this update's
// version (which is what the references policies trust), and a stamp made
// elsewhere (a create, the kit's) claims none.
func TestAnUpdatesStampVerifiesOnlyForTheVersionItWasMadeOver(t *testing.T) {
	keys := stampKeys(t, 1)
	stored := podSetNamingASecret()
	stored.ResourceVersion = "41"
	obj := stored.DeepCopy()
	obj.Spec.Template.Spec.Containers[0].Image = "nginx:2"
	if err := PodSet.sign(keys, obj, stored, stored.ResourceVersion, "alice", time.Now()); err != nil {
		t.Fatal(err)
	}
	if got := obj.Annotations[StampedOverAnnotation]; got != "41" {
		t.Fatalf("%s = %q, want the stored version 41", StampedOverAnnotation, got)
	}
	if !PodSet.Stamped(keys, obj) {
		t.Fatal("the update's stamp does not verify")
	}
	for _, over := range []string{"42", ""} {
		replayed := obj.DeepCopy()
		setOver(replayed, over)
		if PodSet.Stamped(keys, replayed) {
			t.Errorf("a stamp made over 41 verifies with %s %q", StampedOverAnnotation, over)
		}
	}
	elsewhere := stampedPodSet(t, keys)
	if _, ok := elsewhere.Annotations[StampedOverAnnotation]; ok {
		t.Errorf("a stamp made outside an update says it was made over %q", elsewhere.Annotations[StampedOverAnnotation])
	}
	elsewhere.Annotations[StampedOverAnnotation] = "41"
	if PodSet.Stamped(keys, elsewhere) {
		t.Error("a stamp made outside an update verifies when it is said to be made over a version")
	}

	// An update that keeps the stamp keeps what it was made over, whatever the client wrote.
	later := obj.DeepCopy()
	later.ResourceVersion = "42"
	next := later.DeepCopy()
	next.Spec.Replicas = new(int32(5))
	next.Annotations[StampedOverAnnotation] = "42"
	PodSet.keepStamp(keys, next, later)
	if next.Annotations[StampedOverAnnotation] != "41" || !PodSet.Stamped(keys, next) {
		t.Errorf("after a harmless update: %s %q, stamped %v; want 41 and a stamp that verifies",
			StampedOverAnnotation, next.Annotations[StampedOverAnnotation], PodSet.Stamped(keys, next))
	}
}

// An update that keeps the stamp keeps the stored one, or one made over
// the stored version (the operator re-signing): a stamp of the same
// object written back, which verifies as written, is not kept by the
// webhook.
func TestKeepStampKeepsNoStampWrittenBack(t *testing.T) {
	keys := stampKeys(t, 1)
	stored := podSetNamingASecret()
	stored.ResourceVersion = "41"
	older := stored.DeepCopy()
	older.ResourceVersion = "40"
	if err := PodSet.Sign(keys, older, "alice", time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := PodSet.Sign(keys, stored, "alice", time.Now()); err != nil {
		t.Fatal(err)
	}
	back := stored.DeepCopy()
	back.Annotations[StampAnnotation] = older.Annotations[StampAnnotation]
	back.Annotations[StampedOverAnnotation] = "40"
	if !PodSet.Stamped(keys, back) {
		t.Fatal("the stamp written back does not verify as written: the case is not made")
	}
	PodSet.keepStamp(keys, back, stored)
	if back.Annotations[StampAnnotation] != stored.Annotations[StampAnnotation] || back.Annotations[StampedOverAnnotation] != "41" {
		t.Errorf("kept %q over %q, want the stored stamp over 41", back.Annotations[StampAnnotation], back.Annotations[StampedOverAnnotation])
	}
	resigned := stored.DeepCopy()
	if err := PodSet.Sign(keys, resigned, "kubeforge", time.Now()); err != nil {
		t.Fatal(err)
	}
	kept := resigned.DeepCopy()
	PodSet.keepStamp(keys, kept, stored)
	if kept.Annotations[StampAnnotation] != resigned.Annotations[StampAnnotation] {
		t.Error("a stamp made over the stored version (the operator's) was not kept")
	}
}
