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

package engine_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubeforge/kubeforge/internal/conditions"
	"github.com/kubeforge/kubeforge/internal/engine"
	"github.com/kubeforge/kubeforge/internal/proof"
	"github.com/kubeforge/kubeforge/internal/test/testenv"
	"github.com/kubeforge/kubeforge/internal/workload"
)

var _ = Describe("Ownership by proof", func() {
	var (
		counting *testenv.CountingClient
		eng      *engine.Engine
	)
	BeforeEach(func() {
		counting = testenv.NewCountingClient(env.Client)
		eng = &engine.Engine{Client: counting, Scheme: env.Scheme, Proof: env.Proof}
	})
	cm := func(name string, data map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: data}
	}
	live := func(name string) *corev1.ConfigMap {
		c := &corev1.ConfigMap{}
		ExpectWithOffset(1, env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, c)).To(Succeed())
		return c
	}

	It("should seal what it creates, and know it again from the seal alone, with no write", func() {
		owner := newOwner("sealed")
		_, err := eng.Apply(ctx, owner, []client.Object{cm("sealed-a", map[string]string{"k": "v"})}, &corev1.ConfigMap{})
		Expect(err).NotTo(HaveOccurred())
		made := live("sealed-a")
		_, verdict := env.Proof.Check(proof.Object{GroupKind: schema.GroupKind{Kind: "ConfigMap"}, Namespace: "default", Name: "sealed-a",
			UID: string(made.UID)}, made.Annotations[proof.Annotation])
		Expect(verdict).To(Equal(proof.Sealed))
		Expect(eng.Owns(owner, made)).To(BeTrue())

		// A manager started anew, with the same key, knows it.
		again := &engine.Engine{Client: counting, Scheme: env.Scheme, Proof: env.Proof}
		counting.Reset()
		res, err := again.Apply(ctx, owner, []client.Object{cm("sealed-a", map[string]string{"k": "v"})}, &corev1.ConfigMap{})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Unchanged).To(Equal([]string{"ConfigMap/sealed-a"}))
		Expect(counting.Writes()).To(BeEmpty())
	})

	It("should take nothing planted under a wanted name as its own, whatever annotations, labels and owner reference it carries", func() {
		owner := newOwner("victim")
		other := newOwner("elsewhere")
		_, err := eng.Apply(ctx, other, []client.Object{cm("elsewhere-a", nil)}, &corev1.ConfigMap{})
		Expect(err).NotTo(HaveOccurred())
		copied := live("elsewhere-a").Annotations[proof.Annotation]

		for i, tc := range []struct {
			name    string
			planted *corev1.ConfigMap
		}{
			{"retain annotations", &corev1.ConfigMap{Data: map[string]string{"run.sh": "curl evil"}, ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
				engine.AnnotationRetain: "true", engine.AnnotationRetainedFor: "", engine.AnnotationCreateOnly: "true"}}}},
			{"a controller reference to the owner", &corev1.ConfigMap{Data: map[string]string{"run.sh": "curl evil"}, ObjectMeta: metav1.ObjectMeta{
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID,
					Controller: ptr.To(true)}}}}},
			{"kubeforge's labels", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{
				engine.LabelManagedBy: engine.ManagedByValue, engine.LabelInstance: owner.Name}}}},
			{"another object's seal", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{proof.Annotation: copied}}}},
		} {
			name, planted := tc.name, tc.planted
			By("planted with " + name)
			planted.Name, planted.Namespace = fmt.Sprintf("victim-%d", i), "default"
			Expect(env.Client.Create(ctx, planted)).To(Succeed())
			before := snapshot(planted)
			desired := cm(planted.Name, map[string]string{"run.sh": "install"})
			engine.CreateOnly(desired)
			counting.Reset()
			_, err := eng.Apply(ctx, owner, []client.Object{desired}, &corev1.ConfigMap{})
			Expect(engine.IsConflict(err)).To(BeTrue(), "%s: %v", name, err)
			Expect(engine.FailureReason(err)).To(Equal("NameConflict"))
			Expect(counting.Writes()).To(BeEmpty())
			Expect(snapshot(planted)).To(Equal(before))
			Expect(eng.Owns(owner, live(planted.Name))).To(BeFalse())

			By("and never pruning it")
			_, err = eng.Apply(ctx, owner, nil, &corev1.ConfigMap{})
			Expect(err).NotTo(HaveOccurred())
			Expect(snapshot(planted)).To(Equal(before))
		}
	})

	It("should never turn its create into an update of an object someone made under the name meanwhile", func() {
		owner := newOwner("raced")
		planted := cm("raced-a", map[string]string{"extra.conf": "planted"})
		planted.Namespace = "default"
		racing := &plantingClient{Client: counting, plant: planted}
		raced := &engine.Engine{Client: racing, Reader: env.Client, Scheme: env.Scheme, Proof: env.Proof}
		_, err := raced.Apply(ctx, owner, []client.Object{cm("raced-a", map[string]string{"app.conf": "ours"})}, &corev1.ConfigMap{})
		Expect(racing.planted).To(BeTrue())
		Expect(engine.IsConflict(err)).To(BeTrue(), "%v", err)
		got := live("raced-a")
		Expect(got.Data).To(HaveKeyWithValue("extra.conf", "planted"))
		Expect(raced.Owns(owner, got)).To(BeFalse(), "not sealed, so never used as ours")
	})

	It("should never turn its apply into an update of an object someone made under the name after its create was refused", func() {
		// Something is made under the name just before the engine's
		// create, which is refused; it goes before the engine reads the
		// name; and someone makes an object there between that read and
		// the engine's server-side apply.
		owner := newOwner("raced2")
		there := cm("raced2-a", map[string]string{"extra.conf": "first"})
		there.Namespace = "default"
		planted := cm("raced2-a", map[string]string{"extra.conf": "planted"})
		planted.Namespace = "default"
		racing := &plantingClient{Client: counting, plant: planted, onlyApply: true, beforeCreate: there}
		raced := &engine.Engine{Client: racing, Reader: &vanishingReader{Reader: env.Client, obj: there}, Scheme: env.Scheme, Proof: env.Proof}
		_, err := raced.Apply(ctx, owner, []client.Object{cm("raced2-a", map[string]string{"app.conf": "ours"})}, &corev1.ConfigMap{})
		Expect(racing.planted).To(BeTrue(), "the apply path was taken")
		Expect(counting.Refused()).To(ContainElement(ContainSubstring("default/raced2-a: AlreadyExists")))
		Expect(engine.IsConflict(err)).To(BeTrue(), "%v", err)
		got := live("raced2-a")
		Expect(got.Data).To(HaveKeyWithValue("extra.conf", "planted"))
		Expect(raced.Owns(owner, got)).To(BeFalse(), "not sealed, so never used as ours")
	})

	It("should never make anew, by its apply of the object it read, one deleted since (a cache that has not seen the delete)", func() {
		owner := newOwner("stale")
		_, err := eng.Apply(ctx, owner, []client.Object{cm("stale-a", map[string]string{"k": "1"})}, &corev1.ConfigMap{})
		Expect(err).NotTo(HaveOccurred())
		first := live("stale-a")
		deleting := &deletingClient{Client: counting, obj: first}
		stale := &engine.Engine{Client: deleting, Scheme: env.Scheme, Proof: env.Proof}
		_, err = stale.Apply(ctx, owner, []client.Object{cm("stale-a", map[string]string{"k": "2"})}, &corev1.ConfigMap{})
		Expect(deleting.deleted).To(BeTrue(), "the apply path was taken")
		Expect(engine.Waiting(err)).To(BeTrue(), "a wait for the next pass, not a failure: %v", err)
		Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(first), &corev1.ConfigMap{}))).To(BeTrue(),
			"nothing made under the name by an apply meant for the object that was there")

		By("the next pass creates it anew, and seals it")
		_, err = eng.Apply(ctx, owner, []client.Object{cm("stale-a", map[string]string{"k": "2"})}, &corev1.ConfigMap{})
		Expect(err).NotTo(HaveOccurred())
		made := live("stale-a")
		Expect(made.UID).NotTo(Equal(first.UID))
		Expect(made.Data).To(HaveKeyWithValue("k", "2"))
		Expect(eng.Owns(owner, made)).To(BeTrue())
	})

	It("should leave alone, and never apply to, an object someone made under the name after the one it read was deleted", func() {
		owner := newOwner("swapped")
		_, err := eng.Apply(ctx, owner, []client.Object{cm("swapped-a", map[string]string{"k": "1"})}, &corev1.ConfigMap{})
		Expect(err).NotTo(HaveOccurred())
		first := live("swapped-a")
		theirs := cm("swapped-a", map[string]string{"k": "theirs"})
		theirs.Namespace = "default"
		deleting := &deletingClient{Client: counting, obj: first, then: theirs}
		stale := &engine.Engine{Client: deleting, Scheme: env.Scheme, Proof: env.Proof}
		_, err = stale.Apply(ctx, owner, []client.Object{cm("swapped-a", map[string]string{"k": "2"})}, &corev1.ConfigMap{})
		Expect(deleting.deleted).To(BeTrue(), "the apply path was taken")
		Expect(engine.Waiting(err)).To(BeTrue(), "a wait for the next pass: %v", err)
		got := live("swapped-a")
		Expect(got.UID).NotTo(Equal(first.UID))
		Expect(got.Data).To(Equal(map[string]string{"k": "theirs"}), "not applied to")
		for _, m := range got.ManagedFields {
			Expect(m.Manager).NotTo(HavePrefix("kubeforge"), "no field of kubeforge's on it")
		}

		By("the next pass finds it someone else's")
		_, err = eng.Apply(ctx, owner, []client.Object{cm("swapped-a", map[string]string{"k": "2"})}, &corev1.ConfigMap{})
		Expect(engine.IsConflict(err)).To(BeTrue(), "%v", err)
		Expect(live("swapped-a").Data).To(Equal(map[string]string{"k": "theirs"}))
	})

	It("should delete and make anew an object it created and never sealed", func() {
		owner := newOwner("unsealed")
		desired := cm("unsealed-a", map[string]string{"k": "v"})
		// What a create leaves when the manager stops before the seal.
		crashed := cm("unsealed-a", map[string]string{"k": "planted"})
		crashed.Namespace = "default"
		crashed.Annotations = map[string]string{proof.Annotation: env.Proof.PendingMark(proof.Object{
			GroupKind: schema.GroupKind{Kind: "ConfigMap"}, Namespace: "default", Name: "unsealed-a"}, proof.Owner(string(owner.UID)))}
		Expect(env.Client.Create(ctx, crashed)).To(Succeed())
		res, err := eng.Apply(ctx, owner, []client.Object{desired}, &corev1.ConfigMap{})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Created).To(Equal([]string{"ConfigMap/unsealed-a"}))
		now := live("unsealed-a")
		Expect(now.UID).NotTo(Equal(crashed.UID))
		Expect(now.Data).To(Equal(map[string]string{"k": "v"}))
		Expect(eng.Owns(owner, now)).To(BeTrue())
	})

	It("should know what it created before its seal is written by the UID the create was answered with, and nothing else under the name", func() {
		owner := newOwner("unsealed-yet")
		// A seal that does not arrive (refused here; slow on a busy API
		// server): Apply reports it, the object stays with its pending mark.
		slow := &engine.Engine{Client: noSealClient{counting}, Scheme: env.Scheme, Proof: env.Proof}
		_, err := slow.Apply(ctx, owner, []client.Object{cm("unsealed-yet-a", map[string]string{"k": "v"})}, &corev1.ConfigMap{})
		Expect(err).To(MatchError(ContainSubstring("no seal here")))
		made := live("unsealed-yet-a")
		_, verdict := env.Proof.Check(proof.Object{GroupKind: schema.GroupKind{Kind: "ConfigMap"}, Namespace: "default", Name: "unsealed-yet-a",
			UID: string(made.UID)}, made.Annotations[proof.Annotation])
		Expect(verdict).To(Equal(proof.Pending))
		Expect(slow.Owns(owner, made)).To(BeTrue(), "the engine that created it knows its UID")
		Expect(slow.Owns(newOwner("someone-else"), made)).To(BeFalse(), "created for its owner only")
		Expect((&engine.Engine{Client: counting, Scheme: env.Scheme, Proof: env.Proof}).Owns(owner, made)).To(BeFalse(),
			"another engine (a restart, another replica) goes by the seal")
		// What the cache holds of an unsealed object: its metadata without
		// annotations. Nothing in it can be relied on (a Pod's spec hash),
		// so it is not taken as the engine's, UID or not.
		stripped := made.DeepCopy()
		stripped.Annotations, stripped.Data = nil, nil
		Expect(slow.Owns(owner, stripped)).To(BeFalse(), "a copy without its pending mark")

		// Replaced by someone with a copy of everything it carries: a new
		// UID, which the engine never created.
		Expect(env.Client.Delete(ctx, made)).To(Succeed())
		planted := made.DeepCopy()
		planted.ResourceVersion, planted.UID, planted.ManagedFields = "", "", nil
		Expect(env.Client.Create(ctx, planted)).To(Succeed())
		Expect(planted.UID).NotTo(Equal(made.UID))
		Expect(slow.Owns(owner, planted)).To(BeFalse())
	})

	It("should read again from the API server an owned object whose cached copy is stripped, and take only a cache miss as absent", func() {
		owner := newOwner("stripped")
		_, err := eng.Apply(ctx, owner, []client.Object{cm("stripped-a", map[string]string{"k": "v"})}, &corev1.ConfigMap{})
		Expect(err).NotTo(HaveOccurred())

		// The cache keeps only the metadata of what it has not seen sealed.
		stripping := &engine.Engine{Client: strippingClient{env.Client}, Reader: env.Client, Scheme: env.Scheme, Proof: env.Proof}
		got := &corev1.ConfigMap{}
		ours, err := stripping.OwnedInCache(ctx, owner, client.ObjectKey{Namespace: "default", Name: "stripped-a"}, got)
		Expect(err).NotTo(HaveOccurred())
		Expect(ours).To(BeTrue())
		Expect(got.Data).To(HaveKeyWithValue("k", "v"), "the content, as the API server has it")

		missing := &engine.Engine{Client: missingClient{env.Client}, Reader: env.Client, Scheme: env.Scheme, Proof: env.Proof}
		ours, err = missing.OwnedInCache(ctx, owner, client.ObjectKey{Namespace: "default", Name: "stripped-a"}, &corev1.ConfigMap{})
		Expect(err).NotTo(HaveOccurred())
		Expect(ours).To(BeFalse(), "a cache miss is taken as absent, with no round trip")
	})

	It("should never create an object given KeepOnly (without its content) nor what uses it, keep it untouched when it exists, and never write the mark", func() {
		owner := newOwner("keep")
		counting.Reset()
		_, err := eng.ApplyStages(ctx, owner, [][]client.Object{{keepOnly(cm("keep-a", nil))}, {cm("keep-user", map[string]string{"reads": "keep-a"})}},
			&corev1.ConfigMap{})
		Expect(err).To(MatchError(ContainSubstring("ConfigMap/keep-a is gone")))
		Expect(engine.Waiting(err)).To(BeTrue(), "a wait for the next pass, not a failure")
		_, _, failed := engine.Failed(nil, err)
		Expect(failed).To(BeFalse())
		Expect(counting.Writes()).To(BeEmpty())
		Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "keep-a"}, &corev1.ConfigMap{}))).To(BeTrue(),
			"made empty for good otherwise")
		Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "keep-user"}, &corev1.ConfigMap{}))).To(BeTrue(),
			"what uses it by name waits for it")

		made := cm("keep-a", map[string]string{"password": "p"})
		engine.CreateOnly(made)
		_, err = eng.Apply(ctx, owner, []client.Object{made}, &corev1.ConfigMap{})
		Expect(err).NotTo(HaveOccurred())
		counting.Reset()
		res, err := eng.Apply(ctx, owner, []client.Object{keepOnly(cm("keep-a", nil))}, &corev1.ConfigMap{})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Unchanged).To(Equal([]string{"ConfigMap/keep-a"}))
		Expect(counting.Writes()).To(BeEmpty())
		got := live("keep-a")
		Expect(got.Data).To(HaveKeyWithValue("password", "p"))
		for k := range got.Annotations {
			Expect(k).NotTo(ContainSubstring("keep-only"))
		}
	})

	It("should make a create-only ConfigMap immutable, so that nobody can change what it relies on", func() {
		owner := newOwner("immutable")
		c := cm("immutable-a", map[string]string{"run.sh": "install"})
		engine.CreateOnly(c)
		_, err := eng.Apply(ctx, owner, []client.Object{c}, &corev1.ConfigMap{})
		Expect(err).NotTo(HaveOccurred())
		made := live("immutable-a")
		Expect(made.Immutable).To(Equal(ptr.To(true)))
		tampered := made.DeepCopy()
		tampered.Data["run.sh"] = "curl evil"
		Expect(apierrors.IsInvalid(env.Client.Update(ctx, tampered))).To(BeTrue(), "an immutable ConfigMap's data cannot change")
		Expect(eng.Owns(owner, live("immutable-a"))).To(BeTrue())
	})

	Context("When objects were made by a kubeforge without ownership proofs", func() {
		var before *engine.Engine
		BeforeEach(func() {
			// The key arrives with the upgrade: everything made earlier
			// was made before it.
			keys, err := proof.NewKeyring(time.Now().Add(time.Hour), bytes.Repeat([]byte{7}, 32))
			Expect(err).NotTo(HaveOccurred())
			before = &engine.Engine{Client: counting, Scheme: env.Scheme, Proof: keys}
		})
		It("should seal once, and report, what its owner controls; and leave a retained one untouched until it is handed back", func() {
			owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "legacy", Namespace: "default",
				Annotations: map[string]string{proof.OwnerAnnotation: "alice"}}}
			Expect(env.Client.Create(ctx, owner)).To(Succeed())
			controlled := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "legacy-auth", Namespace: "default",
				Labels: engine.CommonLabels(owner, "configmap"),
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID,
					Controller: ptr.To(true)}}}, Data: map[string]string{"password": "old"}}
			retained := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "legacy-home", Namespace: "default",
				Labels:      engine.CommonLabels(owner, "configmap"),
				Annotations: map[string]string{engine.AnnotationRetain: "true", engine.AnnotationRetainedFor: "ConfigMap/legacy/user=alice"}},
				Data: map[string]string{"files": "kept"}}
			Expect(env.Client.Create(ctx, controlled)).To(Succeed())
			Expect(env.Client.Create(ctx, retained)).To(Succeed())
			keptAs := snapshot(retained)
			// One sealed by another operator's key (installed here before,
			// its key gone): no seal for this one, migrated like the rest.
			foreign := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "legacy-conf", Namespace: "default",
				Labels: engine.CommonLabels(owner, "configmap"), OwnerReferences: controlled.OwnerReferences}}
			Expect(env.Client.Create(ctx, foreign)).To(Succeed())
			otherKeys, err := proof.NewKeyring(time.Now(), bytes.Repeat([]byte{9}, 32))
			Expect(err).NotTo(HaveOccurred())
			foreign.Annotations = map[string]string{proof.Annotation: otherKeys.Seal(proof.Object{GroupKind: schema.GroupKind{Kind: "ConfigMap"},
				Namespace: "default", Name: "legacy-conf", UID: string(foreign.UID)}, proof.Owner(string(owner.UID)))}
			Expect(env.Client.Update(ctx, foreign)).To(Succeed())
			// The first start of this version records what its owner
			// controls then (LoadPremade, as the manager does).
			premade, err := engine.LoadPremade(ctx, env.Client, env.Client, env.Scheme, before.Proof, "kube-public", engine.Scope{},
				[]client.Object{&corev1.ConfigMap{}})
			Expect(err).NotTo(HaveOccurred())
			before.Premade = premade

			home := func() client.Object {
				c := cm("legacy-home", map[string]string{"files": "kept"})
				engine.Claim(c, "home")
				engine.Retain(c)
				return c
			}
			auth := func() client.Object {
				c := cm("legacy-auth", nil)
				engine.CreateOnly(c)
				return c
			}
			res, err := before.Apply(ctx, owner, []client.Object{auth(), cm("legacy-conf", nil), home()}, &corev1.ConfigMap{})
			Expect(res.Migrated).To(Equal([]string{"ConfigMap/legacy-auth", "ConfigMap/legacy-conf"}))
			Expect(before.Owns(owner, live("legacy-auth"))).To(BeTrue())
			Expect(live("legacy-auth").Immutable).To(Equal(ptr.To(true)), "a create-only one is made immutable as it is sealed")

			By("the retained one: not handed back, untouched, and said so")
			Expect(engine.IsConflict(err)).To(BeTrue())
			Expect(engine.FailureReason(err)).To(Equal(engine.ReasonRetainedBeforeUpgrade))
			Expect(snapshot(retained)).To(Equal(keptAs))

			By("again: nothing more to seal, still not handed back")
			res, err = before.Apply(ctx, owner, []client.Object{auth(), cm("legacy-conf", nil), home()}, &corev1.ConfigMap{})
			Expect(res.Migrated).To(BeEmpty())
			Expect(engine.FailureReason(err)).To(Equal(engine.ReasonRetainedBeforeUpgrade))

			By("handed back (the API's seal for this owner): taken, and sealed as the owner's")
			handed := live("legacy-home")
			handed.Annotations[proof.Annotation] = before.Proof.Seal(proof.Object{GroupKind: schema.GroupKind{Kind: "ConfigMap"},
				Namespace: "default", Name: "legacy-home", UID: string(handed.UID)}, proof.HandBack(string(owner.UID)))
			Expect(env.Client.Update(ctx, handed)).To(Succeed())
			_, err = before.Apply(ctx, owner, []client.Object{auth(), home()}, &corev1.ConfigMap{})
			Expect(err).NotTo(HaveOccurred())
			Expect(before.Owns(owner, live("legacy-home"))).To(BeTrue())
			Expect(live("legacy-home").Data).To(Equal(map[string]string{"files": "kept"}))
		})

		It("should migrate nothing whose controller reference was written after the record of what was made before the key", func() {
			owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kept", Namespace: "default",
				Annotations: map[string]string{proof.OwnerAnnotation: "alice"}}}
			Expect(env.Client.Create(ctx, owner)).To(Succeed())
			// Kept from before proofs for someone (its retain mark), owned by nobody.
			home := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kept-home", Namespace: "default",
				Labels: engine.CommonLabels(owner, "configmap"), Annotations: map[string]string{engine.AnnotationRetain: "true"}},
				Data: map[string]string{"files": "someone else's"}}
			Expect(env.Client.Create(ctx, home)).To(Succeed())
			premade, err := engine.LoadPremade(ctx, env.Client, env.Client, env.Scheme, before.Proof, "kube-node-lease", engine.Scope{},
				[]client.Object{&corev1.ConfigMap{}})
			Expect(err).NotTo(HaveOccurred())
			before.Premade = premade

			By("someone who may update it removes the retain mark and makes the owner its controller")
			tampered := live("kept-home")
			tampered.Annotations = nil
			tampered.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID, Controller: ptr.To(true)}}
			Expect(env.Client.Update(ctx, tampered)).To(Succeed())
			keptAs := snapshot(tampered)

			res, err := before.Apply(ctx, owner, []client.Object{cm("kept-home", map[string]string{"files": "new"})}, &corev1.ConfigMap{})
			Expect(res.Migrated).To(BeEmpty())
			Expect(engine.FailureReason(err)).To(Equal(conditions.ReasonNameConflict))
			Expect(snapshot(tampered)).To(Equal(keptAs), "not sealed, not written")

			By("the record, once made, is read as it is: a later start lists nothing anew")
			again, err := engine.LoadPremade(ctx, env.Client, env.Client, env.Scheme, before.Proof, "kube-node-lease", engine.Scope{},
				[]client.Object{&corev1.ConfigMap{}})
			Expect(err).NotTo(HaveOccurred())
			Expect(again.Len()).To(Equal(premade.Len()))
		})
	})

	It("should refuse two kinds reading one type that keep different fields of it", func() {
		keepAll := func(o client.Object) client.Object { return o }
		Expect(func() {
			engine.CacheTransform(env.Proof, env.Scheme,
				engine.Types{Read: []engine.Read{{Object: &corev1.Pod{}, Keep: workload.PodFields}}},
				engine.Types{Read: []engine.Read{{Object: &corev1.Pod{}, Keep: keepAll}}})
		}).To(PanicWith(ContainSubstring("keep different fields")))
		Expect(func() {
			engine.CacheTransform(env.Proof, env.Scheme,
				engine.Types{Read: []engine.Read{{Object: &corev1.Pod{}, Keep: workload.PodFields}}},
				engine.Types{Read: []engine.Read{{Object: &corev1.Pod{}, Keep: workload.PodFields}}})
		}).NotTo(Panic())
	})

	It("should cache ConfigMaps and Secrets as metadata only, and strip an unsealed owned object to its metadata", func() {
		owned := []client.Object{&corev1.ConfigMap{}, &corev1.Secret{}, &corev1.Service{}}
		ts := engine.Types{Owned: owned, Read: []engine.Read{{Object: &corev1.Pod{}, Keep: workload.PodFields}}}
		opts := engine.CacheOptions(engine.CacheSettings{Transform: engine.CacheTransform(env.Proof, env.Scheme, ts)}, engine.Cached(ts)...)
		opts.Scheme = env.Scheme
		uncached, err := cache.New(env.Config, opts)
		Expect(err).NotTo(HaveOccurred())
		c := engine.GuardCache(uncached)
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		labels := map[string]string{engine.LabelManagedBy: engine.ManagedByValue}
		big := strings.Repeat("x", 512<<10)
		Expect(env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "planted-big", Namespace: "default", Labels: labels,
			Annotations: map[string]string{"note": big[:200<<10]}}, Data: map[string]string{"big": big}})).To(Succeed())
		// Bulk in metadata, where labels and data bounds do not reach: ≈ 700
		// KB of made-up owner references and finalizers on a labelled
		// ConfigMap and on a labelled Pod with a large spec.
		var refs []metav1.OwnerReference
		for i := range 2000 {
			refs = append(refs, metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: fmt.Sprintf("%0250d", i),
				UID: types.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", i)), Controller: ptr.To(i == 7)})
		}
		var finalizers []string
		for i := range 200 {
			finalizers = append(finalizers, fmt.Sprintf("example.com/%060d", i))
		}
		Expect(env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "planted-refs", Namespace: "default", Labels: labels,
			OwnerReferences: refs, Finalizers: finalizers}})).To(Succeed())
		// One controller reference of 700 KB: the API checks only that its
		// fields are not empty.
		Expect(env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "planted-big-ref", Namespace: "default", Labels: labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "x.example/v1", Kind: "X", Name: strings.Repeat("n", 700<<10), UID: "u",
				Controller: ptr.To(true)}}}})).To(Succeed())
		DeferCleanup(func(ctx context.Context) {
			Expect(env.Client.Patch(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "planted-refs", Namespace: "default"}},
				client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))).To(Succeed())
		})
		planted := service("planted-svc", 80, labels)
		planted.Namespace = "default"
		planted.Annotations = map[string]string{"note": "x"}
		Expect(env.Client.Create(ctx, planted)).To(Succeed())
		owner := newOwner("cached")
		_, err = eng.Apply(ctx, owner, []client.Object{service("cached-svc", 80, nil)}, &corev1.Service{})
		Expect(err).NotTo(HaveOccurred())

		meta := &metav1.PartialObjectMetadata{}
		meta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
		_, err = c.GetInformer(cctx, meta)
		Expect(err).NotTo(HaveOccurred())
		_, err = c.GetInformer(cctx, &corev1.Service{})
		Expect(err).NotTo(HaveOccurred())
		_, err = c.GetInformer(cctx, &corev1.Pod{})
		Expect(err).NotTo(HaveOccurred())
		// A Pod, a type kinds read: one the engine made (sealed), one another
		// controller made (a ReplicaSet's, say).
		pod := func(name string) *corev1.Pod {
			return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{engine.LabelManagedBy: engine.ManagedByValue, "app": "x"},
				Annotations: map[string]string{"note": "x"}}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
		}
		_, err = eng.Apply(ctx, owner, []client.Object{pod("cached-pod")}, &corev1.Pod{})
		Expect(err).NotTo(HaveOccurred())
		Expect(env.Client.Create(ctx, pod("replicaset-pod"))).To(Succeed())
		bulky := pod("bulky-pod")
		bulky.OwnerReferences = refs
		bulky.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "BULK", Value: big[:256<<10]}}
		Expect(env.Client.Create(ctx, bulky)).To(Succeed())
		bulky.Status = corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{Name: "c", Image: "i", ImageID: "i",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 2, Reason: "Error", Message: big[:64<<10]}}}}}
		Expect(env.Client.Status().Update(ctx, bulky)).To(Succeed())
		go func() { defer GinkgoRecover(); Expect(c.Start(cctx)).To(Succeed()) }()
		Expect(c.WaitForCacheSync(cctx)).To(BeTrue())

		By("a typed read of a ConfigMap or Secret from the cache is refused")
		Expect(c.Get(cctx, client.ObjectKey{Namespace: "default", Name: "planted-big"}, &corev1.ConfigMap{})).
			To(MatchError(ContainSubstring("never caches the content")))
		Expect(c.List(cctx, &corev1.SecretList{})).To(MatchError(ContainSubstring("never caches the content")))

		By("its metadata is there, without the annotation that is not kubeforge's")
		Eventually(func() error { return c.Get(cctx, client.ObjectKey{Namespace: "default", Name: "planted-big"}, meta) }).Should(Succeed())
		Expect(meta.Annotations).NotTo(HaveKey("note"))

		By("an unsealed object keeps only its controller reference of 2000, and no finalizer")
		Eventually(func() error { return c.Get(cctx, client.ObjectKey{Namespace: "default", Name: "planted-refs"}, meta) }).Should(Succeed())
		Expect(meta.OwnerReferences).To(HaveLen(1))
		Expect(meta.OwnerReferences[0].Name).To(Equal(refs[7].Name))
		Expect(meta.Finalizers).To(BeEmpty())
		Expect(meta.Labels).To(Equal(labels))
		Eventually(func() error {
			return c.Get(cctx, client.ObjectKey{Namespace: "default", Name: "planted-big-ref"}, meta)
		}).Should(Succeed())
		Expect(meta.OwnerReferences).To(BeEmpty(), "a reference past a real owner's sizes names none")

		By("an unsealed Service keeps only its metadata, a sealed one all of it")
		s := &corev1.Service{}
		Eventually(func() error { return c.Get(cctx, client.ObjectKey{Namespace: "default", Name: "planted-svc"}, s) }).Should(Succeed())
		Expect(s.Spec.Ports).To(BeEmpty())
		Expect(s.Annotations).NotTo(HaveKey("note"))
		Eventually(func() error { return c.Get(cctx, client.ObjectKey{Namespace: "default", Name: "cached-svc"}, s) }).Should(Succeed())
		Expect(s.Spec.Ports).To(HaveLen(1))

		By("a sealed one filled with 2000 owner references and 200 finalizers by whoever may update it keeps 8 and 16")
		bloated := &corev1.Service{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "cached-svc"}, bloated)).To(Succeed())
		bloated.OwnerReferences = append(bloated.OwnerReferences, refs...)
		for i := range refs {
			bloated.OwnerReferences[len(bloated.OwnerReferences)-len(refs)+i].Controller = nil
		}
		bloated.Finalizers = finalizers
		Expect(env.Client.Update(ctx, bloated)).To(Succeed())
		DeferCleanup(func(ctx context.Context) {
			Expect(env.Client.Patch(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "cached-svc", Namespace: "default"}},
				client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))).To(Succeed())
		})
		Eventually(func(g Gomega) {
			g.Expect(c.Get(cctx, client.ObjectKey{Namespace: "default", Name: "cached-svc"}, s)).To(Succeed())
			g.Expect(s.Finalizers).To(HaveLen(16))
		}).Should(Succeed())
		Expect(s.OwnerReferences).To(HaveLen(8))
		Expect(eng.Owns(owner, s)).To(BeTrue(), "still sealed, and kept whole but for those")
		Expect(s.Spec.Ports).To(HaveLen(1))

		By("a sealed Pod keeps its seal (so pruning knows it), another keeps its labels and content but no annotation")
		p := &corev1.Pod{}
		Eventually(func(g Gomega) {
			g.Expect(c.Get(cctx, client.ObjectKey{Namespace: "default", Name: "cached-pod"}, p)).To(Succeed())
			g.Expect(eng.Owns(owner, p)).To(BeTrue())
		}).Should(Succeed())
		Eventually(func() error { return c.Get(cctx, client.ObjectKey{Namespace: "default", Name: "replicaset-pod"}, p) }).Should(Succeed())
		Expect(p.Annotations).To(BeEmpty())
		Expect(p.Labels).To(HaveKeyWithValue("app", "x"))

		By("an unsealed Pod keeps its labels and the fields its Read keeps, bounded: no spec, a termination message cut to the kubelet's 4096 bytes")
		Eventually(func(g Gomega) {
			g.Expect(c.Get(cctx, client.ObjectKey{Namespace: "default", Name: "bulky-pod"}, p)).To(Succeed())
			g.Expect(p.Status.Phase).To(Equal(corev1.PodFailed))
		}).Should(Succeed())
		Expect(p.Spec.Containers).To(BeEmpty())
		Expect(p.Labels).To(HaveKeyWithValue("app", "x"))
		Expect(p.OwnerReferences).To(HaveLen(1))
		Expect(p.Status.ContainerStatuses).To(HaveLen(1))
		Expect(p.Status.ContainerStatuses[0].State.Terminated.ExitCode).To(Equal(int32(2)))
		Expect(p.Status.ContainerStatuses[0].State.Terminated.Message).To(HaveLen(workload.MaxKeptMessage))
	})
})

// plantingClient creates plant just before the engine's first write: the
// race of someone creating an object under a wanted name between the
// engine's read and its create.
type plantingClient struct {
	client.Client
	plant     client.Object
	planted   bool
	onlyApply bool
	// beforeCreate, when set, is created just before the first create.
	beforeCreate client.Object
}

func (p *plantingClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	p.plantOnce(ctx)
	return p.Client.Apply(ctx, obj, opts...)
}

func (p *plantingClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if p.beforeCreate != nil {
		Expect(env.Client.Create(ctx, p.beforeCreate.DeepCopyObject().(client.Object))).To(Succeed())
		p.beforeCreate = nil
	}
	if !p.onlyApply {
		p.plantOnce(ctx)
	}
	return p.Client.Create(ctx, obj, opts...)
}

// plantOnce creates the planted object before the engine's first write
// (with onlyApply, its first server-side apply).
func (p *plantingClient) plantOnce(ctx context.Context) {
	if !p.planted {
		p.planted = true
		plant := p.plant.DeepCopyObject().(client.Object)
		plant.SetResourceVersion("")
		plant.SetUID("")
		Expect(env.Client.Create(ctx, plant)).To(Succeed())
	}
}

// deletingClient deletes obj just before the engine's first server-side
// apply: the object the engine read is gone by the time it writes (a cache
// that has not seen the delete yet).
// With then, someone else then makes that object under the name.
type deletingClient struct {
	client.Client
	obj, then client.Object
	deleted   bool
}

func (d *deletingClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	if !d.deleted {
		d.deleted = true
		Expect(env.Client.Delete(ctx, d.obj.DeepCopyObject().(client.Object))).To(Succeed())
		if d.then != nil {
			Expect(env.Client.Create(ctx, d.then.DeepCopyObject().(client.Object))).To(Succeed())
		}
	}
	return d.Client.Apply(ctx, obj, opts...)
}

func keepOnly(obj client.Object) client.Object {
	engine.KeepOnly(obj)
	return obj
}

// noSealClient refuses every patch: the engine's seal never lands.
type noSealClient struct{ client.Client }

func (noSealClient) Patch(context.Context, client.Object, client.Patch, ...client.PatchOption) error {
	return errors.New("no seal here")
}

// strippingClient reads as the cache does an object it has not seen
// sealed: its metadata, without annotations, and none of its content.
type strippingClient struct{ client.Client }

func (s strippingClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	full := &corev1.ConfigMap{}
	if err := s.Client.Get(ctx, key, full, opts...); err != nil {
		return err
	}
	out := obj.(*corev1.ConfigMap)
	*out = corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: full.Name, Namespace: full.Namespace, UID: full.UID,
		ResourceVersion: full.ResourceVersion, Labels: full.Labels, OwnerReferences: full.OwnerReferences}}
	return nil
}

// missingClient reads as a cache that has not seen anything yet.
type missingClient struct{ client.Client }

func (missingClient) Get(_ context.Context, key client.ObjectKey, _ client.Object, _ ...client.GetOption) error {
	return apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, key.Name)
}

// vanishingReader deletes obj before its first read: what was under a
// name is gone by the time the engine reads it.
type vanishingReader struct {
	client.Reader
	obj  client.Object
	done bool
}

func (v *vanishingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if !v.done {
		v.done = true
		Expect(env.Client.Delete(ctx, v.obj.DeepCopyObject().(client.Object))).To(Succeed())
	}
	return v.Reader.Get(ctx, key, obj, opts...)
}
