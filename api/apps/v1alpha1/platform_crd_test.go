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
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubeforge/kubeforge/internal/test/testenv"
)

var _ = Describe("Platform CRD", func() {
	Context("When the webhook is not installed", func() {
		DescribeTable("should keep the database server's engine and host with CEL rules",
			func(name, patch, wantField, wantMessage string) {
				u, err := testenv.Object("apps.kubeforge.io/v1alpha1", "Platform", "default", name,
					`{"imageRepository":"r","version":"1","database":{"engine":"mysql","host":"db.example.com","adminSecretRef":{"name":"a"}},"components":[{"name":"api"}]}`)
				Expect(err).NotTo(HaveOccurred())
				Expect(k8sClient.Create(ctx, u)).To(Succeed())
				err = k8sClient.Patch(ctx, u, client.RawPatch(types.JSONPatchType, []byte(patch)))
				Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
				Expect(err.Error()).To(ContainSubstring(wantField))
				Expect(err.Error()).To(ContainSubstring(wantMessage))
			},
			Entry("engine", "cel-engine", `[{"op":"replace","path":"/spec/database/engine","value":"postgresql"}]`, "spec.database.engine", "database.engine cannot change"),
			Entry("host", "cel-host", `[{"op":"replace","path":"/spec/database/host","value":"other"}]`, "spec.database.host", "database.host cannot change"),
		)
	})
})
