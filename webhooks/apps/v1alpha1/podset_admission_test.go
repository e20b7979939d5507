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

package v1alpha1_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/admit"
	"github.com/kubeforge/kubeforge/internal/proof"
	"github.com/kubeforge/kubeforge/internal/test/testenv"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

func podSetJSON(name, spec string) *unstructured.Unstructured {
	u, err := testenv.Object("apps.kubeforge.io/v1alpha1", "PodSet", "default", name, spec)
	Expect(err).NotTo(HaveOccurred())
	return u
}

// restrictedPodSetJSON is podSetJSON with its template made to pass Pod
// Security's restricted level (a non-root user, no privilege escalation,
// every capability dropped, the runtime's seccomp profile), which a
// requester with no right to a lower level needs.
func restrictedPodSetJSON(name, spec string) *unstructured.Unstructured {
	u := podSetJSON(name, spec)
	Expect(unstructured.SetNestedField(u.Object, map[string]any{"runAsNonRoot": true, "seccompProfile": map[string]any{"type": "RuntimeDefault"}},
		"spec", "template", "spec", "securityContext")).To(Succeed())
	containers, _, err := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	Expect(err).NotTo(HaveOccurred())
	for i := range containers {
		containers[i].(map[string]any)["securityContext"] = map[string]any{"allowPrivilegeEscalation": false,
			"capabilities": map[string]any{"drop": []any{"ALL"}}}
	}
	Expect(unstructured.SetNestedSlice(u.Object, containers, "spec", "template", "spec", "containers")).To(Succeed())
	return u
}

func causes(err error) []string { return testenv.Causes(err) }

func webhookRequests(path string) float64 {
	n, err := testenv.WebhookRequests(path)
	Expect(err).NotTo(HaveOccurred())
	return n
}

const (
	mutatePath   = "/mutate-apps-kubeforge-io-v1alpha1-podset"
	validatePath = "/validate-apps-kubeforge-io-v1alpha1-podset"
	denied       = `admission webhook "vpodset-v1alpha1.kubeforge.io" denied the request`
)

var _ = Describe("PodSet webhooks", func() {
	Context("When the API server calls them", func() {
		It("should call the mutating webhook on create and spec update, the validating one only for what is not stamped, and neither for a label", func() {
			mBefore, vBefore := webhookRequests(mutatePath), webhookRequests(validatePath)
			u := podSetJSON("called", `{"template":{"spec":{"containers":[{"name":"app","image":"nginx"}]}}}`)
			Expect(suite.Client.Create(suite.Ctx, u)).To(Succeed())
			ps := &appsv1alpha1.PodSet{}
			Expect(suite.Client.Get(suite.Ctx, client.ObjectKeyFromObject(u), ps)).To(Succeed())
			Expect(*ps.Spec.Replicas).To(Equal(int32(1)))
			ps.Spec.Replicas = new(int32(4))
			Expect(suite.Client.Update(suite.Ctx, ps)).To(Succeed())
			Expect(webhookRequests(mutatePath) - mBefore).To(BeNumerically(">=", 2))
			Expect(webhookRequests(validatePath)-vBefore).To(BeZero(), "both stamped by the mutating webhook")

			By("a label, or an annotation not kubeforge's: no webhook called, the stamp kept")
			mBefore, vBefore = webhookRequests(mutatePath), webhookRequests(validatePath)
			Expect(suite.Client.Patch(suite.Ctx, ps.DeepCopy(), client.RawPatch(types.MergePatchType,
				[]byte(`{"metadata":{"labels":{"team":"a"},"annotations":{"example.com/note":"x"}}}`)))).To(Succeed())
			Expect(webhookRequests(mutatePath) - mBefore).To(BeZero())
			Expect(webhookRequests(validatePath) - vBefore).To(BeZero())
			Expect(suite.Client.Get(suite.Ctx, client.ObjectKeyFromObject(u), ps)).To(Succeed())
			Expect(admit.PodSet.Stamped(suite.Env.Proof, ps)).To(BeTrue())

			By("a kubeforge.io annotation written by a client: the mutating webhook is called, and replaces a forged stamp")
			mBefore = webhookRequests(mutatePath)
			Expect(suite.Client.Patch(suite.Ctx, ps.DeepCopy(), client.RawPatch(types.MergePatchType,
				[]byte(`{"metadata":{"annotations":{"kubeforge.io/admitted":"forged"}}}`)))).To(Succeed())
			Expect(webhookRequests(mutatePath) - mBefore).To(BeNumerically(">=", 1))
			Expect(suite.Client.Get(suite.Ctx, client.ObjectKeyFromObject(u), ps)).To(Succeed())
			Expect(ps.Annotations[admit.StampAnnotation]).NotTo(Equal("forged"))
			Expect(admit.PodSet.Stamped(suite.Env.Proof, ps)).To(BeTrue())

			By("what breaks a rule gets no stamp from the mutating webhook: the validating webhook is called and refuses it")
			vBefore = webhookRequests(validatePath)
			ps.Spec.Template.Spec.Containers[0].Name = "Not_A_Label"
			err := suite.Client.Update(suite.Ctx, ps)
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
			Expect(err.Error()).To(ContainSubstring(denied))
			Expect(webhookRequests(validatePath) - vBefore).To(BeNumerically(">=", 1))
		})

		It("should stamp what it admits, for that spec only, and replace a stamp a client writes", func() {
			u := podSetJSON("stamped", `{"template":{"spec":{"containers":[{"name":"app","image":"nginx"}]}}}`)
			Expect(suite.Client.Create(suite.Ctx, u)).To(Succeed())
			ps := &appsv1alpha1.PodSet{}
			Expect(suite.Client.Get(suite.Ctx, client.ObjectKeyFromObject(u), ps)).To(Succeed())
			Expect(admit.PodSet.Stamped(suite.Env.Proof, ps)).To(BeTrue(), "stamped at create")

			Expect(ps.Annotations).NotTo(HaveKey(admit.StampedOverAnnotation), "a create's stamp is made over no stored version")

			By("a stamp a client writes is replaced by the webhook's, made over the version the update changed")
			ps.Annotations[admit.StampAnnotation] = "forged"
			ps.Annotations[admit.StampedOverAnnotation] = "1"
			ps.Spec.Template.Spec.Containers[0].Image = "nginx:2"
			changedVersion := ps.ResourceVersion
			Expect(suite.Client.Update(suite.Ctx, ps)).To(Succeed())
			Expect(ps.Annotations[admit.StampAnnotation]).NotTo(Equal("forged"))
			Expect(ps.Annotations[admit.StampedOverAnnotation]).To(Equal(changedVersion))
			Expect(admit.PodSet.Stamped(suite.Env.Proof, ps)).To(BeTrue(), "stamped for the new image")

			By("a client changing what the stamp was made over, alone: the webhook keeps it as the stamp says")
			Expect(suite.Client.Patch(suite.Ctx, ps.DeepCopy(), client.RawPatch(types.MergePatchType,
				[]byte(`{"metadata":{"annotations":{"kubeforge.io/admitted-over":"1"}}}`)))).To(Succeed())
			Expect(suite.Client.Get(suite.Ctx, client.ObjectKeyFromObject(u), ps)).To(Succeed())
			Expect(ps.Annotations[admit.StampedOverAnnotation]).To(Equal(changedVersion))
			Expect(admit.PodSet.Stamped(suite.Env.Proof, ps)).To(BeTrue())

			By("a stored spec changed past the webhooks does not verify")
			changed := ps.DeepCopy()
			changed.Spec.Template.Spec.Containers[0].Image = "mallory/steal"
			Expect(admit.PodSet.Stamped(suite.Env.Proof, changed)).To(BeFalse())
		})

		It("should stamp a PodSet created with generateName for the name it gets", func() {
			u := podSetJSON("", `{"template":{"spec":{"containers":[{"name":"app","image":"nginx",
				"env":[{"name":"T","valueFrom":{"secretKeyRef":{"name":"api-token","key":"t"}}}]}]}}}`)
			u.SetGenerateName("generated-")
			Expect(suite.Client.Create(suite.Ctx, u)).To(Succeed())
			Expect(u.GetName()).To(HavePrefix("generated-"))
			ps := &appsv1alpha1.PodSet{}
			Expect(suite.Client.Get(suite.Ctx, client.ObjectKeyFromObject(u), ps)).To(Succeed())
			Expect(admit.PodSet.Stamped(suite.Env.Proof, ps)).To(BeTrue())
		})

		DescribeTable("should reject what only the webhook checks, with field errors",
			func(name, spec string, fields ...string) {
				err := suite.Client.Create(suite.Ctx, podSetJSON(name, spec))
				Expect(err).To(HaveOccurred())
				Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
				Expect(err.Error()).To(ContainSubstring(denied))
				Expect(causes(err)).To(ConsistOf(fields))
			},
			Entry("a container name that is not a DNS label and a missing image", "bad-name",
				`{"template":{"spec":{"containers":[{"name":"Bad_Name","image":""}]}}}`,
				"spec.template.spec.containers[0].name", "spec.template.spec.containers[0].image"),
			Entry("a request above its limit", "over-limit",
				`{"template":{"spec":{"containers":[{"name":"app","image":"nginx","resources":{"requests":{"cpu":"2"},"limits":{"cpu":"1"}}}]}}}`,
				"spec.template.spec.containers[0].resources.requests[cpu]"),
			Entry("an init container named like a container", "dup-init",
				`{"template":{"spec":{"initContainers":[{"name":"app","image":"busybox"}],"containers":[{"name":"app","image":"nginx"}]}}}`,
				"spec.template.spec.containers[0].name"),
		)

		It("should name the field of a resource quantity that does not parse", func() {
			err := suite.Client.Create(suite.Ctx, podSetJSON("bad-quantity",
				`{"template":{"spec":{"containers":[{"name":"app","image":"nginx","resources":{"limits":{"memory":"lots"}}}]}}}`))
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
			Expect(causes(err)).To(ConsistOf("spec.template.spec.containers[0].resources.limits[memory]"))
		})

		It("should reject an update that breaks a rule, and keep the stored object", func() {
			u := podSetJSON("update", `{"replicas":2,"template":{"spec":{"containers":[{"name":"app","image":"nginx"}]}}}`)
			Expect(suite.Client.Create(suite.Ctx, u)).To(Succeed())
			ps := &appsv1alpha1.PodSet{}
			Expect(suite.Client.Get(suite.Ctx, client.ObjectKeyFromObject(u), ps)).To(Succeed())
			ps.Spec.Template.Spec.Containers[0].Name = "NotADNSLabel"
			err := suite.Client.Update(suite.Ctx, ps)
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring(denied))
			Expect(suite.Client.Get(suite.Ctx, client.ObjectKeyFromObject(u), ps)).To(Succeed())
			Expect(ps.Spec.Template.Spec.Containers[0].Name).To(Equal("app"))
		})

		It("should let a valid PodSet through unchanged but for defaults", func() {
			ps := &appsv1alpha1.PodSet{
				ObjectMeta: metav1.ObjectMeta{Name: "valid", Namespace: "default"},
			}
			Expect(json.Unmarshal([]byte(`{"replicas":0,"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"app","image":"nginx"}]}}}`), &ps.Spec)).To(Succeed())
			Expect(suite.Client.Create(suite.Ctx, ps)).To(Succeed())
			Expect(*ps.Spec.Replicas).To(Equal(int32(0)))
			Expect(ps.Spec.Template.Labels).To(Equal(map[string]string{"app": "web"}))
		})
	})
})

var _ = Describe("PodSet and Platform webhooks and the requester's rights", func() {
	podSets := rbacv1.PolicyRule{APIGroups: []string{"apps.kubeforge.io"}, Resources: []string{"podsets", "platforms"}, Verbs: []string{"create"}}

	It("should refuse pods that mount or read a Secret the requester may not get", func() {
		dave, err := suite.Env.As(suite.Ctx, "dave", "default", podSets)
		Expect(err).NotTo(HaveOccurred())
		err = dave.Create(suite.Ctx, restrictedPodSetJSON("dave-mounts", `{"template":{"spec":{
			"volumes":[{"name":"s","secret":{"secretName":"db-root"}}],
			"containers":[{"name":"app","image":"nginx","env":[{"name":"T","valueFrom":{"secretKeyRef":{"name":"api-token","key":"t"}}}]}]}}}`))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
		Expect(causes(err)).To(ConsistOf("spec.template.spec.volumes[0].secret.secretName",
			"spec.template.spec.containers[0].env[0].valueFrom.secretKeyRef.name"))
		Expect(dave.Create(suite.Ctx, restrictedPodSetJSON("dave-plain", `{"template":{"spec":{"containers":[{"name":"app","image":"nginx"}]}}}`))).To(Succeed())
	})

	It("should refuse a PodSet naming more distinct objects than the references policy checks, which it leaves to the webhooks once stamped, and stamp one at the bound", func() {
		naming := func(name string, secrets int) *unstructured.Unstructured {
			var env []string
			for i := range secrets {
				// Each Secret twice, and the default ServiceAccount: neither counts again.
				env = append(env, fmt.Sprintf(`{"name":"A%d","valueFrom":{"secretKeyRef":{"name":"s%d","key":"k"}}}`, i, i),
					fmt.Sprintf(`{"name":"B%d","valueFrom":{"secretKeyRef":{"name":"s%d","key":"k"}}}`, i, i))
			}
			return podSetJSON(name, fmt.Sprintf(`{"template":{"spec":{"serviceAccountName":"default","containers":[{"name":"app","image":"nginx","env":[%s]}]}}}`,
				strings.Join(env, ",")))
		}
		err := suite.Client.Create(suite.Ctx, naming("too-many-refs", admit.MaxPolicyReferences+1))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
		Expect(err.Error()).To(ContainSubstring(fmt.Sprintf("names %d distinct Secrets, ConfigMaps, claims and ServiceAccounts, more than %d",
			admit.MaxPolicyReferences+1, admit.MaxPolicyReferences)))
		Expect(causes(err)).To(ConsistOf("spec"))

		at := naming("refs-at-bound", admit.MaxPolicyReferences)
		Expect(suite.Client.Create(suite.Ctx, at)).To(Succeed())
		ps := &appsv1alpha1.PodSet{}
		Expect(suite.Client.Get(suite.Ctx, client.ObjectKeyFromObject(at), ps)).To(Succeed())
		Expect(admit.PodSet.Stamped(suite.Env.Proof, ps)).To(BeTrue())
	})

	It("should stamp only what the mutating webhook's own access checks approve, with no validating webhook called, and stamp again on readmit", func() {
		quinn, err := suite.Env.As(suite.Ctx, "quinn", "default",
			rbacv1.PolicyRule{APIGroups: []string{"apps.kubeforge.io"}, Resources: []string{"podsets"}, Verbs: []string{"create", "get", "update", "patch"}})
		Expect(err).NotTo(HaveOccurred())
		namingToken := func(name string) *unstructured.Unstructured {
			return restrictedPodSetJSON(name, `{"template":{"spec":{"containers":[{"name":"app","image":"nginx",
				"env":[{"name":"T","valueFrom":{"secretKeyRef":{"name":"api-token","key":"t"}}}]}]}}}`)
		}
		By("the validating webhook configuration taken away, the mutating one left")
		takeAwayWebhookConfigurations("ValidatingWebhookConfiguration", func() bool {
			// Back before the next spec: quinn's reference refused again.
			// A new name each try: a try admitted before the API server
			// has seen the configuration stays stored.
			u := namingToken("")
			u.SetName("")
			u.SetGenerateName("quinn-after-")
			return apierrors.IsInvalid(quinn.Create(suite.Ctx, u))
		})

		By("quinn, who may not get api-token, stores a PodSet naming it: no stamp, and the reconciler refuses it")
		Eventually(func() error { return quinn.Create(suite.Ctx, namingToken("quinn-token")) }).Should(Succeed())
		ps := &appsv1alpha1.PodSet{}
		Expect(suite.Client.Get(suite.Ctx, client.ObjectKey{Namespace: "default", Name: "quinn-token"}, ps)).To(Succeed())
		Expect(ps.Annotations).NotTo(HaveKey(admit.StampAnnotation))
		_, err = admit.Prepare(admit.PodSet, suite.Env.Proof, ps)
		var notAdmitted *admit.NotAdmittedError
		Expect(errors.As(err, &notAdmitted)).To(BeTrue(), "Prepare: %v", err)

		By("his readmit asks his checks again: still no stamp")
		Expect(quinn.Patch(suite.Ctx, ps.DeepCopy(), client.RawPatch(types.MergePatchType,
			[]byte(`{"metadata":{"annotations":{"kubeforge.io/readmit":"1"}}}`)))).To(Succeed())
		Expect(suite.Client.Get(suite.Ctx, client.ObjectKeyFromObject(ps), ps)).To(Succeed())
		Expect(admit.PodSet.Stamped(suite.Env.Proof, ps)).To(BeFalse())

		By("the admin's readmit, who may get api-token: stamped, and the reconciler takes it")
		Expect(suite.Client.Patch(suite.Ctx, ps.DeepCopy(), client.RawPatch(types.MergePatchType,
			[]byte(`{"metadata":{"annotations":{"kubeforge.io/readmit":"2"}}}`)))).To(Succeed())
		Expect(suite.Client.Get(suite.Ctx, client.ObjectKeyFromObject(ps), ps)).To(Succeed())
		Expect(admit.PodSet.Stamped(suite.Env.Proof, ps)).To(BeTrue())
		_, err = admit.Prepare(admit.PodSet, suite.Env.Proof, ps)
		Expect(err).NotTo(HaveOccurred())

		By("a label on it later keeps the stamp")
		Expect(quinn.Patch(suite.Ctx, ps.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"team":"a"}}}`)))).To(Succeed())
		Expect(suite.Client.Get(suite.Ctx, client.ObjectKeyFromObject(ps), ps)).To(Succeed())
		Expect(admit.PodSet.Stamped(suite.Env.Proof, ps)).To(BeTrue())
	})

	It("should refuse in the validating webhook what names a Secret the requester may not get when the mutating webhook configuration is gone; a client's own stamp skips it but does not verify", func() {
		mo2, err := suite.Env.As(suite.Ctx, "nia", "default",
			rbacv1.PolicyRule{APIGroups: []string{"apps.kubeforge.io"}, Resources: []string{"podsets"}, Verbs: []string{"create", "get", "update", "patch"}})
		Expect(err).NotTo(HaveOccurred())
		namingToken := func(name, annotations string) *unstructured.Unstructured {
			u := restrictedPodSetJSON(name, `{"template":{"spec":{"containers":[{"name":"app","image":"nginx",
				"env":[{"name":"T","valueFrom":{"secretKeyRef":{"name":"api-token","key":"t"}}}]}]}}}`)
			if annotations != "" {
				u.SetAnnotations(map[string]string{admit.StampAnnotation: annotations})
			}
			return u
		}
		By("the mutating webhook configuration taken away, the validating one left")
		takeAwayWebhookConfigurations("MutatingWebhookConfiguration", func() bool {
			// Back before the next spec: what is created is stamped again.
			// A new name each try: one stored unstamped before the API
			// server has seen the configuration would otherwise make
			// every later try AlreadyExists.
			u := podSetJSON("", `{"template":{"spec":{"containers":[{"name":"app","image":"nginx"}]}}}`)
			u.SetName("")
			u.SetGenerateName("nia-after-")
			if err := suite.Client.Create(suite.Ctx, u); err != nil {
				return false
			}
			ps := &appsv1alpha1.PodSet{}
			return suite.Client.Get(suite.Ctx, client.ObjectKeyFromObject(u), ps) == nil && admit.PodSet.Stamped(suite.Env.Proof, ps)
		})

		By("no stamp: the validating webhook is called and refuses her reference")
		err = mo2.Create(suite.Ctx, namingToken("nia-token", ""))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
		Expect(err.Error()).To(ContainSubstring(denied))
		Expect(causes(err)).To(ConsistOf("spec.template.spec.containers[0].env[0].valueFrom.secretKeyRef.name"))

		By("a stamp she writes herself skips the validating webhook, but verifies for nothing: the reconciler refuses the object")
		// Once the API server has seen the deletion (until then the
		// mutating webhook replaces her stamp with none, and she is refused).
		Eventually(func() error { return mo2.Create(suite.Ctx, namingToken("nia-forged", "forged")) }).Should(Succeed())
		ps := &appsv1alpha1.PodSet{}
		Expect(suite.Client.Get(suite.Ctx, client.ObjectKey{Namespace: "default", Name: "nia-forged"}, ps)).To(Succeed())
		Expect(admit.PodSet.Stamped(suite.Env.Proof, ps)).To(BeFalse())
		_, err = admit.Prepare(admit.PodSet, suite.Env.Proof, ps)
		var notAdmitted *admit.NotAdmittedError
		Expect(errors.As(err, &notAdmitted)).To(BeTrue(), "Prepare: %v", err)
	})

	It("should refuse a Platform whose database admin Secret the requester may not get", func() {
		erin, err := suite.Env.As(suite.Ctx, "erin", "default", podSets)
		Expect(err).NotTo(HaveOccurred())
		p, err := testenv.Object("apps.kubeforge.io/v1alpha1", "Platform", "default", "erins", `{"imageRepository":"r.example.com/a","version":"1",
			"database":{"engine":"postgresql","host":"db.example.com","adminSecretRef":{"name":"pg-admin"}},
			"components":[{"name":"api","database":{"enabled":true}}]}`)
		Expect(err).NotTo(HaveOccurred())
		err = erin.Create(suite.Ctx, p)
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
		Expect(causes(err)).To(ConsistOf("spec.database.adminSecretRef.name"))
	})

	It("should ask about every reference again when anything but replicas changes", func() {
		made := restrictedPodSetJSON("frank-edits", `{"template":{"spec":{"containers":[{"name":"app","image":"nginx",
			"env":[{"name":"T","valueFrom":{"secretKeyRef":{"name":"api-token","key":"t"}}}]}]}}}`)
		Expect(suite.Client.Create(suite.Ctx, made)).To(Succeed(), "the admin may read api-token")
		frank, err := suite.Env.As(suite.Ctx, "frank", "default",
			rbacv1.PolicyRule{APIGroups: []string{"apps.kubeforge.io"}, Resources: []string{"podsets"}, Verbs: []string{"get", "update", "patch"}})
		Expect(err).NotTo(HaveOccurred())
		err = frank.Patch(suite.Ctx, made.DeepCopy(), client.RawPatch(types.JSONPatchType,
			[]byte(`[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"registry.example.com/exfiltrate:1"}]`)))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
		Expect(causes(err)).To(ConsistOf("spec.template.spec.containers[0].env[0].valueFrom.secretKeyRef.name"))
		Expect(frank.Patch(suite.Ctx, made.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":3}}`)))).
			To(Succeed(), "replicas is harmless")
	})

	It("should refuse a ServiceAccount, a CSI volume (and its Secret) and a claim kubeforge made that the requester may not use", func() {
		gina, err := suite.Env.As(suite.Ctx, "gina", "default", podSets,
			rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims"}, Verbs: []string{"get"}})
		Expect(err).NotTo(HaveOccurred())
		// A claim kubeforge made for a Workspace (sealed as the engine does).
		home := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "someones-home", Namespace: "default"},
			Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
		Expect(suite.Client.Create(suite.Ctx, home)).To(Succeed())
		home.Annotations = map[string]string{proof.Annotation: suite.Env.Proof.Seal(proof.Object{GroupKind: schema.GroupKind{Kind: "PersistentVolumeClaim"},
			Namespace: "default", Name: home.Name, UID: string(home.UID)}, proof.Retained("Workspace/home/owner=alice/home"))}
		Expect(suite.Client.Update(suite.Ctx, home)).To(Succeed())
		err = gina.Create(suite.Ctx, restrictedPodSetJSON("gina", `{"template":{"spec":{"serviceAccountName":"deployer",
			"volumes":[{"name":"c","csi":{"driver":"secrets-store.csi.k8s.io","nodePublishSecretRef":{"name":"vault-token"}}},
			           {"name":"h","persistentVolumeClaim":{"claimName":"someones-home"}}],
			"containers":[{"name":"app","image":"nginx"}]}}}`))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
		Expect(causes(err)).To(ConsistOf("spec.template.spec.serviceAccountName", "spec.template.spec.volumes[0].csi.nodePublishSecretRef.name",
			"spec.template.spec.volumes[0].csi", "spec.template.spec.volumes[1].persistentVolumeClaim.claimName"))
	})

	It("should take the right to create claims for an ephemeral volume that binds a volume that exists, and not for a new volume of a class", func() {
		kate, err := suite.Env.As(suite.Ctx, "kate", "default", podSets)
		Expect(err).NotTo(HaveOccurred())
		volume := func(name, claim string) string {
			return `{"name":"` + name + `","ephemeral":{"volumeClaimTemplate":{"spec":{"accessModes":["ReadWriteOnce"],
				"resources":{"requests":{"storage":"1Gi"}}` + claim + `}}}}`
		}
		spec := func(volumes ...string) string {
			return `{"template":{"spec":{"containers":[{"name":"app","image":"nginx"}],"volumes":[` + strings.Join(volumes, ",") + `]}}}`
		}
		err = kate.Create(suite.Ctx, restrictedPodSetJSON("kates", spec(volume("a", `,"volumeName":"team-b-data"`),
			volume("b", `,"selector":{"matchLabels":{"team":"b"}}`), volume("c", `,"storageClassName":""`))))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
		const vct = "spec.template.spec.volumes[%d].ephemeral.volumeClaimTemplate.spec."
		Expect(causes(err)).To(ConsistOf(fmt.Sprintf(vct, 0)+"volumeName", fmt.Sprintf(vct, 1)+"selector", fmt.Sprintf(vct, 2)+"storageClassName"))
		Expect(err.Error()).To(ContainSubstring("create persistentvolumeclaims"))
		Expect(kate.Create(suite.Ctx, restrictedPodSetJSON("kates", spec(volume("a", `,"storageClassName":"fast"`), volume("b", ""))))).
			To(Succeed(), "a new volume of a class, or of the default class, is anyone's")

		leo, err := suite.Env.As(suite.Ctx, "leo", "default", podSets,
			rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims"}, Verbs: []string{"create"}})
		Expect(err).NotTo(HaveOccurred())
		Expect(leo.Create(suite.Ctx, restrictedPodSetJSON("leos", spec(volume("a", `,"volumeName":"team-b-data"`))))).
			To(Succeed(), "who may create claims may choose the volume one binds")
	})

	It("should take the right to create claims for the legacy class annotation set to \"\" in an ephemeral claim template", func() {
		lena, err := suite.Env.As(suite.Ctx, "lena", "default", podSets)
		Expect(err).NotTo(HaveOccurred())
		err = lena.Create(suite.Ctx, restrictedPodSetJSON("lenas", `{"template":{"spec":{"containers":[{"name":"app","image":"nginx"}],
			"volumes":[{"name":"a","ephemeral":{"volumeClaimTemplate":{"metadata":{"annotations":{"volume.beta.kubernetes.io/storage-class":""}},
			"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}}}]}}}`))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
		Expect(causes(err)).To(ConsistOf("spec.template.spec.volumes[0].ephemeral.volumeClaimTemplate.metadata.annotations[volume.beta.kubernetes.io/storage-class]"))
		Expect(err.Error()).To(ContainSubstring("create persistentvolumeclaims"))
	})

	It("should take the right to create pods for a volume that mounts storage with no claim (inline csi, nfs, hostPath), and not for emptyDir or a ConfigMap", func() {
		mia, err := suite.Env.As(suite.Ctx, "mia", "default", podSets)
		Expect(err).NotTo(HaveOccurred())
		spec := func(volumes string) string {
			return `{"template":{"spec":{"containers":[{"name":"app","image":"nginx"}],"volumes":[` + volumes + `]}}}`
		}
		err = mia.Create(suite.Ctx, restrictedPodSetJSON("mias", spec(`{"name":"share","csi":{"driver":"nfs.csi.k8s.io","volumeAttributes":{"server":"nfs.team-b","share":"/exports/b"}}},
			{"name":"nfs","nfs":{"server":"nfs.team-b","path":"/"}},{"name":"host","hostPath":{"path":"/var/lib"}}`)))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
		Expect(causes(err)).To(ConsistOf("spec.template.spec.volumes[0].csi", "spec.template.spec.volumes[1].nfs", "spec.template.spec.volumes[2].hostPath",
			"spec.template.spec"), "and a hostPath volume is below Pod Security's restricted level")
		Expect(err.Error()).To(ContainSubstring("may not create pods"))
		Expect(mia.Create(suite.Ctx, restrictedPodSetJSON("mias", spec(`{"name":"scratch","emptyDir":{}},{"name":"info","downwardAPI":{"items":[]}}`)))).
			To(Succeed(), "volumes that mount no storage that exists are anyone's")

		noah, err := suite.Env.As(suite.Ctx, "noah", "default", podSets,
			rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"create"}})
		Expect(err).NotTo(HaveOccurred())
		Expect(noah.Create(suite.Ctx, restrictedPodSetJSON("noahs", spec(`{"name":"share","csi":{"driver":"nfs.csi.k8s.io","volumeAttributes":{"share":"/exports/b"}}}`)))).
			To(Succeed(), "who may create pods may mount what a pod may")
	})

	It("should take the right to use the level a template below Pod Security's restricted level passes: baseline (which privileged grants too), or privileged", func() {
		uma, err := suite.Env.As(suite.Ctx, "uma", "default", podSets)
		Expect(err).NotTo(HaveOccurred())
		asItsImageSays := `{"template":{"spec":{"containers":[{"name":"app","image":"nginx"}]}}}`
		privileged := `{"template":{"spec":{"hostPID":true,"containers":[{"name":"app","image":"nginx","securityContext":{"privileged":true}}]}}}`
		err = uma.Create(suite.Ctx, podSetJSON("umas", asItsImageSays))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
		Expect(causes(err)).To(ConsistOf("spec.template.spec"))
		Expect(err.Error()).To(And(ContainSubstring("may not use podsecuritylevels/baseline or /privileged in default (group kubeforge.io)"),
			ContainSubstring("restricted forbids"), ContainSubstring("runAsNonRoot")))
		err = uma.Create(suite.Ctx, podSetJSON("umas", privileged))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
		Expect(err.Error()).To(ContainSubstring("may not use podsecuritylevels/privileged"))
		Expect(uma.Create(suite.Ctx, restrictedPodSetJSON("umas", asItsImageSays))).To(Succeed(), "a restricted template is anyone's")

		level := func(name string) rbacv1.PolicyRule {
			return rbacv1.PolicyRule{APIGroups: []string{"kubeforge.io"}, Resources: []string{"podsecuritylevels"}, ResourceNames: []string{name}, Verbs: []string{"use"}}
		}
		vic, err := suite.Env.As(suite.Ctx, "vic", "default", podSets, level("baseline"))
		Expect(err).NotTo(HaveOccurred())
		Expect(vic.Create(suite.Ctx, podSetJSON("vics", asItsImageSays))).To(Succeed(), "granted baseline")
		err = vic.Create(suite.Ctx, podSetJSON("vics-privileged", privileged))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "baseline is not privileged: want 422 Invalid, got %v", err)
		Expect(err.Error()).To(ContainSubstring("may not use podsecuritylevels/privileged"))
		wes, err := suite.Env.As(suite.Ctx, "wes", "default", podSets, level("privileged"))
		Expect(err).NotTo(HaveOccurred())
		Expect(wes.Create(suite.Ctx, podSetJSON("wes", privileged))).To(Succeed(), "granted privileged")
		Expect(wes.Create(suite.Ctx, podSetJSON("wes-baseline", asItsImageSays))).To(Succeed(), "privileged grants baseline too")
	})

	It("should take get and the right to create pods for a claim restored from a VolumeSnapshot, as for mounting the claim", func() {
		snapshots := rbacv1.PolicyRule{APIGroups: []string{"snapshot.storage.k8s.io"}, Resources: []string{"volumesnapshots"}, Verbs: []string{"get"}}
		spec := `{"template":{"spec":{"containers":[{"name":"app","image":"nginx"}],"volumes":[{"name":"a","ephemeral":{"volumeClaimTemplate":{
			"spec":{"accessModes":["ReadWriteOnce"],"storageClassName":"fast","resources":{"requests":{"storage":"1Gi"}},
			"dataSource":{"apiGroup":"snapshot.storage.k8s.io","kind":"VolumeSnapshot","name":"team-b-snap"}}}}}]}}}`
		olga, err := suite.Env.As(suite.Ctx, "olga", "default", podSets, snapshots)
		Expect(err).NotTo(HaveOccurred())
		err = olga.Create(suite.Ctx, restrictedPodSetJSON("olgas", spec))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
		Expect(err.Error()).To(ContainSubstring("create pods in default, which restoring the VolumeSnapshot team-b-snap"))
		pia, err := suite.Env.As(suite.Ctx, "pia", "default", podSets, snapshots,
			rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"create"}})
		Expect(err).NotTo(HaveOccurred())
		Expect(pia.Create(suite.Ctx, restrictedPodSetJSON("pias", spec))).To(Succeed())
	})

	It("should refuse a Platform hook's Secret, an Ingress and a LoadBalancer the requester may not have", func() {
		hank, err := suite.Env.As(suite.Ctx, "hank", "default", podSets)
		Expect(err).NotTo(HaveOccurred())
		p, err := testenv.Object("apps.kubeforge.io/v1alpha1", "Platform", "default", "hanks", `{"imageRepository":"r.example.com/a","version":"1",
			"components":[{"name":"api","ports":[{"name":"http","port":8080}],"service":{"type":"LoadBalancer"},"ingress":{"host":"api.example.com"},
			  "hooks":{"bootstrap":{"env":[{"name":"T","valueFrom":{"secretKeyRef":{"name":"db-root","key":"p"}}}]}}}]}`)
		Expect(err).NotTo(HaveOccurred())
		err = hank.Create(suite.Ctx, p)
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
		Expect(causes(err)).To(ConsistOf("spec.components[0].hooks.bootstrap.env[0].valueFrom.secretKeyRef.name",
			"spec.components[0].service.type", "spec.components[0].ingress.host"))
	})

	It("should record the requester as the owner, and a named owner only for a requester who may impersonate them", func() {
		ivan, err := suite.Env.As(suite.Ctx, "ivan", "default", podSets)
		Expect(err).NotTo(HaveOccurred())
		mine := restrictedPodSetJSON("ivans", `{"template":{"spec":{"containers":[{"name":"app","image":"nginx"}]}}}`)
		Expect(ivan.Create(suite.Ctx, mine)).To(Succeed())
		Expect(mine.GetAnnotations()).To(And(HaveKeyWithValue(proof.OwnerAnnotation, "ivan"), HaveKeyWithValue(proof.CreatedByAnnotation, "ivan")))
		theirs := restrictedPodSetJSON("for-judy", `{"template":{"spec":{"containers":[{"name":"app","image":"nginx"}]}}}`)
		theirs.SetAnnotations(map[string]string{proof.OwnerAnnotation: "judy"})
		err = ivan.Create(suite.Ctx, theirs.DeepCopy())
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
		Expect(err.Error()).To(ContainSubstring("ivan may not impersonate judy"))
		gitops, err := suite.Env.As(suite.Ctx, "gitops", "default", podSets)
		Expect(err).NotTo(HaveOccurred())
		Expect(suite.Client.Create(suite.Ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "impersonate-judy"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"users"}, ResourceNames: []string{"judy"}, Verbs: []string{"impersonate"}}}})).To(Succeed())
		Expect(suite.Client.Create(suite.Ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "gitops-judy"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "impersonate-judy"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "gitops"}}})).To(Succeed())
		Eventually(func() error { return gitops.Create(suite.Ctx, theirs.DeepCopy()) }).Should(Succeed())
		got := podSetJSON("for-judy", "{}")
		Expect(suite.Client.Get(suite.Ctx, client.ObjectKeyFromObject(got), got)).To(Succeed())
		Expect(got.GetAnnotations()).To(And(HaveKeyWithValue(proof.OwnerAnnotation, "judy"), HaveKeyWithValue(proof.CreatedByAnnotation, "gitops")))
	})
})

// takeAwayWebhookConfigurations deletes every webhook configuration of
// kind for the rest of the spec; at its end they are created again, and
// back reports when the API server calls them again.
func takeAwayWebhookConfigurations(kind string, back func() bool) {
	GinkgoHelper()
	hooks := &unstructured.UnstructuredList{}
	hooks.SetGroupVersionKind(admissionregistrationv1.SchemeGroupVersion.WithKind(kind + "List"))
	Expect(suite.Client.List(suite.Ctx, hooks)).To(Succeed())
	Expect(hooks.Items).NotTo(BeEmpty())
	for i := range hooks.Items {
		Expect(suite.Client.Delete(suite.Ctx, hooks.Items[i].DeepCopy())).To(Succeed())
	}
	DeferCleanup(func() {
		for _, h := range hooks.Items {
			h.SetResourceVersion("")
			h.SetUID("")
			h.SetManagedFields(nil)
			h.SetCreationTimestamp(metav1.Time{})
			Expect(suite.Client.Create(suite.Ctx, &h)).To(Succeed())
		}
		Eventually(back).Should(BeTrue())
	})
}
