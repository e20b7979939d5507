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
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/test/testenv"
)

func workspaceJSON(name, spec string) *unstructured.Unstructured {
	u, err := testenv.Object("ide.kubeforge.io/v1alpha1", "Workspace", "default", name, spec)
	Expect(err).NotTo(HaveOccurred())
	return u
}

func webhookRequests(path string) float64 {
	n, err := testenv.WebhookRequests(path)
	Expect(err).NotTo(HaveOccurred())
	return n
}

const (
	mutatePath   = "/mutate-ide-kubeforge-io-v1alpha1-workspace"
	validatePath = "/validate-ide-kubeforge-io-v1alpha1-workspace"
	denied       = `admission webhook "vworkspace-v1alpha1.kubeforge.io" denied the request`
)

var _ = Describe("Workspace webhooks", func() {
	It("should fill in the defaults and record the user as a label, stamped by the mutating webhook without a validating call", func() {
		mBefore, vBefore := webhookRequests(mutatePath), webhookRequests(validatePath)
		u := workspaceJSON("defaults", `{"user":"alice"}`)
		Expect(suite.Client.Create(suite.Ctx, u)).To(Succeed())
		ws := &idev1alpha1.Workspace{}
		Expect(suite.Client.Get(suite.Ctx, client.ObjectKeyFromObject(u), ws)).To(Succeed())
		Expect(ws.Spec.Image).To(Equal(idev1alpha1.WorkspaceDefaultImage))
		Expect(ws.Spec.Port).To(Equal(int32(8080)))
		Expect(*ws.Spec.Started).To(BeTrue())
		Expect(ws.Spec.Storage.Size.String()).To(Equal("10Gi"))
		Expect(ws.Spec.Storage.MountPath).To(Equal("/home/coder"))
		Expect(ws.Spec.Storage.ReclaimPolicy).To(Equal(idev1alpha1.ReclaimDelete))
		Expect(ws.Spec.Auth.Mode).To(Equal(idev1alpha1.AuthPassword), "a login by default")
		Expect(ws.Spec.HealthPath).To(Equal("/healthz"))
		Expect(ws.Labels).To(HaveKeyWithValue(idev1alpha1.UserLabel, "alice"))
		Expect(webhookRequests(mutatePath) - mBefore).To(BeNumerically(">=", 1))
		Expect(webhookRequests(validatePath)-vBefore).To(BeZero(), "its matchConditions leave out what the mutating webhook stamped")

		By("the user label changed alone, as a metadata-only update: the mutating webhook is called and writes it back")
		Expect(suite.Client.Patch(suite.Ctx, ws.DeepCopy(), client.RawPatch(types.MergePatchType,
			[]byte(`{"metadata":{"labels":{"ide.kubeforge.io/user":"bob"}}}`)))).To(Succeed())
		Expect(suite.Client.Get(suite.Ctx, client.ObjectKeyFromObject(u), ws)).To(Succeed())
		Expect(ws.Labels).To(HaveKeyWithValue(idev1alpha1.UserLabel, "alice"))

		list := &idev1alpha1.WorkspaceList{}
		Expect(suite.Client.List(suite.Ctx, list, client.MatchingLabels{idev1alpha1.UserLabel: "alice"})).To(Succeed())
		Expect(list.Items).To(HaveLen(1))
	})

	DescribeTable("should reject bad input with field errors",
		func(name, spec string, fields ...string) {
			err := suite.Client.Create(suite.Ctx, workspaceJSON(name, spec))
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
			Expect(err.Error()).To(ContainSubstring(denied))
			Expect(testenv.Causes(err)).To(ConsistOf(fields))
		},
		Entry("a user that is no label value", "bad-user", `{"user":"alice smith"}`, "spec.user"),
		Entry("an env var named PORT", "port-env", `{"env":[{"name":"PORT","value":"1"}]}`, "spec.env[0].name"),
		Entry("an env var that would replace the password's hash", "hash-env", `{"env":[{"name":"HASHED_PASSWORD","value":"x"}]}`, "spec.env[0].name"),
		Entry("a mount path that is not clean", "bad-mount", `{"storage":{"mountPath":"/home/../etc"}}`, "spec.storage.mountPath"),
		Entry("a name too long for its derived names", "a-name-that-is-far-too-long-for-a-workspace-because-of-home", `{}`, "metadata.name"),
		Entry("a request above its limit", "over-limit", `{"resources":{"requests":{"cpu":"2"},"limits":{"cpu":"1"}}}`, "spec.resources.requests[cpu]"),
		Entry("an ingress host that is no DNS name", "bad-host", `{"ingress":{"host":"Not A Host"}}`, "spec.ingress.host"),
	)

	It("should name the field of a CPU quantity that does not parse, never reaching the reconciler", func() {
		err := suite.Client.Create(suite.Ctx, workspaceJSON("bad-cpu", `{"resources":{"limits":{"cpu":"two cores"}}}`))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
		Expect(testenv.Causes(err)).To(ConsistOf("spec.resources.limits[cpu]"))
	})

	It("should reject port 65536 in the schema, and take port 0 as the default", func() {
		err := suite.Client.Create(suite.Ctx, workspaceJSON("port-high", `{"port":65536}`))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
		Expect(err.Error()).To(ContainSubstring("spec.port"))

		u := workspaceJSON("port-zero", `{"port":0}`)
		Expect(suite.Client.Create(suite.Ctx, u)).To(Succeed())
		ws := &idev1alpha1.Workspace{}
		Expect(suite.Client.Get(suite.Ctx, client.ObjectKeyFromObject(u), ws)).To(Succeed())
		Expect(ws.Spec.Port).To(Equal(int32(8080)))
	})

	DescribeTable("should keep the home volume's size, class and mount path",
		func(name, patch, message string) {
			u := workspaceJSON(name, `{"storage":{"size":"5Gi","storageClassName":"standard"}}`)
			Expect(suite.Client.Create(suite.Ctx, u)).To(Succeed())
			err := suite.Client.Patch(suite.Ctx, u, client.RawPatch(types.MergePatchType, []byte(patch)))
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
			Expect(err.Error()).To(ContainSubstring(message))
			ws := &idev1alpha1.Workspace{}
			Expect(suite.Client.Get(suite.Ctx, client.ObjectKeyFromObject(u), ws)).To(Succeed())
			Expect(ws.Spec.Storage.Size.String()).To(Equal("5Gi"))
			Expect(*ws.Spec.Storage.StorageClassName).To(Equal("standard"))
			Expect(ws.Spec.Storage.MountPath).To(Equal("/home/coder"))
		},
		Entry("size", "grow", `{"spec":{"storage":{"size":"20Gi"}}}`, "storage.size cannot change"),
		Entry("storage class", "reclass", `{"spec":{"storage":{"storageClassName":"fast"}}}`, "storage.storageClassName cannot change"),
		Entry("mount path", "remount", `{"spec":{"storage":{"mountPath":"/data"}}}`, "storage.mountPath cannot change"),
	)

	It("should let a workspace be stopped and started", func() {
		u := workspaceJSON("toggle", `{}`)
		Expect(suite.Client.Create(suite.Ctx, u)).To(Succeed())
		Expect(suite.Client.Patch(suite.Ctx, u, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"started":false}}`)))).To(Succeed())
	})
})

var _ = Describe("Workspace webhooks and the requester's rights", func() {
	workspaces := rbacv1.PolicyRule{APIGroups: []string{"ide.kubeforge.io"}, Resources: []string{"workspaces"}, Verbs: []string{"create", "get", "update", "patch"}}

	It("should let only someone who may use the owner's home and password change another person's Workspace beyond starting and stopping it", func() {
		kim, err := suite.Env.As(suite.Ctx, "kim", "default", workspaces)
		Expect(err).NotTo(HaveOccurred())
		kims := workspaceJSON("kims", `{"user":"kim"}`)
		Expect(kim.Create(suite.Ctx, kims)).To(Succeed())
		Expect(kims.GetAnnotations()).To(HaveKeyWithValue("kubeforge.io/owner", "kim"))
		Expect(kim.Patch(suite.Ctx, kims.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"image":"registry.example.com/my-ide:2"}}`)))).
			To(Succeed(), "the owner changes their own Workspace")

		lee, err := suite.Env.As(suite.Ctx, "lee", "default", workspaces)
		Expect(err).NotTo(HaveOccurred())
		err = lee.Patch(suite.Ctx, kims.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"image":"registry.example.com/steal:1"}}`)))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
		Expect(err.Error()).To(And(ContainSubstring("lee may not get the Secret kims-auth"), ContainSubstring("kims-home")))
		Expect(lee.Patch(suite.Ctx, kims.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"started":false}}`)))).
			To(Succeed(), "stopping is harmless")
	})

	It("should refuse an Ingress to an IDE without a password unless the administrator allows it", func() {
		err := suite.Client.Create(suite.Ctx, workspaceJSON("open", `{"auth":{"mode":"None"},"ingress":{"host":"open.example.com"}}`))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
		Expect(testenv.Causes(err)).To(ContainElement("spec.ingress"))
	})
})
