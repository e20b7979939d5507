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

package real

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
	networkingv1alpha1 "github.com/kubeforge/kubeforge/api/networking/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/scheme"
)

// The attacker's suite (docs/security.md, "Attacks and where they stop").
// Two tenants share one namespace: alice, the victim, its admin; and
// mallory, who may read, create and update kubeforge objects, ConfigMaps,
// Secrets and PersistentVolumeClaims there, but not get, list or watch
// Secrets — so mallory can read alice's objects and their UIDs. Each spec
// is one attack; each is refused at admission or ignored by the operator,
// and nothing mallory planted is ever mounted or run.
const (
	tenancyNS = "tenancy"
	victim    = "alice@example.com"
	attacker  = "mallory@example.com"
)

var (
	alice, mallory client.Client
)

func impersonating(user string) client.Client {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	// An attacker's client is not held to client-go's default 5 requests/s
	// (500 planted ConfigMaps took 100 s at it).
	cfg.QPS, cfg.Burst = 100, 200
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	Expect(err).NotTo(HaveOccurred())
	return c
}

// tenants makes the namespace, the two tenants' rights and alice's Secrets
// once; every spec starts from them.
func tenants() {
	if alice != nil {
		return
	}
	restrictedNamespace(tenancyNS)
	kubeforge := []string{"apps.kubeforge.io", "networking.kubeforge.io", "ide.kubeforge.io", "cluster.kubeforge.io"}
	rw := []string{"get", "list", "watch", "create", "update", "patch"}
	objs := []client.Object{
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "alice-admin", Namespace: tenancyNS},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: victim}}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "mallory", Namespace: tenancyNS}, Rules: []rbacv1.PolicyRule{
			{APIGroups: kubeforge, Resources: []string{"*"}, Verbs: rw},
			{APIGroups: []string{""}, Resources: []string{"configmaps", "persistentvolumeclaims"}, Verbs: rw},
			{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"create", "update", "patch"}},
		}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "mallory", Namespace: tenancyNS},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "mallory"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: attacker}}},
	}
	for _, o := range objs {
		Expect(client.IgnoreAlreadyExists(k8sClient.Create(ctx, o))).To(Succeed())
	}
	alice, mallory = impersonating(victim), impersonating(attacker)
	// RBAC's cache learns the bindings a moment later.
	Eventually(func() error {
		return mallory.List(ctx, &appsv1alpha1.PodSetList{}, client.InNamespace(tenancyNS))
	}).Should(Succeed())
	Eventually(func() error {
		return alice.List(ctx, &corev1.SecretList{}, client.InNamespace(tenancyNS))
	}).Should(Succeed())
	// alice's Secrets, which mallory may not read: a token, and an SSH key
	// (not a real one: her clusters here run against this host only, and
	// only when an attack got through).
	Expect(client.IgnoreAlreadyExists(alice.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "alice-token", Namespace: tenancyNS},
		StringData: map[string]string{"token": "alice's"}}))).To(Succeed())
	Expect(client.IgnoreAlreadyExists(alice.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "alice-ssh", Namespace: tenancyNS},
		Type: corev1.SecretTypeSSHAuth, StringData: map[string]string{corev1.SSHAuthPrivateKey: "not a real key"}}))).To(Succeed())
}

// refusedAt asserts that err is a field error at path — the webhook's —
// or, for a reference, the refusal of the API server's own references
// policy, which runs first where both are installed and names the object
// referenced rather than the field.
func refusedAt(err error, path string) {
	GinkgoHelper()
	Expect(err).To(HaveOccurred(), "admitted; want a field error at %s", path)
	Expect(apierrors.IsInvalid(err) || apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
	Expect(err.Error()).To(Or(ContainSubstring(path), ContainSubstring("ValidatingAdmissionPolicy 'kubeforge-references-")))
}

// hookEnvPlatform is a Platform whose bootstrap hook reads alice's token
// through its env.
func hookEnvPlatform(name string) *appsv1alpha1.Platform {
	return &appsv1alpha1.Platform{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: tenancyNS},
		Spec: appsv1alpha1.PlatformSpec{ImageRepository: "kubeforge.test", Version: "v1", Components: []appsv1alpha1.PlatformComponent{{
			Name: "api", Image: echoImage, Ports: []appsv1alpha1.ComponentPort{{Name: "http", Port: 8080}},
			Hooks: &appsv1alpha1.ComponentHooks{Bootstrap: &appsv1alpha1.HookJob{Command: []string{"sh", "-c", "echo $T"},
				Env: []corev1.EnvVar{{Name: "T", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "alice-token"}, Key: "token"}}}}}},
		}}}}
}

// putBack creates obj again as it was before a spec deleted it.
func putBack(obj client.Object) {
	obj.SetResourceVersion("")
	obj.SetUID("")
	obj.SetManagedFields(nil)
	obj.SetCreationTimestamp(metav1.Time{})
	Expect(client.IgnoreAlreadyExists(k8sClient.Create(ctx, obj))).To(Succeed())
}

func tenantPodSet(name string, mutate func(*corev1.PodSpec)) *appsv1alpha1.PodSet {
	ps := echoPodSet(name, "/healthz")
	ps.Namespace = tenancyNS
	mutate(&ps.Spec.Template.Spec)
	return ps
}

func condition(conds []metav1.Condition, t string) *metav1.Condition {
	return meta.FindStatusCondition(conds, t)
}

var _ = Describe("Tenancy: one tenant attacking another in the same namespace", Label("real", "tenancy"), func() {
	BeforeEach(tenants)

	It("plants an installer operation's ConfigMap with forged annotations and owner reference: the operation never runs it", func() {
		const name = "victim-kc"
		planted := func(extra func(*corev1.ConfigMap)) *corev1.ConfigMap {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name + "-precheck-1", Namespace: tenancyNS,
				Labels: map[string]string{"app.kubernetes.io/managed-by": "kubeforge", "app.kubernetes.io/instance": name,
					clusterv1alpha1.ClusterLabel: name, clusterv1alpha1.OperationLabel: "precheck-1"},
				Annotations: map[string]string{"kubeforge.io/retain-on-delete": "true", "kubeforge.io/retained-for": "",
					"kubeforge.io/create-only": "true"}},
				Data: map[string]string{"run.sh": "echo PLANTED; cat /kubeforge-ssh/id_rsa", "hosts.yaml": "all: {}",
					"precheck.yml": "[]", "store-secret.py": ""}}
			extra(cm)
			return cm
		}
		By("alice's cluster, paused (the installer would run against this host only)")
		kc := &clusterv1alpha1.KubernetesCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: tenancyNS},
			Spec: clusterv1alpha1.KubernetesClusterSpec{Version: "v1.31.4", Paused: true,
				Masters:      []clusterv1alpha1.Host{{Address: "127.0.0.1", Name: "cp1"}},
				SSHSecretRef: clusterv1alpha1.SSHSecretReference{Name: "alice-ssh"}}}
		Expect(alice.Create(ctx, kc)).To(Succeed())

		By("mallory plants the first operation's ConfigMap with kubeforge's marks and a controller reference to alice's cluster")
		Expect(mallory.Get(ctx, client.ObjectKeyFromObject(kc), kc)).To(Succeed(), "mallory may read the cluster and its UID")
		cm := planted(func(cm *corev1.ConfigMap) {
			cm.OwnerReferences = []metav1.OwnerReference{{APIVersion: clusterv1alpha1.GroupVersion.String(), Kind: "KubernetesCluster",
				Name: kc.Name, UID: kc.UID, Controller: ptr.To(true)}}
		})
		Expect(mallory.Create(ctx, cm)).To(Succeed())

		By("alice unpauses: the operation stops at the name conflict, and no Job is ever made")
		Expect(alice.Patch(ctx, kc, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"paused":false}}`)))).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(kc), kc)).To(Succeed())
			c := condition(kc.Status.Conditions, "Degraded")
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal("NameConflict"))
			g.Expect(c.Message).To(ContainSubstring(name + "-precheck-1"))
		}, "1m").Should(Succeed())
		Consistently(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: tenancyNS, Name: name + "-precheck-1"}, &batchv1.Job{}))
		}, "5s", "500ms").Should(BeTrue(), "no installer Job with alice's SSH key mounted")
		after := &corev1.ConfigMap{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(cm), after)).To(Succeed())
		Expect(after.Data).To(Equal(cm.Data), "left exactly as planted")
		Expect(k8sClient.Delete(ctx, kc)).To(Succeed())
	})

	It("reads a Secret through a Platform hook's env: refused at admission", func() {
		p := hookEnvPlatform("hook-env")
		refusedAt(mallory.Create(ctx, p), "spec.components[0].hooks.bootstrap.env[0].valueFrom.secretKeyRef.name")
	})

	It("reads a Secret through a Platform hook's env with kubeforge's webhook configurations deleted: refused by the API server's own policy, and with that policy unbound too, stored but never acted on", func() {
		// The webhook configurations, taken away as a broken install or a
		// careless admin would, and put back as they were (CA bundle and all).
		hooks := []client.Object{&admissionregistrationv1.ValidatingWebhookConfiguration{}, &admissionregistrationv1.MutatingWebhookConfiguration{}}
		for i, name := range []string{"kubeforge-validating-webhook-configuration", "kubeforge-mutating-webhook-configuration"} {
			Expect(k8sClient.Get(ctx, client.ObjectKey{Name: name}, hooks[i])).To(Succeed())
		}
		for _, h := range hooks {
			Expect(k8sClient.Delete(ctx, h.DeepCopyObject().(client.Object))).To(Succeed())
		}
		DeferCleanup(func() {
			for _, h := range hooks {
				putBack(h)
			}
		})
		p := hookEnvPlatform("hook-env-no-webhook")
		err := mallory.Create(ctx, p)
		Expect(err).To(HaveOccurred(), "admitted with no webhook")
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("ValidatingAdmissionPolicy 'kubeforge-references-platforms'"))
		Expect(err.Error()).To(ContainSubstring("may not have kubeforge use the Secret alice-token"))

		By("with the references policy's binding deleted too: stored, and the operator makes nothing for it (NotAdmitted)")
		binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: "kubeforge-references-platforms"}, binding)).To(Succeed())
		Expect(k8sClient.Delete(ctx, binding.DeepCopy())).To(Succeed())
		DeferCleanup(putBack, binding)
		unchecked := hookEnvPlatform("hook-env-unchecked")
		// And a database dropped on delete with alice's token as its admin
		// Secret (a name in the cluster, never reached).
		unchecked.Spec.Database = &appsv1alpha1.PlatformDatabase{Engine: appsv1alpha1.DatabasePostgreSQL, Host: "db." + tenancyNS + ".svc.cluster.local",
			AdminSecretRef: corev1.LocalObjectReference{Name: "alice-token"}, DropOnDelete: true}
		unchecked.Spec.Components[0].Database = &appsv1alpha1.ComponentDatabase{Enabled: true}
		Eventually(func() error { return mallory.Create(ctx, unchecked.DeepCopy()) }, "30s").Should(Succeed(), "no check left to refuse it")
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, unchecked))).To(Succeed()) })
		Eventually(func(g Gomega) {
			got := &appsv1alpha1.Platform{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(unchecked), got)).To(Succeed())
			ready := meta.FindStatusCondition(got.Status.Conditions, "Ready")
			g.Expect(ready).NotTo(BeNil())
			g.Expect(ready.Reason).To(Equal("NotAdmitted"))
			g.Expect(ready.Message).To(ContainSubstring("kubeforge.io/readmit"))
		}, "30s").Should(Succeed())
		jobs := &batchv1.JobList{}
		Expect(k8sClient.List(ctx, jobs, client.InNamespace(tenancyNS))).To(Succeed())
		for _, j := range jobs.Items {
			Expect(j.Name).NotTo(HavePrefix(unchecked.Name), "a hook Job for a Platform no admission approved")
		}
		pods := &corev1.PodList{}
		Expect(k8sClient.List(ctx, pods, client.InNamespace(tenancyNS))).To(Succeed())
		for _, p := range pods.Items {
			Expect(p.Name).NotTo(HavePrefix(unchecked.Name), "a Pod for a Platform no admission approved")
		}
		By("its database drop on delete is never taken up: no finalizer, and it goes at once, connecting nowhere with alice's Secret")
		got := &appsv1alpha1.Platform{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(unchecked), got)).To(Succeed())
		Expect(got.Finalizers).NotTo(ContainElement(appsv1alpha1.DatabaseFinalizer))
		Expect(k8sClient.Delete(ctx, got)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(unchecked), &appsv1alpha1.Platform{}))
		}, "15s").Should(BeTrue())
	})

	It("swaps the image beside a Secret reference already on alice's PodSet: refused; a replicas change is not", func() {
		ps := tenantPodSet("alice-app", func(s *corev1.PodSpec) {
			s.Containers[0].Env = []corev1.EnvVar{{Name: "T", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "alice-token"}, Key: "token"}}}}
		})
		Expect(alice.Create(ctx, ps)).To(Succeed())
		Expect(mallory.Get(ctx, client.ObjectKeyFromObject(ps), ps)).To(Succeed())
		// A JSON patch, without a resourceVersion: the operator's own writes
		// (the seal, status) must not turn the refusal into a conflict.
		swap := client.RawPatch(types.JSONPatchType, []byte(`[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"registry.example.com/mallory/exfiltrate:1"}]`))
		refusedAt(mallory.Patch(ctx, ps.DeepCopy(), swap), "spec.template.spec.containers[0].env[0].valueFrom.secretKeyRef.name")
		Expect(mallory.Patch(ctx, ps.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":0}}`)))).
			To(Succeed(), "replicas is harmless: no reference is asked about again")
		Expect(k8sClient.Delete(ctx, ps)).To(Succeed())
	})

	It("names alice as a Workspace's user, or as its owner, to get her retained home: never handed over", func() {
		ws := func() *idev1alpha1.Workspace {
			return &idev1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "home", Namespace: tenancyNS},
				Spec: idev1alpha1.WorkspaceSpec{User: "alice", Started: ptr.To(false), Storage: idev1alpha1.WorkspaceStorage{
					Size: ptr.To(resource.MustParse("1Gi")), ReclaimPolicy: idev1alpha1.ReclaimRetain}}}
		}
		By("alice's Workspace, its home kept when it goes")
		mine := ws()
		Expect(alice.Create(ctx, mine)).To(Succeed())
		home := &corev1.PersistentVolumeClaim{}
		Eventually(func() error {
			return k8sClient.Get(ctx, client.ObjectKey{Namespace: tenancyNS, Name: "home-home"}, home)
		}).Should(Succeed())
		Expect(alice.Delete(ctx, mine)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(mine), &idev1alpha1.Workspace{}))
		}).Should(BeTrue())
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(home), home)).To(Succeed())

		By("mallory's owner record naming alice: refused (mallory may not impersonate her)")
		forged := ws()
		forged.Annotations = map[string]string{"kubeforge.io/owner": victim}
		refusedAt(mallory.Create(ctx, forged), "kubeforge.io/owner")

		By("mallory's Workspace of the same name with user alice: the home stays alice's, no Pod mounts it")
		theirs := ws()
		theirs.Spec.Started = ptr.To(true)
		Expect(mallory.Create(ctx, theirs)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(theirs), theirs)).To(Succeed())
			g.Expect(theirs.Annotations).To(HaveKeyWithValue("kubeforge.io/owner", attacker))
			g.Expect(theirs.Status.Reason).To(Equal("NameConflict"))
		}, "1m").Should(Succeed())
		Consistently(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: tenancyNS, Name: "home"}, &corev1.Pod{}))
		}, "5s", "500ms").Should(BeTrue())
		Expect(k8sClient.Delete(ctx, theirs)).To(Succeed())
	})

	It("mounts alice's retained home claim in a PodSet: refused", func() {
		ps := tenantPodSet("steal-home", func(s *corev1.PodSpec) {
			s.Volumes = []corev1.Volume{{Name: "h", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "home-home"}}}}
		})
		refusedAt(mallory.Create(ctx, ps), "spec.template.spec.volumes[0].persistentVolumeClaim.claimName")
	})

	It("creates a Platform whose StatefulSet would mount the volume a deleted Platform kept (data-shop-db-0): refused", func() {
		kept := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data-shop-db-0", Namespace: tenancyNS},
			Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
		Expect(client.IgnoreAlreadyExists(k8sClient.Create(ctx, kept))).To(Succeed())
		shop := &appsv1alpha1.Platform{ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: tenancyNS},
			Spec: appsv1alpha1.PlatformSpec{ImageRepository: "kubeforge.test", Version: "v1", Components: []appsv1alpha1.PlatformComponent{{
				Name: "db", Image: echoImage, Workload: appsv1alpha1.WorkloadStatefulSet, Command: []string{"sh", "-c", "cat /var/lib/db/*"},
				Storage: &appsv1alpha1.ComponentStorage{Size: resource.MustParse("1Gi")}}}}}
		err := mallory.Create(ctx, shop)
		if err == nil {
			_ = k8sClient.Delete(ctx, shop)
		}
		refusedAt(err, "spec.components[0].storage")
		Expect(err.Error()).To(ContainSubstring("may not create pods in " + tenancyNS))
		Expect(k8sClient.Delete(ctx, kept)).To(Succeed())
	})

	It("runs as a ServiceAccount, or mounts a Secret through a CSI volume: refused", func() {
		refusedAt(mallory.Create(ctx, tenantPodSet("as-robot", func(s *corev1.PodSpec) { s.ServiceAccountName = "alice-robot" })),
			"spec.template.spec.serviceAccountName")
		refusedAt(mallory.Create(ctx, tenantPodSet("csi", func(s *corev1.PodSpec) {
			s.Volumes = []corev1.Volume{{Name: "c", VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{
				Driver: "secrets-store.csi.k8s.io", NodePublishSecretRef: &corev1.LocalObjectReference{Name: "alice-token"}}}}}
		})), "spec.template.spec.volumes[0].csi.nodePublishSecretRef.name")
	})

	It("mounts alice's share with no claim — an inline csi volume, nfs, a hostPath — in a PodSet: refused", func() {
		err := mallory.Create(ctx, tenantPodSet("share", func(s *corev1.PodSpec) {
			s.Volumes = []corev1.Volume{
				{Name: "c", VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "nfs.csi.k8s.io",
					VolumeAttributes: map[string]string{"server": "nfs.alice", "share": "/exports/alice"}}}},
				{Name: "n", VolumeSource: corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: "nfs.alice", Path: "/exports/alice"}}},
				{Name: "h", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/lib"}}},
			}
		}))
		refusedAt(err, "spec.template.spec.volumes[0].csi")
		Expect(err.Error()).To(And(ContainSubstring("spec.template.spec.volumes[1].nfs"), ContainSubstring("spec.template.spec.volumes[2].hostPath"),
			ContainSubstring("may not create pods in "+tenancyNS)))
	})

	It("runs a privileged PodSet (privileged, the node's PIDs, its root as a hostPath) in a namespace whose Pod Security enforces nothing: refused unless granted the level", func() {
		// A namespace of the cluster's default Pod Security (privileged),
		// where mallory may use kubeforge's kinds and nothing else.
		open := tenancyNS + "-open"
		kubeforge := []string{"apps.kubeforge.io", "networking.kubeforge.io", "ide.kubeforge.io", "cluster.kubeforge.io"}
		role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "mallory", Namespace: open}, Rules: []rbacv1.PolicyRule{
			{APIGroups: kubeforge, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}}}
		for _, o := range []client.Object{
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: open}},
			role,
			&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "mallory", Namespace: open},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "mallory"},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: attacker}}},
		} {
			Expect(client.IgnoreAlreadyExists(k8sClient.Create(ctx, o))).To(Succeed())
		}
		root := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: open, Name: "pod-security-probe"},
			Spec: corev1.PodSpec{HostPID: true, Containers: []corev1.Container{{Name: "c", Image: echoImage, SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)}}}}}
		Expect(k8sClient.Create(ctx, root, client.DryRunAll)).To(Succeed(), "the namespace's Pod Security admits a privileged Pod")
		Eventually(func() error {
			return mallory.List(ctx, &appsv1alpha1.PodSetList{}, client.InNamespace(open))
		}).Should(Succeed())

		ps := tenantPodSet("root", func(s *corev1.PodSpec) {
			s.HostPID = true
			s.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
			s.Volumes = []corev1.Volume{{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
		})
		ps.Namespace = open
		ps.Spec.Replicas = ptr.To(int32(0)) // never run here, even when admitted
		err := mallory.Create(ctx, ps.DeepCopy())
		refusedAt(err, "spec.template.spec")
		Expect(err.Error()).To(And(ContainSubstring("may not use podsecuritylevels/privileged in "+open), ContainSubstring("restricted forbids")))

		By("granted the level by an administrator: admitted")
		role.Rules = append(role.Rules, rbacv1.PolicyRule{APIGroups: []string{"kubeforge.io"}, Resources: []string{"podsecuritylevels"},
			ResourceNames: []string{"privileged"}, Verbs: []string{"use"}})
		Expect(k8sClient.Update(ctx, role)).To(Succeed())
		// Without the hostPath, which mounts storage with no claim and so
		// takes the right to create pods besides.
		admitted := ps.DeepCopy()
		admitted.Spec.Template.Spec.Volumes = nil
		Eventually(func() error { return mallory.Create(ctx, admitted.DeepCopy()) }).Should(Succeed())
		Expect(k8sClient.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: open}})).To(Succeed())
	})

	It("puts Jinja in extraVars or in the SSH user, new or on alice's cluster: refused", func() {
		kc := &clusterv1alpha1.KubernetesCluster{ObjectMeta: metav1.ObjectMeta{Name: "jinja", Namespace: tenancyNS},
			Spec: clusterv1alpha1.KubernetesClusterSpec{Version: "v1.31.4", Paused: true,
				Masters:      []clusterv1alpha1.Host{{Address: "127.0.0.1", Name: "cp1"}},
				SSHSecretRef: clusterv1alpha1.SSHSecretReference{Name: "alice-ssh"},
				Installer:    clusterv1alpha1.Installer{ExtraVars: map[string]string{"x": "{{ lookup('pipe','id') }}"}}}}
		refusedAt(alice.Create(ctx, kc.DeepCopy()), "spec.installer.extraVars[x]")
		kc.Spec.Installer.ExtraVars = nil
		Expect(alice.Create(ctx, kc)).To(Succeed())
		Expect(mallory.Get(ctx, client.ObjectKeyFromObject(kc), kc)).To(Succeed())
		// Merge patches without a resourceVersion here and below: the
		// operator's own writes must not turn a refusal into a conflict.
		refusedAt(mallory.Patch(ctx, kc.DeepCopy(), client.RawPatch(types.MergePatchType,
			[]byte(`{"spec":{"sshSecretRef":{"user":"{{ lookup('pipe','id') }}"}}}`))), "spec.sshSecretRef.user")
		Expect(k8sClient.Delete(ctx, kc)).To(Succeed())
	})

	It("sets installer variables that would have kubespray run her command in the installer's Pod (download_localhost, image_pull_command_on_localhost): refused", func() {
		kc := &clusterv1alpha1.KubernetesCluster{ObjectMeta: metav1.ObjectMeta{Name: "pull-command", Namespace: tenancyNS},
			Spec: clusterv1alpha1.KubernetesClusterSpec{Version: "v1.31.4", Paused: true,
				Masters:      []clusterv1alpha1.Host{{Address: "127.0.0.1", Name: "cp1"}},
				SSHSecretRef: clusterv1alpha1.SSHSecretReference{Name: "alice-ssh"},
				Installer: clusterv1alpha1.Installer{ExtraVars: clusterv1alpha1.InstallerVariables{
					"download_run_once": "true", "download_localhost": "true",
					"image_pull_command_on_localhost": "python3 -c 'import os; os.system(\"id\")'"}}}}
		err := mallory.Create(ctx, kc)
		refusedAt(err, "spec.installer.extraVars[download_localhost]")
		refusedAt(err, "spec.installer.extraVars[image_pull_command_on_localhost]")
	})

	It("sends a looping and a value-building config template: each a field error within a second, and the manager back at rest within seconds", func() {
		p := func(name, tmpl string) *appsv1alpha1.Platform {
			values := map[string]string{}
			for i := 0; i < 100; i++ {
				values[fmt.Sprintf("v%d", i)] = "x"
			}
			return &appsv1alpha1.Platform{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: tenancyNS},
				Spec: appsv1alpha1.PlatformSpec{ImageRepository: "kubeforge.test", Version: "v1", Values: values,
					Components: []appsv1alpha1.PlatformComponent{{Name: "api", Image: echoImage, Config: map[string]string{"app.conf": tmpl}}}}}
		}
		before := managerUsage()
		for name, tmpl := range map[string]string{
			"loop":  strings.Repeat("{{range .Values}}", 6) + strings.Repeat("{{end}}", 6),
			"build": `{{$a := printf "%0100000000d" 1}}{{$b := printf "%s%s%s%s" $a $a $a $a}}{{len $b}}`,
		} {
			t0 := time.Now()
			err := mallory.Create(ctx, p("tmpl-"+name, tmpl))
			took := time.Since(t0)
			refusedAt(err, "spec.components[0].config[app.conf]")
			appendArtifact("figures.txt", fmt.Sprintf("tenancy: the %s template refused in %s\n", name, took.Round(time.Millisecond)))
			Expect(took).To(BeNumerically("<", time.Second))
		}
		time.Sleep(2 * time.Second)
		after := managerUsage()
		appendArtifact("figures.txt", fmt.Sprintf("tenancy: after the hostile templates, manager CPU %.3f cores (before %.3f), RSS %s (before %s)\n",
			after.cpu, before.cpu, mib(after.rss), mib(before.rss)))
		Expect(after.cpu).To(BeNumerically("<", 0.2), "the manager is back at rest")
		Expect(after.rss).To(BeNumerically("<", before.rss+50<<20), "the manager's memory is back near where it was")
	})

	It("asks for a NodePort Balancer, an Ingress, a Certificate from an issuer, and snippet annotations: refused", func() {
		b := &networkingv1alpha1.Balancer{ObjectMeta: metav1.ObjectMeta{Name: "np", Namespace: tenancyNS},
			Spec: networkingv1alpha1.BalancerSpec{ServiceType: corev1.ServiceTypeNodePort,
				Backends: []networkingv1alpha1.BalancerBackend{{Name: "a", Selector: map[string]string{"app": "a"}}},
				Ports:    []networkingv1alpha1.BalancerPort{{Name: "http", Port: 80}}}}
		refusedAt(mallory.Create(ctx, b), "spec.serviceType")
		ws := &idev1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "exposed", Namespace: tenancyNS},
			Spec: idev1alpha1.WorkspaceSpec{Ingress: &idev1alpha1.WorkspaceIngress{Host: "ide.example.com",
				TLS: &idev1alpha1.WorkspaceTLS{IssuerRef: idev1alpha1.IssuerReference{Name: "prod-ca", Kind: "ClusterIssuer"}}}}}
		err := mallory.Create(ctx, ws)
		refusedAt(err, "spec.ingress.host")
		Expect(err.Error()).To(ContainSubstring("spec.ingress.tls.issuerRef"))
		p := &appsv1alpha1.Platform{ObjectMeta: metav1.ObjectMeta{Name: "snippet", Namespace: tenancyNS},
			Spec: appsv1alpha1.PlatformSpec{ImageRepository: "kubeforge.test", Version: "v1", Components: []appsv1alpha1.PlatformComponent{{
				Name: "web", Image: echoImage, Ports: []appsv1alpha1.ComponentPort{{Name: "http", Port: 8080}},
				Ingress: &appsv1alpha1.ComponentIngress{Host: "shop.example.com", Annotations: map[string]string{
					"nginx.ingress.kubernetes.io/server-snippet": "location /x { proxy_pass http://169.254.169.254; }"}}}}}}
		refusedAt(alice.Create(ctx, p), "spec.components[0].ingress.annotations[nginx.ingress.kubernetes.io/server-snippet]")
	})

	It("serves a host past the Ingress rules through an alias that is a regular expression, or has a certificate issued by tls-acme: refused", func() {
		for key, value := range map[string]string{
			"nginx.ingress.kubernetes.io/server-alias": `~^bank\.example\.org$|x.shop.example.com`,
			"kubernetes.io/tls-acme":                   "true",
		} {
			p := &appsv1alpha1.Platform{ObjectMeta: metav1.ObjectMeta{Name: "alias", Namespace: tenancyNS},
				Spec: appsv1alpha1.PlatformSpec{ImageRepository: "kubeforge.test", Version: "v1", Components: []appsv1alpha1.PlatformComponent{{
					Name: "web", Image: echoImage, Ports: []appsv1alpha1.ComponentPort{{Name: "http", Port: 8080}},
					Ingress: &appsv1alpha1.ComponentIngress{Host: "shop.example.com", Annotations: map[string]string{key: value}}}}}}
			refusedAt(alice.Create(ctx, p), "spec.components[0].ingress.annotations["+key+"]")
		}
	})

	It("patches only the owner record of alice's Workspace, with and without the webhooks: refused", func() {
		ws := &idev1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "owned", Namespace: tenancyNS},
			Spec: idev1alpha1.WorkspaceSpec{Started: ptr.To(false)}}
		Expect(alice.Create(ctx, ws)).To(Succeed())
		Expect(ws.Annotations).To(HaveKeyWithValue("kubeforge.io/owner", victim))
		steal := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"kubeforge.io/owner":"`+attacker+`","kubeforge.io/created-by":"`+attacker+`"}}}`))
		try := func() {
			GinkgoHelper()
			err := mallory.Patch(ctx, ws.DeepCopy(), steal)
			if err == nil {
				// The mutating webhook keeps the record as it was.
				got := &idev1alpha1.Workspace{}
				Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(ws), got)).To(Succeed())
				Expect(got.Annotations).To(HaveKeyWithValue("kubeforge.io/owner", victim))
				Expect(got.Annotations).To(HaveKeyWithValue("kubeforge.io/created-by", victim))
				return
			}
			Expect(err.Error()).To(ContainSubstring("owner record"))
		}
		By("through the webhooks")
		try()

		By("with the webhook configurations deleted: the ValidatingAdmissionPolicy refuses it")
		saved := filepath.Join(artifacts, "webhook-configurations.yaml")
		out, err := kubectl("get", "mutatingwebhookconfiguration/kubeforge-mutating-webhook-configuration",
			"validatingwebhookconfiguration/kubeforge-validating-webhook-configuration", "-o", "yaml")
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(saved, []byte(out), 0o644)).To(Succeed())
		_, err = kubectl("delete", "mutatingwebhookconfiguration/kubeforge-mutating-webhook-configuration",
			"validatingwebhookconfiguration/kubeforge-validating-webhook-configuration")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() {
			_, err := kubectl("create", "-f", saved)
			Expect(err).NotTo(HaveOccurred())
		})
		Eventually(func(g Gomega) {
			err := mallory.Patch(ctx, ws.DeepCopy(), steal)
			g.Expect(err).To(HaveOccurred())
			g.Expect(err.Error()).To(ContainSubstring("owner record"))
		}, "30s").Should(Succeed())
		got := &idev1alpha1.Workspace{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(ws), got)).To(Succeed())
		Expect(got.Annotations).To(HaveKeyWithValue("kubeforge.io/owner", victim))
		By("nor may a create name someone else without the webhooks")
		forged := &idev1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "forged", Namespace: tenancyNS,
			Annotations: map[string]string{"kubeforge.io/owner": victim}}, Spec: idev1alpha1.WorkspaceSpec{Started: ptr.To(false)}}
		err = mallory.Create(ctx, forged)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("kubeforge.io/owner"))
		Expect(k8sClient.Delete(ctx, ws)).To(Succeed())
	})

	It("edits alice's Workspace to run another image with her home and password: refused", func() {
		ws := &idev1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "alices-ide", Namespace: tenancyNS},
			Spec: idev1alpha1.WorkspaceSpec{Started: ptr.To(false)}}
		Expect(alice.Create(ctx, ws)).To(Succeed())
		Expect(mallory.Get(ctx, client.ObjectKeyFromObject(ws), ws)).To(Succeed())
		err := mallory.Patch(ctx, ws.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"image":"registry.example.com/mallory/ide:1"}}`)))
		refusedAt(err, "spec")
		// The webhook names her home first, the references policy (which
		// answers first where both are installed) her password Secret.
		Expect(err.Error()).To(Or(ContainSubstring("alices-ide-home"), ContainSubstring("alices-ide-auth")))
		Expect(k8sClient.Delete(ctx, ws)).To(Succeed())
	})

	It("asks alice's Platform to rotate its generated Secrets, or her cluster to retry, by annotation: refused", func() {
		p := &appsv1alpha1.Platform{ObjectMeta: metav1.ObjectMeta{Name: "alices-plat", Namespace: tenancyNS},
			Spec: appsv1alpha1.PlatformSpec{ImageRepository: "kubeforge.test", Version: "v1",
				Secrets:    []appsv1alpha1.PlatformSecret{{Name: "session", Keys: []string{"key"}}},
				Components: []appsv1alpha1.PlatformComponent{{Name: "api", Image: echoImage, Replicas: ptr.To(int32(0))}}}}
		Expect(alice.Create(ctx, p)).To(Succeed())
		err := mallory.Patch(ctx, p.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"kubeforge.io/rotate-secret":"session"}}}`)))
		refusedAt(err, "spec")
		Expect(err.Error()).To(ContainSubstring("alices-plat-session"))
		Expect(k8sClient.Delete(ctx, p)).To(Succeed())

		kc := &clusterv1alpha1.KubernetesCluster{ObjectMeta: metav1.ObjectMeta{Name: "retried", Namespace: tenancyNS},
			Spec: clusterv1alpha1.KubernetesClusterSpec{Version: "v1.31.4", Paused: true,
				Masters:      []clusterv1alpha1.Host{{Address: "127.0.0.1", Name: "cp1"}},
				SSHSecretRef: clusterv1alpha1.SSHSecretReference{Name: "alice-ssh"}}}
		Expect(alice.Create(ctx, kc)).To(Succeed())
		refusedAt(mallory.Patch(ctx, kc.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"kubeforge.io/retry":"1"}}}`))),
			"spec.sshSecretRef.name")
		Expect(k8sClient.Delete(ctx, kc)).To(Succeed())
	})

	It("writes terminal escapes into the status of alice's PodSet: kubectl kubeforge shows them escaped, never sends them", func() {
		ps := tenantPodSet("alice-screen", func(*corev1.PodSpec) {})
		Expect(alice.Create(ctx, ps)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, ps))).To(Succeed()) })
		// Whoever may write a PodSet may write its status: a condition
		// that sets the terminal's title, clears the screen and reverses
		// the text after it, for whoever reads alice's PodSet next.
		planted := "\x1b]0;owned\x07\x1b[2Jplanted by mallory\u202e"
		Eventually(func(g Gomega) {
			cur := &appsv1alpha1.PodSet{}
			g.Expect(mallory.Get(ctx, client.ObjectKeyFromObject(ps), cur)).To(Succeed())
			if meta.FindStatusCondition(cur.Status.Conditions, "Note") == nil {
				withNote := cur.DeepCopy()
				meta.SetStatusCondition(&withNote.Status.Conditions, metav1.Condition{Type: "Note", Status: metav1.ConditionTrue,
					Reason: "Planted", Message: planted})
				g.Expect(mallory.Status().Patch(ctx, withNote, client.MergeFrom(cur))).To(Succeed())
			}
			out, err := plugin("-n", tenancyNS, "status", "pset/alice-screen")
			g.Expect(err).NotTo(HaveOccurred())
			for _, control := range []string{"\x1b", "\x07", "\u202e"} {
				g.Expect(out).NotTo(ContainSubstring(control), "a control character reached the terminal")
			}
			g.Expect(out).To(ContainSubstring(`\u001b]0;owned\u0007\u001b[2Jplanted by mallory\u202e`), "the planted message, shown escaped")
		}, "1m", "1s").Should(Succeed())
	})

	It("labels a PodSet's Pods as alice's IDE, to join its Service: refused", func() {
		ps := tenantPodSet("joins-ide", func(*corev1.PodSpec) {})
		ps.Spec.Template.Labels["ide.kubeforge.io/workspace"] = "alices-ide"
		refusedAt(mallory.Create(ctx, ps), "spec.template.metadata.labels[ide.kubeforge.io/workspace]")
	})

	It("plants 300 ConfigMaps of 1000 KiB (293 MiB, beyond the replicas' 256 MiB limit) labelled managed-by kubeforge: both manager replicas start and stay within their memory limit", func() {
		// Together more than a replica's memory limit: a cache that kept
		// them would not start.
		const count, size = 300, 1000 << 10
		data := strings.Repeat("k", size)
		var wg sync.WaitGroup
		errs := make(chan error, count)
		work := make(chan int)
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer GinkgoRecover()
				for i := range work {
					errs <- client.IgnoreAlreadyExists(mallory.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
						Name: fmt.Sprintf("planted-%03d", i), Namespace: tenancyNS,
						Labels: map[string]string{"app.kubernetes.io/managed-by": "kubeforge", "planted": "yes"}},
						Data: map[string]string{"blob": data}}))
				}
			}()
		}
		t0 := time.Now()
		for i := 0; i < count; i++ {
			work <- i
		}
		close(work)
		wg.Wait()
		close(errs)
		for err := range errs {
			Expect(err).NotTo(HaveOccurred())
		}
		DeferCleanup(func() {
			_, err := kubectl("-n", tenancyNS, "delete", "configmap", "-l", "planted=yes", "--wait=false")
			Expect(err).NotTo(HaveOccurred())
		})
		planted := time.Since(t0)

		By("both replicas started anew, so that each lists everything there is")
		_, err := kubectl("-n", managerNS, "delete", "pod", "-l", "control-plane=controller-manager")
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			pods := &corev1.PodList{}
			g.Expect(k8sClient.List(ctx, pods, client.InNamespace(managerNS), client.MatchingLabels{"control-plane": "controller-manager"})).To(Succeed())
			ready := 0
			for _, p := range pods.Items {
				if p.DeletionTimestamp == nil && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].Ready {
					g.Expect(p.Status.ContainerStatuses[0].RestartCount).To(BeZero(), "%s restarted", p.Name)
					ready++
				}
			}
			g.Expect(ready).To(Equal(2))
		}, "3m", "1s").Should(Succeed())
		// The PodSet controller still works for alice with them present. Ready
		// Pods are not yet a routed webhook Service: a dry run answers once
		// they are.
		ps := tenantPodSet("still-works", func(*corev1.PodSpec) {})
		Eventually(func() error { return alice.Create(ctx, ps.DeepCopy(), client.DryRunAll) }, "1m", "500ms").Should(Succeed())
		Expect(alice.Create(ctx, ps)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(ps), ps)).To(Succeed())
			g.Expect(ps.Status.ReadyReplicas).To(Equal(*ps.Spec.Replicas))
		}, "2m").Should(Succeed())
		time.Sleep(3 * time.Second)
		u := managerUsage()
		appendArtifact("figures.txt", fmt.Sprintf("tenancy: 300 planted 1000 KiB ConfigMaps (%s to plant); each manager replica at rest: RSS %s, limit 256 MiB\n",
			planted.Round(time.Second), strings.Join(u.each, ", ")))
		for _, rss := range u.rssEach {
			Expect(rss).To(BeNumerically("<", 256<<20))
		}
		Expect(k8sClient.Delete(ctx, ps)).To(Succeed())
	})
})

// usage is what the manager's processes on the real node use: their CPU
// over a short window, in cores, and their resident memory.
type usage struct {
	cpu     float64
	rss     int64
	rssEach []int64
	each    []string
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

// managerUsage reads /proc for the manager's processes: the real node runs
// on this machine, so its containers' processes are this machine's.
func managerUsage() usage {
	pids := func() []string {
		var out []string
		procs, _ := filepath.Glob("/proc/[0-9]*")
		for _, p := range procs {
			exe, err := os.Readlink(p + "/exe")
			cg, _ := os.ReadFile(p + "/cgroup")
			if err == nil && filepath.Base(exe) == "manager" && strings.Contains(string(cg), "kubeforge-real") {
				out = append(out, p)
			}
		}
		return out
	}
	ticks := func(p string) int64 {
		b, err := os.ReadFile(p + "/stat")
		if err != nil {
			return 0
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
		u, _ := strconv.ParseInt(f[11], 10, 64)
		s, _ := strconv.ParseInt(f[12], 10, 64)
		return u + s
	}
	rss := func(p string) int64 {
		f, err := os.Open(p + "/status")
		if err != nil {
			return 0
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				return kb << 10
			}
		}
		return 0
	}
	ps := pids()
	Expect(ps).To(HaveLen(2), "the two manager processes on the real node")
	var t0 int64
	for _, p := range ps {
		t0 += ticks(p)
	}
	time.Sleep(time.Second)
	var u usage
	var t1 int64
	for _, p := range ps {
		t1 += ticks(p)
		r := rss(p)
		u.rss += r
		u.rssEach = append(u.rssEach, r)
		u.each = append(u.each, mib(r))
	}
	u.cpu = float64(t1-t0) / 100 // USER_HZ
	return u
}
