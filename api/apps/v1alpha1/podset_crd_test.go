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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/test/testenv"
)

// podSetJSON builds a PodSet as raw JSON, so that the tests can send what
// a typed client could not (bad quantities, for one).
func podSetJSON(name, spec string) *unstructured.Unstructured {
	u, err := testenv.Object("apps.kubeforge.io/v1alpha1", "PodSet", "default", name, spec)
	Expect(err).NotTo(HaveOccurred())
	return u
}

const goodTemplate = `{"spec":{"containers":[{"name":"app","image":"nginx"}]}}`

var _ = Describe("PodSet CRD", func() {
	Context("When the webhook is not installed", func() {
		DescribeTable("should reject bad input with the schema and CEL rules",
			func(name, spec, wantField, wantMessage string) {
				err := k8sClient.Create(ctx, podSetJSON(name, spec))
				Expect(err).To(HaveOccurred())
				Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
				Expect(err.Error()).To(ContainSubstring(wantField))
				Expect(err.Error()).To(ContainSubstring(wantMessage))
			},
			Entry("a template without containers", "no-containers",
				`{"template":{"spec":{"containers":[]}}}`,
				"spec.template", "template.spec.containers must list at least one container"),
			Entry("the operator's selector label in the template", "reserved-label",
				`{"template":{"metadata":{"labels":{"apps.kubeforge.io/podset":"x"}},"spec":{"containers":[{"name":"app","image":"nginx"}]}}}`,
				"spec.template", "the label apps.kubeforge.io/podset is set by the operator"),
			Entry("more than 10000 replicas", "too-many",
				`{"replicas":10001,"template":`+goodTemplate+`}`,
				"spec.replicas", "less than or equal to 10000"),
			Entry("negative replicas", "negative",
				`{"replicas":-1,"template":`+goodTemplate+`}`,
				"spec.replicas", "greater than or equal to 0"),
			Entry("a resource quantity that does not parse", "bad-quantity",
				`{"template":{"spec":{"containers":[{"name":"app","image":"nginx","resources":{"requests":{"cpu":"abc"}}}]}}}`,
				"spec.template.spec.containers[0].resources.requests.cpu", "should match"),
			Entry("duplicate container names", "duplicate",
				`{"template":{"spec":{"containers":[{"name":"app","image":"a"},{"name":"app","image":"b"}]}}}`,
				"spec.template.spec.containers[1]", "Duplicate value"),
			Entry("no template", "no-template", `{"replicas":1}`, "spec.template", "Required value"),
		)

		It("should accept a valid PodSet and default replicas to 1", func() {
			u := podSetJSON("valid", `{"template":`+goodTemplate+`}`)
			Expect(k8sClient.Create(ctx, u)).To(Succeed())
			ps := &appsv1alpha1.PodSet{}
			Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(u), ps)).To(Succeed())
			Expect(ps.Spec.Replicas).NotTo(BeNil())
			Expect(*ps.Spec.Replicas).To(Equal(int32(1)))
			Expect(ps.Spec.Template.Spec.Containers).To(HaveLen(1))
		})

		It("should keep the template's labels (embedded metadata is not pruned)", func() {
			u := podSetJSON("labelled", `{"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"app","image":"nginx"}]}}}`)
			Expect(k8sClient.Create(ctx, u)).To(Succeed())
			ps := &appsv1alpha1.PodSet{}
			Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(u), ps)).To(Succeed())
			Expect(ps.Spec.Template.Labels).To(HaveKeyWithValue("app", "web"))
		})
	})
})
