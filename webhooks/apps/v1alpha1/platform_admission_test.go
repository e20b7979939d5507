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

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/admit"
	"github.com/kubeforge/kubeforge/internal/test/testenv"
)

func platformJSON(name, components string) *unstructured.Unstructured {
	u, err := testenv.Object("apps.kubeforge.io/v1alpha1", "Platform", "default", name,
		`{"imageRepository":"reg.example.com/acme","version":"1.0.0","components":`+components+`}`)
	Expect(err).NotTo(HaveOccurred())
	return u
}

const platformDenied = `admission webhook "vplatform-v1alpha1.kubeforge.io" denied the request`

var _ = Describe("Platform webhooks", func() {
	It("should write the per-component defaults into the spec, but no tag", func() {
		u := platformJSON("defaults", `[{"name":"db","workload":"StatefulSet","storage":{"size":"1Gi"}},{"name":"api","ports":[{"name":"http","port":8080}]}]`)
		Expect(suite.Client.Create(suite.Ctx, u)).To(Succeed())
		p := &appsv1alpha1.Platform{}
		Expect(suite.Client.Get(suite.Ctx, client.ObjectKeyFromObject(u), p)).To(Succeed())
		db, api := p.Spec.Components[0], p.Spec.Components[1]
		Expect(api.Workload).To(Equal(appsv1alpha1.WorkloadDeployment))
		Expect(api.ImageName).To(Equal("api"))
		Expect(api.Tag).To(BeEmpty())
		Expect(*api.Replicas).To(Equal(int32(1)))
		Expect(string(api.Service.Type)).To(Equal("ClusterIP"))
		Expect(db.Storage.MountPath).To(Equal("/var/lib/db"))
		Expect(db.Storage.ReclaimPolicy).To(Equal("Retain"))
	})

	It("should make a new component Restricted, and keep a stored component's podSecurity when an update drops it", func() {
		u := platformJSON("podsecurity", `[{"name":"api"},{"name":"legacy-image","podSecurity":"Baseline"}]`)
		Expect(suite.Client.Create(suite.Ctx, u)).To(Succeed())
		key := client.ObjectKeyFromObject(u)
		get := func() []appsv1alpha1.PodSecurity {
			p := &appsv1alpha1.Platform{}
			Expect(suite.Client.Get(suite.Ctx, key, p)).To(Succeed())
			var out []appsv1alpha1.PodSecurity
			for _, c := range p.Spec.Components {
				out = append(out, c.PodSecurity)
			}
			return out
		}
		Expect(get()).To(Equal([]appsv1alpha1.PodSecurity{appsv1alpha1.PodSecurityRestricted, appsv1alpha1.PodSecurityBaseline}))
		// Dropping the field keeps what was stored: Baseline does not
		// become "unset" (which runs unrestricted) without the right.
		Expect(suite.Client.Patch(suite.Ctx, u.DeepCopy(), client.RawPatch(types.JSONPatchType,
			[]byte(`[{"op":"remove","path":"/spec/components/1/podSecurity"},{"op":"remove","path":"/spec/components/0/podSecurity"},
			         {"op":"add","path":"/spec/components/-","value":{"name":"worker"}}]`)))).To(Succeed())
		Expect(get()).To(Equal([]appsv1alpha1.PodSecurity{appsv1alpha1.PodSecurityRestricted, appsv1alpha1.PodSecurityBaseline, appsv1alpha1.PodSecurityRestricted}))
	})

	It("should refuse Baseline to a requester without use of podsecuritylevels/baseline, and admit it with", func() {
		platforms := rbacv1.PolicyRule{APIGroups: []string{"apps.kubeforge.io"}, Resources: []string{"platforms"}, Verbs: []string{"create", "get", "update", "patch"}}
		kim, err := suite.Env.As(suite.Ctx, "kim", "default", platforms)
		Expect(err).NotTo(HaveOccurred())
		err = kim.Create(suite.Ctx, platformJSON("kims", `[{"name":"api"},{"name":"root","podSecurity":"Baseline"}]`))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
		Expect(causes(err)).To(ConsistOf("spec.components[1].podSecurity"))
		Expect(err.Error()).To(ContainSubstring("kim may not use podsecuritylevels/baseline or /privileged in default (group kubeforge.io)"))
		Expect(kim.Create(suite.Ctx, platformJSON("kims", `[{"name":"api"}]`))).To(Succeed(), "Restricted takes no right")

		lee, err := suite.Env.As(suite.Ctx, "lee", "default", platforms,
			rbacv1.PolicyRule{APIGroups: []string{"kubeforge.io"}, Resources: []string{"podsecuritylevels"}, ResourceNames: []string{"baseline"}, Verbs: []string{"use"}})
		Expect(err).NotTo(HaveOccurred())
		Expect(lee.Create(suite.Ctx, platformJSON("lees", `[{"name":"root","podSecurity":"Baseline"}]`))).To(Succeed())
	})

	It("should refuse a StatefulSet with storage to a requester who may not get every claim and create pods, on create and on a spec change, but not a Deployment's volume", func() {
		platforms := rbacv1.PolicyRule{APIGroups: []string{"apps.kubeforge.io"}, Resources: []string{"platforms"}, Verbs: []string{"create", "get", "update", "patch"}}
		stateful := `[{"name":"db","workload":"StatefulSet","storage":{"size":"1Gi"}}]`
		ann, err := suite.Env.As(suite.Ctx, "ann", "default", platforms)
		Expect(err).NotTo(HaveOccurred())
		err = ann.Create(suite.Ctx, platformJSON("anns", stateful))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
		Expect(causes(err)).To(HaveEach("spec.components[0].storage"))
		Expect(err.Error()).To(ContainSubstring("ann may not get persistentvolumeclaims in default, which a StatefulSet's volumes take"))
		Expect(err.Error()).To(ContainSubstring("ann may not create pods in default, which a StatefulSet's volumes take"))
		// A Deployment's claim is made by the operator and sealed for this
		// Platform: a kept claim of another is a NameConflict, not a mount.
		Expect(ann.Create(suite.Ctx, platformJSON("anns", `[{"name":"db","storage":{"size":"1Gi"}}]`))).To(Succeed())

		claims := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims"}, Verbs: []string{"get"}}
		pods := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"create"}}
		// A right to named claims only is not a right to whatever name the
		// StatefulSet's controller mounts.
		named, err := suite.Env.As(suite.Ctx, "nat", "default", platforms, pods,
			rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims"}, ResourceNames: []string{"data-nats-db-0"}, Verbs: []string{"get"}})
		Expect(err).NotTo(HaveOccurred())
		err = named.Create(suite.Ctx, platformJSON("nats", stateful))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
		Expect(causes(err)).To(ConsistOf("spec.components[0].storage"))

		bo, err := suite.Env.As(suite.Ctx, "bo", "default", platforms, claims, pods)
		Expect(err).NotTo(HaveOccurred())
		u := platformJSON("bos", stateful)
		Expect(bo.Create(suite.Ctx, u)).To(Succeed())

		By("another who may change the Platform but not mount claims changes what runs beside its volume")
		p := &appsv1alpha1.Platform{}
		Expect(ann.Get(suite.Ctx, client.ObjectKeyFromObject(u), p)).To(Succeed())
		err = ann.Patch(suite.Ctx, p, client.RawPatch(types.MergePatchType,
			[]byte(`{"spec":{"components":[{"name":"db","workload":"StatefulSet","storage":{"size":"1Gi"},"command":["sh","-c","cat /var/lib/db/*"]}]}}`)))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
		Expect(causes(err)).To(HaveEach("spec.components[0].storage"))
		By("while a change of replicas alone asks nothing")
		Expect(ann.Patch(suite.Ctx, p, client.RawPatch(types.JSONPatchType,
			[]byte(`[{"op":"replace","path":"/spec/components/0/replicas","value":2}]`)))).To(Succeed())
		Expect(ann.Get(suite.Ctx, client.ObjectKeyFromObject(u), p)).To(Succeed())
		Expect(admit.Platform.Stamped(suite.Env.Proof, p)).To(BeTrue())
	})

	It("should keep a Baseline Platform's stamp when its rotate command is taken away by one without that right", func() {
		u := platformJSON("rotated", `[{"name":"root","podSecurity":"Baseline"}]`)
		u.SetAnnotations(map[string]string{appsv1alpha1.RotateSecretAnnotation: "session"})
		Expect(suite.Client.Create(suite.Ctx, u)).To(Succeed())
		p := &appsv1alpha1.Platform{}
		Expect(suite.Client.Get(suite.Ctx, client.ObjectKeyFromObject(u), p)).To(Succeed())
		Expect(admit.Platform.Stamped(suite.Env.Proof, p)).To(BeTrue())
		// As the operator does once it rotated: it may not use Baseline.
		mo, err := suite.Env.As(suite.Ctx, "mo", "default",
			rbacv1.PolicyRule{APIGroups: []string{"apps.kubeforge.io"}, Resources: []string{"platforms"}, Verbs: []string{"get", "patch"}})
		Expect(err).NotTo(HaveOccurred())
		Expect(mo.Patch(suite.Ctx, p.DeepCopy(), client.RawPatch(types.MergePatchType,
			[]byte(`{"metadata":{"annotations":{"kubeforge.io/rotate-secret":null}}}`)))).To(Succeed())
		Expect(suite.Client.Get(suite.Ctx, client.ObjectKeyFromObject(u), p)).To(Succeed())
		Expect(p.Annotations).NotTo(HaveKey(appsv1alpha1.RotateSecretAnnotation))
		Expect(admit.Platform.Stamped(suite.Env.Proof, p)).To(BeTrue(), "the approval carried over")

		By("but setting it again is a command, checked for the requester")
		err = mo.Patch(suite.Ctx, p.DeepCopy(), client.RawPatch(types.MergePatchType,
			[]byte(`{"metadata":{"annotations":{"kubeforge.io/rotate-secret":"session"}}}`)))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
	})

	DescribeTable("should reject bad input with field errors",
		func(name, components string, fields ...string) {
			err := suite.Client.Create(suite.Ctx, platformJSON(name, components))
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
			Expect(err.Error()).To(ContainSubstring(platformDenied))
			Expect(testenv.Causes(err)).To(ConsistOf(fields))
		},
		Entry("a dependency that does not exist", "missing-dep", `[{"name":"api","dependsOn":["db"]}]`, "spec.components[0].dependsOn[0]"),
		Entry("a dependency cycle", "cycle", `[{"name":"a","dependsOn":["b"]},{"name":"b","dependsOn":["a"]}]`, "spec.components"),
		Entry("a CronJob without a schedule", "no-schedule", `[{"name":"report","workload":"CronJob"}]`, "spec.components[0].schedule"),
		Entry("a schedule that is no cron expression", "bad-schedule", `[{"name":"report","workload":"CronJob","schedule":"nightly"}]`, "spec.components[0].schedule"),
		Entry("a schedule on a Deployment", "stray-schedule", `[{"name":"api","schedule":"0 3 * * *"}]`, "spec.components[0].schedule"),
		Entry("replicas on a DaemonSet", "ds-replicas", `[{"name":"agent","workload":"DaemonSet","replicas":3}]`, "spec.components[0].replicas"),
		Entry("a request above its limit", "over-limit", `[{"name":"api","resources":{"requests":{"memory":"2Gi"},"limits":{"memory":"1Gi"}}}]`, "spec.components[0].resources.requests[memory]"),
	)

	It("should name the field of a quantity that does not parse", func() {
		err := suite.Client.Create(suite.Ctx, platformJSON("bad-quantity", `[{"name":"api","resources":{"limits":{"cpu":"lots"}}}]`))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
		Expect(testenv.Causes(err)).To(ConsistOf("spec.components[0].resources.limits[cpu]"))
	})

	DescribeTable("should refuse changes to what cannot change, and keep the stored object",
		func(name, patch, message string) {
			u := platformJSON(name, `[{"name":"db","workload":"StatefulSet","storage":{"size":"2Gi","storageClassName":"standard"}},{"name":"api","storage":{"size":"2Gi"}}]`)
			Expect(suite.Client.Create(suite.Ctx, u)).To(Succeed())
			err := suite.Client.Patch(suite.Ctx, u, client.RawPatch(types.JSONPatchType, []byte(patch)))
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
			Expect(err.Error()).To(ContainSubstring(message))
			p := &appsv1alpha1.Platform{}
			Expect(suite.Client.Get(suite.Ctx, client.ObjectKeyFromObject(u), p)).To(Succeed())
			Expect(p.Spec.Components[0].Workload).To(Equal(appsv1alpha1.WorkloadStatefulSet))
			Expect(p.Spec.Components[1].Storage.Size.String()).To(Equal("2Gi"))
		},
		Entry("a workload type", "change-workload", `[{"op":"replace","path":"/spec/components/0/workload","value":"Deployment"}]`, "workload cannot change"),
		Entry("a shrinking volume", "shrink", `[{"op":"replace","path":"/spec/components/1/storage/size","value":"1Gi"}]`, "cannot shrink from 2Gi to 1Gi"),
		Entry("a storage class", "reclass", `[{"op":"replace","path":"/spec/components/0/storage/storageClassName","value":"fast"}]`, "storage.storageClassName cannot change"),
		Entry("a mount path", "remount", `[{"op":"replace","path":"/spec/components/1/storage/mountPath","value":"/srv"}]`, "storage.mountPath cannot change"),
	)

	It("should let a Deployment's volume grow and the version change", func() {
		u := platformJSON("grow", `[{"name":"api","storage":{"size":"1Gi"}}]`)
		Expect(suite.Client.Create(suite.Ctx, u)).To(Succeed())
		Expect(suite.Client.Patch(suite.Ctx, u, client.RawPatch(types.JSONPatchType,
			[]byte(`[{"op":"replace","path":"/spec/components/0/storage/size","value":"5Gi"},{"op":"replace","path":"/spec/version","value":"1.1.0"}]`)))).To(Succeed())
	})

	Context("with a database", func() {
		withDB := func(name, database, components string) *unstructured.Unstructured {
			u, err := testenv.Object("apps.kubeforge.io/v1alpha1", "Platform", "default", name,
				`{"imageRepository":"reg.example.com/acme","version":"1.0.0","database":`+database+`,"components":`+components+`}`)
			Expect(err).NotTo(HaveOccurred())
			return u
		}
		const server = `{"engine":"mysql","host":"db.example.com","adminSecretRef":{"name":"db-admin"}}`

		It("should write the port, the TLS mode and the names into the spec", func() {
			u := withDB("db-defaults", server, `[{"name":"api","database":{"enabled":true}},{"name":"web"}]`)
			Expect(suite.Client.Create(suite.Ctx, u)).To(Succeed())
			p := &appsv1alpha1.Platform{}
			Expect(suite.Client.Get(suite.Ctx, client.ObjectKeyFromObject(u), p)).To(Succeed())
			Expect(p.Spec.Database.Port).To(Equal(int32(3306)))
			Expect(p.Spec.Database.TLS.Mode).To(Equal(appsv1alpha1.DatabaseTLSVerifyFull), "the certificate is checked unless asked not to")
			Expect(p.Spec.Components[0].Database.Name).To(Equal("default_db_defaults_api_46f10f4edf9d"), "the namespace is in the name, and a digest of the names")
			Expect(p.Spec.Components[0].Database.User).To(And(HaveLen(32), HavePrefix("default_db_defaults_")), "MySQL's 32 characters, the digest at the end")
			Expect(p.Spec.Components[1].Database).To(BeNil())
		})

		DescribeTable("should refuse hostile and reserved names, and missing servers, with field errors",
			func(name, database, components string, fields ...string) {
				err := suite.Client.Create(suite.Ctx, withDB(name, database, components))
				Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
				Expect(testenv.Causes(err)).To(ConsistOf(fields))
			},
			Entry("a backtick and a semicolon", "db-backtick", server, "[{\"name\":\"api\",\"database\":{\"enabled\":true,\"name\":\"x`; DROP DATABASE mysql; --\"}}]", "spec.components[0].database.name"),
			Entry("a quote in a user", "db-quote", server, `[{"name":"api","database":{"enabled":true,"user":"x'@'%"}}]`, "spec.components[0].database.user"),
			Entry("unicode", "db-unicode", server, `[{"name":"api","database":{"enabled":true,"name":"bücher"}}]`, "spec.components[0].database.name"),
			Entry("the server's own database", "db-reserved", server, `[{"name":"api","database":{"enabled":true,"name":"mysql"}}]`, "spec.components[0].database.name"),
			Entry("two components, one user", "db-shared", server, `[{"name":"a","database":{"enabled":true,"user":"app"}},{"name":"b","database":{"enabled":true,"user":"app"}}]`, "spec.components[1].database.user"),
			Entry("a DB_ variable of its own", "db-env", server, `[{"name":"api","env":[{"name":"DB_PASSWORD","value":"x"}],"database":{"enabled":true}}]`, "spec.components[0].env[0].name"),
			Entry("no admin Secret", "db-noadmin", `{"engine":"postgresql","host":"db.example.com","adminSecretRef":{"name":""}}`, `[{"name":"api"}]`, "spec.database.adminSecretRef.name"),
		)

		It("should refuse a new engine or host, or a renamed database", func() {
			u := withDB("db-immutable", server, `[{"name":"api","database":{"enabled":true}}]`)
			Expect(suite.Client.Create(suite.Ctx, u)).To(Succeed())
			for patch, field := range map[string]string{
				`[{"op":"replace","path":"/spec/database/engine","value":"postgresql"}]`:         "spec.database.engine",
				`[{"op":"replace","path":"/spec/database/host","value":"other.example.com"}]`:    "spec.database.host",
				`[{"op":"replace","path":"/spec/components/0/database/name","value":"renamed"}]`: "spec.components[0].database.name",
			} {
				err := suite.Client.Patch(suite.Ctx, u.DeepCopy(), client.RawPatch(types.JSONPatchType, []byte(patch)))
				Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%s: want 422 Invalid, got %v", patch, err)
				Expect(err.Error()).To(ContainSubstring(field))
			}
			Expect(suite.Client.Patch(suite.Ctx, u.DeepCopy(), client.RawPatch(types.JSONPatchType,
				[]byte(`[{"op":"add","path":"/spec/database/dropOnDelete","value":true}]`)))).To(Succeed())
		})
	})
})
