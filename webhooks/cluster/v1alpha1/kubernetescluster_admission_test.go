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

	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/proof"
	"github.com/kubeforge/kubeforge/internal/test/testenv"
)

func clusterJSON(name, spec string) *unstructured.Unstructured {
	u, err := testenv.Object("cluster.kubeforge.io/v1alpha1", "KubernetesCluster", "default", name, spec)
	Expect(err).NotTo(HaveOccurred())
	return u
}

const (
	denied = `admission webhook "vkubernetescluster-v1alpha1.kubeforge.io" denied the request`
	valid  = `{"version":"v1.31.4","masters":[{"address":"10.0.0.10"}],"nodes":[{"address":"10.0.0.21"}],"sshSecretRef":{"name":"ssh"}}`
)

func patch(u *unstructured.Unstructured, jsonPatch string) error {
	return suite.Client.Patch(suite.Ctx, u, client.RawPatch(types.JSONPatchType, []byte(jsonPatch)))
}

var _ = Describe("KubernetesCluster webhooks", func() {
	It("should fill in the defaults", func() {
		u := clusterJSON("defaults", valid)
		Expect(suite.Client.Create(suite.Ctx, u)).To(Succeed())
		kc := &clusterv1alpha1.KubernetesCluster{}
		Expect(suite.Client.Get(suite.Ctx, client.ObjectKeyFromObject(u), kc)).To(Succeed())
		Expect(kc.Spec.Etcd).To(Equal(kc.Spec.Masters))
		Expect(string(kc.Spec.Network.Plugin)).To(Equal("calico"))
		Expect(kc.Spec.SSHSecretRef.User).To(Equal("root"))
		Expect(kc.Spec.Installer.Image).To(Equal(clusterv1alpha1.DefaultInstallerImage))
		Expect(kc.Spec.Installer.Timeout.Duration).To(Equal(clusterv1alpha1.DefaultTimeout))
		Expect(*kc.Spec.ResetOnDelete).To(BeTrue())
	})

	DescribeTable("should reject bad input with field errors",
		func(name, spec string, fields ...string) {
			err := suite.Client.Create(suite.Ctx, clusterJSON(name, spec))
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
			Expect(err.Error()).To(ContainSubstring(denied))
			Expect(testenv.Causes(err)).To(ConsistOf(fields))
		},
		Entry("an address that is neither an IP nor a DNS name", "bad-address",
			`{"version":"v1.31.4","masters":[{"address":"10.0.0.10"}],"nodes":[{"address":"a b"}],"sshSecretRef":{"name":"ssh"}}`, "spec.nodes[0].address"),
		Entry("a host twice", "twice",
			`{"version":"v1.31.4","masters":[{"address":"10.0.0.10"}],"nodes":[{"address":"10.0.0.10"}],"sshSecretRef":{"name":"ssh"}}`, "spec.nodes[0].address"),
		Entry("an even number of etcd members", "even-etcd",
			`{"version":"v1.31.4","masters":[{"address":"10.0.0.10"}],"etcd":[{"address":"10.0.1.1"},{"address":"10.0.1.2"}],"sshSecretRef":{"name":"ssh"}}`, "spec.etcd"),
		Entry("a version the default installer image cannot install", "past-installer",
			`{"version":"v1.32.0","masters":[{"address":"10.0.0.10"}],"sshSecretRef":{"name":"ssh"}}`, "spec.version"),
	)

	It("should admit a version past the default installer's range with an installer image the user names, and refuse an upgrade past it without one", func() {
		named := clusterJSON("own-installer", `{"version":"v1.32.0","installer":{"image":"quay.io/kubespray/kubespray:v2.28.0"},"masters":[{"address":"10.0.0.10"}],"sshSecretRef":{"name":"ssh"}}`)
		Expect(suite.Client.Create(suite.Ctx, named)).To(Succeed())
		u := clusterJSON("upgrade-past", valid)
		Expect(suite.Client.Create(suite.Ctx, u)).To(Succeed())
		err := patch(u, `[{"op":"replace","path":"/spec/version","value":"v1.32.0"}]`)
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
		Expect(err.Error()).To(ContainSubstring("the installer image quay.io/kubespray/kubespray:v2.27.0 installs Kubernetes v1.29.0 to v1.31.4"))
		Expect(patch(u, `[{"op":"replace","path":"/spec/version","value":"v1.32.0"},{"op":"replace","path":"/spec/installer/image","value":"quay.io/kubespray/kubespray:v2.28.0"}]`)).To(Succeed())
	})

	DescribeTable("should reject what the schema refuses",
		func(name, spec, message string) {
			err := suite.Client.Create(suite.Ctx, clusterJSON(name, spec))
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
			Expect(err.Error()).To(ContainSubstring(message))
		},
		Entry("no master", "no-master", `{"version":"v1.31.4","masters":[],"sshSecretRef":{"name":"ssh"}}`, "spec.masters"),
		Entry("no SSH Secret", "no-ssh", `{"version":"v1.31.4","masters":[{"address":"10.0.0.10"}],"sshSecretRef":{"name":""}}`, "spec.sshSecretRef.name"),
		Entry("a version that is not vX.Y.Z", "bad-version", `{"version":"1.31","masters":[{"address":"10.0.0.10"}],"sshSecretRef":{"name":"ssh"}}`, "spec.version"),
	)

	DescribeTable("should refuse changes that cannot be made, and keep the stored object",
		func(name, jsonPatch, message string) {
			u := clusterJSON(name, valid)
			Expect(suite.Client.Create(suite.Ctx, u)).To(Succeed())
			err := patch(u, jsonPatch)
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
			Expect(err.Error()).To(ContainSubstring(message))
			kc := &clusterv1alpha1.KubernetesCluster{}
			Expect(suite.Client.Get(suite.Ctx, client.ObjectKeyFromObject(u), kc)).To(Succeed())
			Expect(kc.Spec.Version).To(Equal("v1.31.4"))
			Expect(kc.Spec.Masters[0].Address).To(Equal("10.0.0.10"))
		},
		Entry("the masters", "masters", `[{"op":"replace","path":"/spec/masters/0/address","value":"10.0.0.11"}]`, "masters cannot change after creation"),
		Entry("etcd", "etcd", `[{"op":"replace","path":"/spec/etcd","value":[{"address":"10.0.0.12"}]}]`, "etcd cannot change after creation"),
		Entry("the network", "network", `[{"op":"replace","path":"/spec/network/plugin","value":"cilium"}]`, "network cannot change after creation"),
		Entry("a lower version", "lower", `[{"op":"replace","path":"/spec/version","value":"v1.30.9"}]`, "cannot go down from v1.31.4 to v1.30.9"),
		Entry("two minor versions up", "skip", `[{"op":"replace","path":"/spec/version","value":"v1.33.0"}]`, "one minor version at a time"),
	)

	It("should refuse a spec change while an operation runs, naming it, but let paused change", func() {
		u := clusterJSON("busy", valid)
		Expect(suite.Client.Create(suite.Ctx, u)).To(Succeed())
		kc := &clusterv1alpha1.KubernetesCluster{}
		Expect(suite.Client.Get(suite.Ctx, client.ObjectKeyFromObject(u), kc)).To(Succeed())
		kc.Status.CurrentOperation = "create-2"
		Expect(suite.Client.Status().Update(suite.Ctx, kc)).To(Succeed())

		err := patch(u, `[{"op":"add","path":"/spec/nodes/-","value":{"address":"10.0.0.22"}}]`)
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
		Expect(err.Error()).To(ContainSubstring("operation create-2 is running"))
		Expect(patch(u, `[{"op":"add","path":"/spec/paused","value":true}]`)).To(Succeed())
	})
})

var _ = Describe("KubernetesCluster webhooks and the requester's rights", func() {
	// What bob may do in default: manage KubernetesClusters, and get the
	// one Secret "bob-ssh" — not "ops-ssh".
	clusters := rbacv1.PolicyRule{APIGroups: []string{"cluster.kubeforge.io"}, Resources: []string{"kubernetesclusters"},
		Verbs: []string{"get", "create", "update", "patch"}}
	bobsKey := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"bob-ssh"}, Verbs: []string{"get"}}
	spec := func(secret string) string {
		return `{"version":"v1.31.4","masters":[{"address":"10.0.0.10"}],"sshSecretRef":{"name":"` + secret + `"}}`
	}

	It("should refuse a cluster that names an SSH Secret the requester may not get, and admit one they may", func() {
		bob, err := suite.Env.As(suite.Ctx, "bob", "default", clusters, bobsKey)
		Expect(err).NotTo(HaveOccurred())

		err = bob.Create(suite.Ctx, clusterJSON("bob-uses-ops-key", spec("ops-ssh")))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
		Expect(testenv.Causes(err)).To(ConsistOf("spec.sshSecretRef.name"))
		Expect(err.Error()).To(ContainSubstring("bob may not get the Secret ops-ssh in default"))

		mine := clusterJSON("bob-uses-own-key", spec("bob-ssh"))
		Expect(bob.Create(suite.Ctx, mine)).To(Succeed())
		// Changing it to a Secret bob may not read is refused too.
		err = bob.Patch(suite.Ctx, mine, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"sshSecretRef":{"name":"ops-ssh"}}}`)))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
	})

	It("should refuse an installer image the administrator's list does not allow, on create and on update", func() {
		err := suite.Client.Create(suite.Ctx, clusterJSON("own-installer",
			`{"version":"v1.31.4","masters":[{"address":"10.0.0.10"}],"sshSecretRef":{"name":"ssh"},"installer":{"image":"quay.io/attacker/kubespray:v2.27.0"}}`))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
		Expect(testenv.Causes(err)).To(ConsistOf("spec.installer.image"))
		Expect(err.Error()).To(ContainSubstring("quay.io/attacker/kubespray:v2.27.0 is not an installer image this operator's administrator allows"))

		ok := clusterJSON("kubespray-installer", `{"version":"v1.31.4","masters":[{"address":"10.0.0.10"}],"sshSecretRef":{"name":"ssh"},"installer":{"image":"kubespray/kubespray:v2.26.0"}}`)
		Expect(suite.Client.Create(suite.Ctx, ok)).To(Succeed(), "Docker Hub's kubespray is on the default list")
		err = patch(ok, `[{"op":"replace","path":"/spec/installer/image","value":"registry.example.com/anything:1"}]`)
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
	})

	It("should record who created a cluster, and keep it", func() {
		dave, err := suite.Env.As(suite.Ctx, "dave", "default", clusters,
			rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"daves-ssh"}, Verbs: []string{"get"}})
		Expect(err).NotTo(HaveOccurred())
		u := clusterJSON("daves-own", spec("daves-ssh"))
		u.SetAnnotations(map[string]string{proof.CreatedByAnnotation: "alice"})
		Expect(dave.Create(suite.Ctx, u)).To(Succeed())
		Expect(u.GetAnnotations()).To(HaveKeyWithValue(proof.CreatedByAnnotation, "dave"), "not what the request said")
		Expect(patch(u, `[{"op":"replace","path":"/metadata/annotations/kubeforge.io~1created-by","value":"alice"}]`)).To(Succeed())
		Expect(u.GetAnnotations()).To(HaveKeyWithValue(proof.CreatedByAnnotation, "dave"), "not changed by an update")
	})

	It("should take the right to create pods for an installer variable that is not a plain setting, on create and on a change, and not for a plain one", func() {
		withVars := func(name, vars string) *unstructured.Unstructured {
			return clusterJSON(name, `{"version":"v1.31.4","masters":[{"address":"10.0.0.10"}],"sshSecretRef":{"name":"erin-ssh"},"installer":{"extraVars":`+vars+`}}`)
		}
		erinsKey := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"erin-ssh"}, Verbs: []string{"get"}}
		erin, err := suite.Env.As(suite.Ctx, "erin", "default", clusters, erinsKey)
		Expect(err).NotTo(HaveOccurred())

		By("kubespray's command of a pull on the installer's own host: refused without create pods")
		err = erin.Create(suite.Ctx, withVars("erin-runs", `{"download_localhost":"true","download_run_once":"true","image_pull_command_on_localhost":"python3 -c 'import os'"}`))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
		Expect(testenv.Causes(err)).To(ConsistOf("spec.installer.extraVars[download_localhost]", "spec.installer.extraVars[download_run_once]",
			"spec.installer.extraVars[image_pull_command_on_localhost]"))
		Expect(err.Error()).To(ContainSubstring("erin may not create pods in default, which an installer variable that is not a plain setting takes"))

		By("plain settings: admitted")
		plain := withVars("erin-plain", `{"container_manager":"containerd","kube_proxy_mode":"ipvs","minimal_node_memory_mb":"512"}`)
		Expect(erin.Create(suite.Ctx, plain)).To(Succeed())
		By("a plain setting with a value that is not one word, as a change: refused")
		err = erin.Patch(suite.Ctx, plain, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"installer":{"extraVars":{"dns_mode":"../../tmp/x"}}}}`)))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
		Expect(testenv.Causes(err)).To(ConsistOf("spec.installer.extraVars[dns_mode]"))

		By("with the right to create pods: admitted")
		frank, err := suite.Env.As(suite.Ctx, "frank", "default", clusters, erinsKey,
			rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"create"}})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() error {
			return frank.Create(suite.Ctx, withVars("frank-runs", `{"download_localhost":"true"}`))
		}).Should(Succeed())
	})

	It("should let someone without the Secret change what does not name it", func() {
		// The admin made it with ops-ssh; carol may label it and pause it.
		made := clusterJSON("ops-cluster", spec("ops-ssh"))
		Expect(suite.Client.Create(suite.Ctx, made)).To(Succeed())
		carol, err := suite.Env.As(suite.Ctx, "carol", "default", clusters)
		Expect(err).NotTo(HaveOccurred())
		Expect(carol.Patch(suite.Ctx, made, client.RawPatch(types.MergePatchType,
			[]byte(`{"metadata":{"labels":{"team":"ops"}},"spec":{"paused":true}}`)))).To(Succeed())
	})
})
