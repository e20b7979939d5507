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

package admit_test

import (
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/admit"
	"github.com/kubeforge/kubeforge/internal/proof"
)

// In this suite no webhook stamps anything: every object is stored as a
// kubeforge without admission stamps stored it.
var _ = Describe("The one-time stamping of objects stored before admission stamps", Ordered, func() {
	namingSecret := func(name string) *appsv1alpha1.PodSet {
		ps := &appsv1alpha1.PodSet{}
		u := object("apps.kubeforge.io/v1alpha1", "PodSet", name, `{"template":{"spec":{"containers":[{"name":"app","image":"nginx",
			"env":[{"name":"T","valueFrom":{"secretKeyRef":{"name":"api-token","key":"t"}}}]}]}}}`)
		Expect(env.Client.Create(ctx, u)).To(Succeed())
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(u), ps)).To(Succeed())
		return ps
	}
	stamp := func() {
		Expect(admit.StampStored{Client: env.Client, Reader: env.Client, Scheme: env.Scheme, Keys: env.Proof, Namespace: "kube-system"}.
			Start(ctx)).To(Succeed())
	}

	It("stamps what needs a stamp, leaves the rest, records that it ran, and never runs again", func() {
		before := namingSecret("stored-before")
		// One a client gave a stamp of its own since (with the webhooks
		// not called): the pass does not vouch for it.
		written := namingSecret("stored-written")
		written.Annotations = map[string]string{admit.StampAnnotation: "made-up", admit.StampedOverAnnotation: written.ResourceVersion}
		Expect(env.Client.Update(ctx, written)).To(Succeed())
		plain := &appsv1alpha1.PodSet{}
		u := object("apps.kubeforge.io/v1alpha1", "PodSet", "stored-plain", `{"template":{"spec":{
			"securityContext":{"runAsNonRoot":true,"seccompProfile":{"type":"RuntimeDefault"}},
			"containers":[{"name":"app","image":"nginx","securityContext":{"allowPrivilegeEscalation":false,"capabilities":{"drop":["ALL"]}}}]}}}`)
		Expect(env.Client.Create(ctx, u)).To(Succeed())
		_, err := admit.Prepare(admit.PodSet, env.Proof, before)
		Expect(err).To(HaveOccurred(), "unstamped before the upgrade's first start")

		stamp()
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(before), before)).To(Succeed())
		Expect(admit.PodSet.Stamped(env.Proof, before)).To(BeTrue())
		Expect(before.Annotations).To(HaveKey(admit.StampedOverAnnotation), "made over the version it read, and written only over that one")
		_, err = admit.Prepare(admit.PodSet, env.Proof, before)
		Expect(err).NotTo(HaveOccurred())
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(written), written)).To(Succeed())
		Expect(admit.PodSet.Stamped(env.Proof, written)).To(BeFalse(), "a stamp written since the upgrade is not vouched for")
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(u), plain)).To(Succeed())
		Expect(plain.Annotations).NotTo(HaveKey(admit.StampAnnotation), "a PodSet naming nothing needs no stamp")
		record := &corev1.ConfigMap{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: admit.StampRecord}, record)).To(Succeed())
		Expect(record.Data).To(HaveKeyWithValue("version", strconv.Itoa(admit.StampVersion)))
		Expect(record.Data).To(HaveKey("at"))
		Expect(record.Data).To(HaveKeyWithValue("state", "done"))
		Expect(record.Data["pending"]).To(ContainSubstring(string(before.UID)), "what it was to stamp, recorded before it stamped")
		Expect(record.Data["pending"]).NotTo(ContainSubstring(string(written.UID)))

		By("an object stored without a stamp after that first start stays unstamped")
		after := namingSecret("stored-after")
		stamp()
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(after), after)).To(Succeed())
		Expect(after.Annotations).NotTo(HaveKey(admit.StampAnnotation))
	})

	It("takes up a pass that did not finish for what the first pass recorded, unchanged since, and nothing written meanwhile", func() {
		Expect(env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-node-lease", Name: proof.DefaultSecretName}})).To(Succeed())
		time.Sleep(1100 * time.Millisecond)
		untouched := namingSecret("resumed-untouched")
		rewritten := namingSecret("resumed-rewritten")
		// The first pass recorded both, then stopped before stamping them.
		entry := func(o client.Object) string { return string(o.GetUID()) + " " + o.GetResourceVersion() }
		Expect(env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-node-lease", Name: admit.StampRecord},
			Data: map[string]string{"version": strconv.Itoa(admit.StampVersion), "at": time.Now().Add(time.Second).UTC().Format(time.RFC3339),
				"state": "started", "pending": entry(untouched) + "\n" + entry(rewritten) + "\n"}})).To(Succeed())
		// Meanwhile someone writes one of them (removing a stamp it had, say).
		rewritten.Annotations = map[string]string{"note": "rewritten"}
		Expect(env.Client.Update(ctx, rewritten)).To(Succeed())

		Expect(admit.StampStored{Client: env.Client, Reader: env.Client, Scheme: env.Scheme, Keys: env.Proof, Namespace: "kube-node-lease"}.
			Start(ctx)).To(Succeed())
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(untouched), untouched)).To(Succeed())
		Expect(admit.PodSet.Stamped(env.Proof, untouched)).To(BeTrue(), "recorded by the first pass and unchanged")
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(rewritten), rewritten)).To(Succeed())
		Expect(rewritten.Annotations).NotTo(HaveKey(admit.StampAnnotation), "written since the first pass read it")
	})

	It("stamps nothing more after a pass whose record does not say what it was to stamp", func() {
		Expect(env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: proof.DefaultSecretName}})).To(Succeed())
		time.Sleep(1100 * time.Millisecond)
		unrecorded := namingSecret("unrecorded")
		Expect(env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: admit.StampRecord},
			Data: map[string]string{"version": strconv.Itoa(admit.StampVersion), "at": time.Now().Add(time.Second).UTC().Format(time.RFC3339),
				"state": "started"}})).To(Succeed())
		Expect(admit.StampStored{Client: env.Client, Reader: env.Client, Scheme: env.Scheme, Keys: env.Proof, Namespace: "default"}.
			Start(ctx)).To(Succeed())
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(unrecorded), unrecorded)).To(Succeed())
		Expect(unrecorded.Annotations).NotTo(HaveKey(admit.StampAnnotation))
	})

	It("vouches for nothing stored before the ownership key was made: a fresh install's object from before its webhooks", func() {
		early := namingSecret("stored-before-the-key")
		// creationTimestamp counts in seconds: the key a second later.
		time.Sleep(1100 * time.Millisecond)
		Expect(env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-public", Name: proof.DefaultSecretName}})).To(Succeed())
		time.Sleep(1100 * time.Millisecond)
		since := namingSecret("stored-since-the-key")
		Expect(admit.StampStored{Client: env.Client, Reader: env.Client, Scheme: env.Scheme, Keys: env.Proof, Namespace: "kube-public"}.
			Start(ctx)).To(Succeed())
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(early), early)).To(Succeed())
		Expect(early.Annotations).NotTo(HaveKey(admit.StampAnnotation))
		_, err := admit.Prepare(admit.PodSet, env.Proof, early)
		Expect(err).To(HaveOccurred(), "NotAdmitted until readmitted")
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(since), since)).To(Succeed())
		Expect(admit.PodSet.Stamped(env.Proof, since)).To(BeTrue(), "stored while a sealing kubeforge's webhooks ran")
	})
})
