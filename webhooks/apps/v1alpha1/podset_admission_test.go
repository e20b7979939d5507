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

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/test/testenv"
)

func podSetJSON(name, spec string) *unstructured.Unstructured {
	u, err := testenv.Object("apps.kubeforge.io/v1alpha1", "PodSet", "default", name, spec)
	Expect(err).NotTo(HaveOccurred())
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
		It("should call the mutating and validating webhooks on create and update", func() {
			mBefore, vBefore := webhookRequests(mutatePath), webhookRequests(validatePath)
			u := podSetJSON("called", `{"template":{"spec":{"containers":[{"name":"app","image":"nginx"}]}}}`)
			Expect(suite.Client.Create(suite.Ctx, u)).To(Succeed())
			ps := &appsv1alpha1.PodSet{}
			Expect(suite.Client.Get(suite.Ctx, client.ObjectKeyFromObject(u), ps)).To(Succeed())
			Expect(*ps.Spec.Replicas).To(Equal(int32(1)))
			ps.Spec.Replicas = new(int32(4))
			Expect(suite.Client.Update(suite.Ctx, ps)).To(Succeed())
			Expect(webhookRequests(mutatePath) - mBefore).To(BeNumerically(">=", 2))
			Expect(webhookRequests(validatePath) - vBefore).To(BeNumerically(">=", 2))
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
		err = dave.Create(suite.Ctx, podSetJSON("dave-mounts", `{"template":{"spec":{
			"volumes":[{"name":"s","secret":{"secretName":"db-root"}}],
			"containers":[{"name":"app","image":"nginx","env":[{"name":"T","valueFrom":{"secretKeyRef":{"name":"api-token","key":"t"}}}]}]}}}`))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
		Expect(causes(err)).To(ConsistOf("spec.template.spec.volumes[0].secret.secretName",
			"spec.template.spec.containers[0].env[0].valueFrom.secretKeyRef.name"))
		Expect(dave.Create(suite.Ctx, podSetJSON("dave-plain", `{"template":{"spec":{"containers":[{"name":"app","image":"nginx"}]}}}`))).To(Succeed())
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
})
