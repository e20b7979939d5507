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
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
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

func stampedPodSet(t *testing.T, keys *proof.Keyring) *appsv1alpha1.PodSet {
	t.Helper()
	ps := &appsv1alpha1.PodSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web", Annotations: map[string]string{proof.OwnerAnnotation: "alice"}},
		Spec: appsv1alpha1.PodSetSpec{Replicas: new(int32(2)), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "app", Image: "nginx", Env: []corev1.EnvVar{{Name: "T", ValueFrom: &corev1.EnvVarSource{
				SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "alice-token"}, Key: "t"}}}}}}}}},
	}
	if err := PodSet.stamp(keys, ps, nil); err != nil {
		t.Fatal(err)
	}
	if !PodSet.Stamped(keys, ps) {
		t.Fatal("a fresh stamp does not verify")
	}
	return ps
}

// A stamp verifies only for the object it was made for as it is: any
// change a client makes on its own (the spec, the owner, the name, the
// stamp) breaks it, but a harmless field does not.
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
		{"the stamp itself", func(ps *appsv1alpha1.PodSet) { ps.Annotations[StampAnnotation] += "x" }, false},
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
	kc := &clusterv1alpha1.KubernetesCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "c1"}}
	if err := KubernetesCluster.stamp(keys, kc, nil); err != nil {
		t.Fatal(err)
	}
	kc.Annotations[clusterv1alpha1.RetryAnnotation] = "again"
	if KubernetesCluster.Stamped(keys, kc) {
		t.Error("a command annotation added by a client keeps the stamp")
	}
}

// An update admission does not check in full (only harmless fields, or
// metadata) carries a stamp over only from a stored object whose stamp
// verified: it never stamps what was stored without one.
func TestAnUpdateNotCheckedInFullNeverStampsWhatWasNotStamped(t *testing.T) {
	keys := stampKeys(t, 1)
	stored := stampedPodSet(t, keys)
	scaled := stored.DeepCopy()
	scaled.Spec.Replicas = new(int32(7))
	if err := PodSet.stamp(keys, scaled, &stored); err != nil || !PodSet.Stamped(keys, scaled) {
		t.Fatalf("scaling a stamped PodSet: stamped %v, %v", PodSet.Stamped(keys, scaled), err)
	}

	unstamped := stampedPodSet(t, keys)
	delete(unstamped.Annotations, StampAnnotation) // stored while the webhooks were not called
	relabelled := unstamped.DeepCopy()
	relabelled.Labels = map[string]string{"a": "b"}
	relabelled.Annotations[StampAnnotation] = stored.Annotations[StampAnnotation]
	if err := PodSet.stamp(keys, relabelled, &unstamped); err != nil {
		t.Fatal(err)
	}
	if _, has := relabelled.Annotations[StampAnnotation]; has {
		t.Error("a metadata-only update stamped an object stored without a stamp")
	}

	changed := unstamped.DeepCopy()
	changed.Spec.Template.Spec.Containers[0].Image = "nginx:2"
	if err := PodSet.stamp(keys, changed, &unstamped); err != nil || !PodSet.Stamped(keys, changed) {
		t.Error("a change the validating webhook checks in full was not stamped")
	}
}
