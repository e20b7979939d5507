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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/admit"
	"github.com/kubeforge/kubeforge/internal/proof"
	"github.com/kubeforge/kubeforge/internal/test/testenv"
)

// These specs run the API server with the CRDs and kubeforge's
// ValidatingAdmissionPolicies, and no webhook at all: what they refuse,
// the API server refuses by itself.

var (
	env  *testenv.Env
	ctx  = context.Background()
	made int
)

func TestPolicies(t *testing.T) {
	testenv.Run(t, testenv.Suite{
		Name:    "kubeforge's admission policies (no webhooks)",
		Options: testenv.Options{CRDs: true},
		Setup: func(ctx context.Context, e *testenv.Env) error {
			env = e
			_, err := admit.EnsurePolicies(ctx, e.Client)
			return err
		},
	})
}

const ns = "default"

func object(apiVersion, kind, name, spec string) *unstructured.Unstructured {
	u, err := testenv.Object(apiVersion, kind, ns, name, spec)
	Expect(err).NotTo(HaveOccurred())
	return u
}

// refused expects err to be a references policy's refusal saying what.
func refused(err error, what string) {
	GinkgoHelper()
	Expect(apierrors.IsForbidden(err) || apierrors.IsInvalid(err)).To(BeTrue(), "want the policy's refusal, got %v", err)
	Expect(err.Error()).To(ContainSubstring("ValidatingAdmissionPolicy 'kubeforge-references-"))
	Expect(err.Error()).To(ContainSubstring(what))
}

var _ = Describe("The references policies", Ordered, func() {
	var mallory client.Client
	kinds := []string{"podsets", "platforms", "balancers", "workspaces", "kubernetesclusters"}

	BeforeAll(func() {
		for _, name := range []string{"malloryssecret", "alicessecret"} {
			Expect(env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})).To(Succeed())
		}
		var err error
		mallory, err = env.As(ctx, "mallory", ns,
			rbacv1.PolicyRule{APIGroups: []string{"apps.kubeforge.io", "networking.kubeforge.io", "ide.kubeforge.io", "cluster.kubeforge.io"},
				Resources: kinds, Verbs: []string{"create", "get", "update", "patch"}},
			rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"malloryssecret"}, Verbs: []string{"get"}})
		Expect(err).NotTo(HaveOccurred())
		// The API server loads the policies a moment after they are made.
		Eventually(func() error {
			return mallory.Create(ctx, object("apps.kubeforge.io/v1alpha1", "PodSet", "probe",
				`{"template":{"spec":{"containers":[{"name":"app","image":"nginx","env":[{"name":"X","valueFrom":{"secretKeyRef":{"name":"alicessecret","key":"k"}}}]}]}}}`))
		}).Should(MatchError(ContainSubstring("ValidatingAdmissionPolicy")), "the policies never took effect")
	})

	DescribeTable("should refuse a reference the requester may not use and admit one they may, without any webhook",
		func(apiVersion, kind, field, spec string) {
			made++
			name := fmt.Sprintf("refs-%s-%d", kindName(kind), made)
			// The API server loads each kind's policy a moment after it is
			// made (the suite's first probe waited for the PodSet's only).
			Eventually(func() error {
				return mallory.Create(ctx, object(apiVersion, kind, name, fmt.Sprintf(spec, "alicessecret")), client.DryRunAll)
			}).Should(MatchError(ContainSubstring("ValidatingAdmissionPolicy")), "the %s policy never took effect", kind)
			refused(mallory.Create(ctx, object(apiVersion, kind, name, fmt.Sprintf(spec, "alicessecret"))), "mallory may not have kubeforge use the Secret alicessecret")
			Expect(mallory.Create(ctx, object(apiVersion, kind, name, fmt.Sprintf(spec, "malloryssecret")))).To(Succeed())
		},
		Entry("a PodSet's container env", "apps.kubeforge.io/v1alpha1", "PodSet", "spec.template.spec.containers[*].env[*].valueFrom.secretKeyRef.name",
			`{"template":{"spec":{"containers":[{"name":"app","image":"nginx","env":[{"name":"X","valueFrom":{"secretKeyRef":{"name":%q,"key":"k"}}}]}]}}}`),
		Entry("a PodSet's volume", "apps.kubeforge.io/v1alpha1", "PodSet", "spec.template.spec.volumes[*].secret.secretName",
			`{"template":{"spec":{"containers":[{"name":"app","image":"nginx"}],"volumes":[{"name":"v","secret":{"secretName":%q}}]}}}`),
		Entry("a Platform component's bootstrap hook env", "apps.kubeforge.io/v1alpha1", "Platform", "spec.components[*].hooks.bootstrap.env[*].valueFrom.secretKeyRef.name",
			`{"imageRepository":"r.example.com/a","version":"1","components":[{"name":"api","hooks":{"bootstrap":{"command":["true"],"env":[{"name":"X","valueFrom":{"secretKeyRef":{"name":%q,"key":"k"}}}]}}}]}`),
		Entry("a Platform's database admin Secret", "apps.kubeforge.io/v1alpha1", "Platform", "spec.database.adminSecretRef.name",
			`{"imageRepository":"r.example.com/a","version":"1","database":{"engine":"mysql","host":"db.example.com","adminSecretRef":{"name":%q}},"components":[{"name":"api"}]}`),
		Entry("a Workspace's env", "ide.kubeforge.io/v1alpha1", "Workspace", "spec.env[*].valueFrom.secretKeyRef.name",
			`{"user":"mallory","env":[{"name":"X","valueFrom":{"secretKeyRef":{"name":%q,"key":"k"}}}]}`),
		Entry("a KubernetesCluster's SSH key", "cluster.kubeforge.io/v1alpha1", "KubernetesCluster", "spec.sshSecretRef.name",
			`{"version":"v1.31.4","masters":[{"address":"10.0.0.10"}],"sshSecretRef":{"name":%q}}`),
	)

	It("should refuse a ServiceAccount the requester may neither run pods as nor impersonate, and admit default", func() {
		spec := `{"template":{"spec":{"serviceAccountName":%q,"containers":[{"name":"app","image":"nginx"}]}}}`
		err := mallory.Create(ctx, object("apps.kubeforge.io/v1alpha1", "PodSet", "sa", fmt.Sprintf(spec, "deployer")))
		refused(err, "mallory may not have kubeforge use the ServiceAccount deployer")
		Expect(err.Error()).To(ContainSubstring("ValidatingAdmissionPolicy '" + admit.ReferencePolicyName("podsets") + "'"))
		Expect(mallory.Create(ctx, object("apps.kubeforge.io/v1alpha1", "PodSet", "sa", fmt.Sprintf(spec, "default")))).To(Succeed())
	})

	It("should leave out only a create stamped for its requester and an update stamped over the object it changes, which only the mutating webhook's checks make count, and check another's or an older stamp written back", func() {
		naming := `{"template":{"spec":{"containers":[{"name":"app","image":%q,"env":[{"name":"X","valueFrom":{"secretKeyRef":{"name":"alicessecret","key":"k"}}}]}]}}}`
		stamped := func(name, image, over string) *unstructured.Unstructured {
			u := object("apps.kubeforge.io/v1alpha1", "PodSet", name, fmt.Sprintf(naming, image))
			u.SetAnnotations(map[string]string{admit.StampAnnotation: "forged", admit.StampedOverAnnotation: over})
			return u
		}
		By("a create whose stamp does not record its requester as the creator is checked")
		refused(mallory.Create(ctx, stamped("forged-create", "nginx", "")), "mallory may not have kubeforge use the Secret alicessecret")

		By("a create stamped for its requester is the mutating webhook's to check; without it, that stamp verifies for nothing")
		own := stamped("forged-create", "nginx", "")
		own.SetAnnotations(map[string]string{admit.StampAnnotation: "forged", proof.CreatedByAnnotation: "mallory"})
		Expect(mallory.Create(ctx, own)).To(Succeed())
		created := &appsv1alpha1.PodSet{}
		Expect(env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "forged-create"}, created)).To(Succeed())
		_, err := admit.Prepare(admit.PodSet, env.Proof, created)
		var notAdmitted *admit.NotAdmittedError
		Expect(errors.As(err, &notAdmitted)).To(BeTrue(), "Prepare: %v", err)

		By("an update stamped over the stored object is the mutating webhook's to check")
		Expect(env.Client.Create(ctx, object("apps.kubeforge.io/v1alpha1", "PodSet", "forged", fmt.Sprintf(naming, "nginx")))).To(Succeed())
		stored := &appsv1alpha1.PodSet{}
		Expect(env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "forged"}, stored)).To(Succeed())
		update := func(image, over string) error {
			u := stamped("forged", image, over)
			u.SetResourceVersion("")
			raw, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": u.GetAnnotations()}, "spec": u.Object["spec"]})
			Expect(err).NotTo(HaveOccurred())
			return mallory.Patch(ctx, u, client.RawPatch(types.MergePatchType, raw))
		}
		refused(update("nginx:2", "1"), "mallory may not have kubeforge use the Secret alicessecret")
		Expect(update("nginx:3", stored.ResourceVersion)).To(Succeed(), "stamped over %s, the stored version", stored.ResourceVersion)

		By("without the mutating webhook, that stamp verifies for nothing: the reconcilers refuse the object")
		ps := &appsv1alpha1.PodSet{}
		Expect(env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "forged"}, ps)).To(Succeed())
		_, err = admit.Prepare(admit.PodSet, env.Proof, ps)
		Expect(errors.As(err, &notAdmitted)).To(BeTrue(), "Prepare: %v", err)

		By("a stamp written back over an older version is checked")
		refused(update("nginx:4", stored.ResourceVersion), "mallory may not have kubeforge use the Secret alicessecret")

		By("a stamp swapped in on its own, for the spec stored with a made-up one, is checked like the spec it approves")
		// A real stamp of this object and spec, made over an older version
		// (as the webhook made it then, for an admin).
		Expect(env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "forged"}, ps)).To(Succeed())
		older := ps.DeepCopy()
		older.ResourceVersion = stored.ResourceVersion
		Expect(admit.PodSet.Sign(env.Proof, older, "admin", time.Now())).To(Succeed())
		swap := func(stamp, over string) error {
			raw, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
				admit.StampAnnotation: stamp, admit.StampedOverAnnotation: over}}})
			Expect(err).NotTo(HaveOccurred())
			return mallory.Patch(ctx, ps.DeepCopy(), client.RawPatch(types.MergePatchType, raw))
		}
		refused(swap(older.Annotations[admit.StampAnnotation], stored.ResourceVersion),
			"mallory may not have kubeforge use the Secret alicessecret")
		By("...and claiming this update's version, it verifies for nothing")
		Expect(swap(older.Annotations[admit.StampAnnotation], ps.ResourceVersion)).To(Succeed())
		Expect(env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "forged"}, ps)).To(Succeed())
		_, err = admit.Prepare(admit.PodSet, env.Proof, ps)
		Expect(errors.As(err, &notAdmitted)).To(BeTrue(), "Prepare: %v", err)
	})

	It("should recheck every reference when someone else changes the spec, but not for a harmless field or metadata", func() {
		// alice's PodSet names her Secret (made by an admin here).
		Expect(env.Client.Create(ctx, object("apps.kubeforge.io/v1alpha1", "PodSet", "alices",
			`{"replicas":1,"template":{"spec":{"containers":[{"name":"app","image":"nginx","env":[{"name":"X","valueFrom":{"secretKeyRef":{"name":"alicessecret","key":"k"}}}]}]}}}`))).To(Succeed())
		key := types.NamespacedName{Namespace: ns, Name: "alices"}
		patch := func(p string) error {
			u := &unstructured.Unstructured{}
			u.SetAPIVersion("apps.kubeforge.io/v1alpha1")
			u.SetKind("PodSet")
			u.SetNamespace(key.Namespace)
			u.SetName(key.Name)
			return mallory.Patch(ctx, u, client.RawPatch(types.MergePatchType, []byte(p)))
		}
		Expect(patch(`{"spec":{"replicas":3}}`)).To(Succeed(), "replicas is harmless")
		Expect(patch(`{"metadata":{"labels":{"team":"x"}}}`)).To(Succeed(), "metadata is not the spec")
		refused(patch(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"mallory.example.com/exfiltrate","env":[{"name":"X","valueFrom":{"secretKeyRef":{"name":"alicessecret","key":"k"}}}]}]}}}}`),
			"the Secret alicessecret")
	})

	It("should check what kubeforge made for a Workspace (its home and password) when anyone but its owner changes it", func() {
		ws := func(name, owner string) *unstructured.Unstructured {
			u := object("ide.kubeforge.io/v1alpha1", "Workspace", name, `{"user":"someone","image":"codercom/code-server:4"}`)
			u.SetAnnotations(map[string]string{"kubeforge.io/owner": owner})
			Expect(env.Client.Create(ctx, u)).To(Succeed())
			return u
		}
		image := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"image":"mallory.example.com/exfiltrate"}}`))
		refused(mallory.Patch(ctx, ws("alices-ide", "alice"), image), "mallory may not have kubeforge use the Secret alices-ide-auth")
		Expect(mallory.Patch(ctx, ws("mallorys-ide", "mallory"), image)).To(Succeed(), "the owner changes her own")
		started := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"started":false}}`))
		Expect(mallory.Patch(ctx, ws("alices-other", "alice"), started)).To(Succeed(), "started is harmless")
	})

	It("should recheck a Platform's references when a command annotation or a component changes, not its replicas", func() {
		Expect(env.Client.Create(ctx, object("apps.kubeforge.io/v1alpha1", "Platform", "alices",
			`{"imageRepository":"r.example.com/a","version":"1","database":{"engine":"mysql","host":"db.example.com","adminSecretRef":{"name":"alicessecret"}},"components":[{"name":"api"}]}`))).To(Succeed())
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("apps.kubeforge.io/v1alpha1")
		u.SetKind("Platform")
		u.SetNamespace(ns)
		u.SetName("alices")
		refused(mallory.Patch(ctx, u, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"kubeforge.io/rotate-db-password":"api"}}}`))),
			"the Secret alicessecret")
		Expect(mallory.Patch(ctx, u.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"note":"hello"}}}`)))).To(Succeed())

		By("a component's replicas are harmless, its image is not")
		Expect(mallory.Patch(ctx, u.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"components":[{"name":"api","replicas":3}]}}`)))).To(Succeed())
		refused(mallory.Patch(ctx, u.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"components":[{"name":"api","replicas":3,"image":"mallory.example.com/exfiltrate"}]}}`))),
			"the Secret alicessecret")
	})
})

var _ = Describe("The references policies' bounds", Ordered, func() {
	It("should admit as many distinct references as it promises, each checked once, and refuse more with a message that says why", func() {
		sam, err := env.As(ctx, "sam", ns,
			rbacv1.PolicyRule{APIGroups: []string{"apps.kubeforge.io"}, Resources: []string{"podsets"}, Verbs: []string{"create"}},
			rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets", "persistentvolumeclaims"}, Verbs: []string{"get"}},
			rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"create"}})
		Expect(err).NotTo(HaveOccurred())
		podSet := func(name string, secrets, claims int) *unstructured.Unstructured {
			var env, volumes []string
			for i := range secrets {
				// Each Secret named twice: a name is checked once.
				for _, v := range []string{"A", "B"} {
					env = append(env, fmt.Sprintf(`{"name":"%s%d","valueFrom":{"secretKeyRef":{"name":"s%d","key":"k"}}}`, v, i, i))
				}
			}
			for i := range claims {
				volumes = append(volumes, fmt.Sprintf(`{"name":"v%d","persistentVolumeClaim":{"claimName":"c%d"}}`, i, i))
			}
			return object("apps.kubeforge.io/v1alpha1", "PodSet", name, fmt.Sprintf(
				`{"template":{"spec":{"containers":[{"name":"app","image":"nginx","env":[%s]},{"name":"side","image":"nginx","env":[%s]}],"volumes":[%s]}}}`,
				strings.Join(env, ","), strings.Join(env, ","), strings.Join(volumes, ",")))
		}
		// Ginkgo may run this container before the one whose BeforeAll
		// waits for the policies to take effect: wait for the refusal
		// first, so that the admission below is the policy's.
		Eventually(func(g Gomega) {
			err := sam.Create(ctx, podSet("too-many", admit.MaxPolicyReferences, 1))
			if err == nil {
				g.Expect(env.Client.Delete(ctx, podSet("too-many", 0, 0))).To(Succeed())
			}
			g.Expect(apierrors.IsForbidden(err) || apierrors.IsInvalid(err)).To(BeTrue(), "want the policy's refusal, got %v", err)
			g.Expect(err.Error()).To(ContainSubstring("ValidatingAdmissionPolicy 'kubeforge-references-"))
			g.Expect(err.Error()).To(ContainSubstring(fmt.Sprintf("names more than %d distinct", admit.MaxPolicyReferences)))
		}).Should(Succeed())
		Expect(sam.Create(ctx, podSet("many", admit.MaxPolicyReferences-2, 2))).To(Succeed(),
			"%d Secrets named four times each and 2 claims: within the CEL budget", admit.MaxPolicyReferences-2)
	})
})

func kindName(kind string) string {
	out := []byte{}
	for _, r := range kind {
		if r >= 'A' && r <= 'Z' {
			r += 'a' - 'A'
		}
		out = append(out, byte(r))
	}
	return string(out)
}
