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

package olm

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/test/e2ekit"
)

const workNS = "olm-e2e"

// get reads one field of an object with a jsonpath; "" when it is not there.
func get(ns, what, path string) string {
	out, _ := kubectl("-n", ns, "get", what, "-o", "jsonpath="+path)
	return strings.TrimSpace(out)
}

// subscribe subscribes the operators namespace to kubeforge's candidate
// channel from our catalog, as docs/install.md does.
func subscribe() { subscribeIn(operatorsNS) }

// subscribeIn subscribes namespace ns, whose OperatorGroup says which
// namespaces the operator serves.
func subscribeIn(ns string) {
	kubectlApply(`apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata:
  name: kubeforge
  namespace: ` + ns + `
spec:
  channel: candidate
  name: kubeforge
  source: kubeforge-catalog
  sourceNamespace: ` + catalogNS + `
`)
}

// installed waits for the CSV to succeed in the operators namespace and
// for its two manager Pods to be Ready.
func installed(csv, img string) { installedIn(operatorsNS, csv, img) }

func installedIn(ns, csv, img string) {
	Eventually(func(g Gomega) {
		g.Expect(get(ns, "csv/"+csv, "{.status.phase}")).To(Equal("Succeeded"))
	}).Should(Succeed(), "CSV %s", csv)
	Eventually(func(g Gomega) {
		pods := &corev1.PodList{}
		g.Expect(k8sClient.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{"control-plane": "controller-manager"})).To(Succeed())
		g.Expect(pods.Items).To(HaveLen(2))
		for _, p := range pods.Items {
			g.Expect(p.DeletionTimestamp).To(BeNil())
			g.Expect(p.Spec.Containers[0].Image).To(Equal(img))
			g.Expect(p.Status.ContainerStatuses).NotTo(BeEmpty())
			g.Expect(p.Status.ContainerStatuses[0].Ready).To(BeTrue())
		}
	}).Should(Succeed())
}

// uninstall deletes the Subscription and the CSV, as OLM documents, and
// waits until the manager's Pods are gone.
func uninstall(csv string) { uninstallFrom(operatorsNS, csv) }

func uninstallFrom(ns, csv string) {
	_, err := kubectl("-n", ns, "delete", "subscription", "kubeforge", "--ignore-not-found")
	Expect(err).NotTo(HaveOccurred())
	_, err = kubectl("-n", ns, "delete", "csv", csv, "--ignore-not-found")
	Expect(err).NotTo(HaveOccurred())
	Eventually(func(g Gomega) {
		pods := &corev1.PodList{}
		g.Expect(k8sClient.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{"control-plane": "controller-manager"})).To(Succeed())
		g.Expect(pods.Items).To(BeEmpty())
	}).Should(Succeed())
}

func podSet(name string, replicas *int32, container string) *appsv1alpha1.PodSet {
	return podSetIn(workNS, name, replicas, container)
}

func podSetIn(ns, name string, replicas *int32, container string) *appsv1alpha1.PodSet {
	return &appsv1alpha1.PodSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1alpha1.PodSetSpec{
			Replicas: replicas,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				// Restricted, as a tenant's must be: a template below it
				// needs a stamp, which an operator installed later with a
				// key of its own (run bundle) would not trust.
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: ptr.To(int64(1)),
					SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
					Containers: []corev1.Container{{Name: container, Image: echoImage, SecurityContext: &corev1.SecurityContext{
						AllowPrivilegeEscalation: ptr.To(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}}},
				},
			},
		},
	}
}

// ready waits for the PodSet to report n ready replicas.
func ready(name string, n int32) { readyIn(workNS, name, n) }

func readyIn(ns, name string, n int32) {
	Eventually(func(g Gomega) {
		ps := &appsv1alpha1.PodSet{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, ps)).To(Succeed())
		g.Expect(ps.Status.ReadyReplicas).To(Equal(n))
		g.Expect(ps.Status.ObservedGeneration).To(Equal(ps.Generation))
	}).Should(Succeed())
}

// throughWebhook runs a write until it is not refused for want of the
// webhook. Right after an install, Ready manager Pods are not yet a
// routed webhook Service (kube-proxy programs its endpoints a moment
// later): such a refusal is tried again, anything else fails at once.
func throughWebhook(write func() error) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		err := write()
		if err != nil && strings.Contains(err.Error(), "failed calling webhook") {
			g.Expect(err).NotTo(HaveOccurred())
		}
		Expect(err).NotTo(HaveOccurred())
	}, "1m", "500ms").Should(Succeed())
}

// scale patches a PodSet's replicas.
func scale(name string, n int32) {
	GinkgoHelper()
	throughWebhook(func() error {
		_, err := kubectl("-n", workNS, "patch", "podset", name, "--type", "merge", "-p", `{"spec":{"replicas":`+strconv.Itoa(int(n))+`}}`)
		return err
	})
}

// createThroughWebhook creates obj once the webhook answers.
func createThroughWebhook(obj client.Object) {
	GinkgoHelper()
	throughWebhook(func() error { return k8sClient.Create(ctx, obj) })
}

var _ = Describe("Installed by OLM", Ordered, Label("olm"), func() {
	var (
		podSetUID types.UID
		firstPod  types.UID
	)

	It("installs from the catalog image, on a cluster without prometheus-operator's CRDs", func() {
		_, err := kubectl("get", "crd", "servicemonitors.monitoring.coreos.com")
		Expect(err).To(HaveOccurred(), "this step proves the install without prometheus-operator's CRDs")

		timed("catalog READY, Subscription, InstallPlan Complete, CSV Succeeded", func() {
			kubectlApply(`apiVersion: operators.coreos.com/v1alpha1
kind: CatalogSource
metadata:
  name: kubeforge-catalog
  namespace: ` + catalogNS + `
spec:
  sourceType: grpc
  image: ` + catalog + `
  displayName: kubeforge
  publisher: kubeforge
`)
			Eventually(func(g Gomega) {
				g.Expect(get(catalogNS, "catalogsource/kubeforge-catalog", "{.status.connectionState.lastObservedState}")).To(Equal("READY"))
			}).Should(Succeed())
			subscribe()
			var plan string
			Eventually(func(g Gomega) {
				plan = get(operatorsNS, "subscription/kubeforge", "{.status.installPlanRef.name}")
				g.Expect(plan).NotTo(BeEmpty())
			}).Should(Succeed())
			Eventually(func(g Gomega) {
				g.Expect(get(operatorsNS, "installplan/"+plan, "{.status.phase}")).To(Equal("Complete"))
			}).Should(Succeed())
			installed("kubeforge.v"+version, image)
		})

		By("the manager serves the webhook certificate OLM generated")
		Expect(get(operatorsNS, "deployment/kubeforge-controller-manager",
			"{.spec.template.spec.volumes[*].secret.secretName}")).To(ContainSubstring("kubeforge-controller-manager-service-cert"))
		hooks, err := kubectl("get", "validatingwebhookconfigurations", "-l", "olm.owner=kubeforge.v"+version,
			"-o", "jsonpath={.items[*].webhooks[*].clientConfig.service.namespace}")
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.Fields(hooks)).NotTo(BeEmpty())
		for _, ns := range strings.Fields(hooks) {
			Expect(ns).To(Equal(operatorsNS))
		}

		By("each replica's API serves the certificate the manager made for its Service, which verifies against the CA it published")
		Eventually(func(g Gomega) {
			ca := get(operatorsNS, "configmap/kubeforge-api-ca", `{.data.ca\.crt}`)
			pool := x509.NewCertPool()
			g.Expect(pool.AppendCertsFromPEM([]byte(ca))).To(BeTrue(), "the CA is published")
			pods := &corev1.PodList{}
			g.Expect(k8sClient.List(ctx, pods, client.InNamespace(operatorsNS), client.MatchingLabels{"control-plane": "controller-manager"})).To(Succeed())
			g.Expect(pods.Items).To(HaveLen(2))
			for _, p := range pods.Items {
				conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", net.JoinHostPort(p.Status.PodIP, "8082"),
					&tls.Config{RootCAs: pool, ServerName: "kubeforge-api." + operatorsNS + ".svc"})
				g.Expect(err).NotTo(HaveOccurred(), "pod %s", p.Name)
				g.Expect(conn.ConnectionState().PeerCertificates[0].DNSNames).NotTo(ContainElement("localhost"), "not the self-signed one")
				_ = conn.Close()
			}
		}).Should(Succeed())
	})

	It("defaults, validates and reconciles a PodSet through OLM's webhook configuration", func() {
		_, err := kubectl("create", "namespace", workNS)
		Expect(err).NotTo(HaveOccurred())

		By("a bad PodSet is refused with the field error")
		Eventually(func(g Gomega) {
			err := k8sClient.Create(ctx, podSet("bad", nil, "Bad_Name"))
			g.Expect(err).To(MatchError(ContainSubstring(`spec.template.spec.containers[0].name: Invalid value: "Bad_Name"`)))
		}).Should(Succeed())

		By("a PodSet without replicas is defaulted to 1 and its Pod runs on the real node")
		ps := podSet("web", nil, "web")
		Expect(k8sClient.Create(ctx, ps)).To(Succeed())
		Expect(ps.Spec.Replicas).To(Equal(ptr.To(appsv1alpha1.PodSetDefaultReplicas)))
		ready("web", 1)
		podSetUID = ps.UID
		pods := &corev1.PodList{}
		Expect(k8sClient.List(ctx, pods, client.InNamespace(workNS), client.MatchingLabels{"app": "web"})).To(Succeed())
		Expect(pods.Items).To(HaveLen(1))
		firstPod = pods.Items[0].UID

		By("the owner record holds without the webhooks: the manager applied the policy an OLM bundle cannot carry")
		Expect(get("default", "validatingadmissionpolicybinding/kubeforge-owner-record", "{.spec.policyName}")).To(Equal("kubeforge-owner-record"))
		for _, r := range []string{"podsets", "platforms", "workspaces", "kubernetesclusters"} {
			Expect(get("default", "validatingadmissionpolicybinding/kubeforge-references-"+r, "{.spec.policyName}")).To(Equal("kubeforge-references-"+r),
				"the references policies too, so that references are checked without the webhooks")
		}
		err = k8sClient.Patch(ctx, ps, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"kubeforge.io/owner":"someone-else"}}}`)))
		Expect(err).NotTo(HaveOccurred(), "the mutating webhook keeps the record as it was")
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(ps), ps)).To(Succeed())
		Expect(ps.Annotations).NotTo(HaveKeyWithValue("kubeforge.io/owner", "someone-else"))
	})

	It("upgrades the running operator to a second bundle added to the catalog, and keeps reconciling what exists", func() {
		out := GinkgoT().TempDir()
		timed("second bundle and catalog built (hack/olm generator, hack/olm.sh)", func() {
			_, err := e2ekit.Run(filepath.Join(root, "hack", "olm"), nil, nil, "go", "run", "./cmd/bundle", "--root", "../..",
				"--version", next, "--image", nextImage, "--bundle-image", nextBundle,
				"--replaces", "kubeforge.v"+version, "--previous-catalog", "../../catalog/kubeforge/catalog.yaml", "--out", out)
			Expect(err).NotTo(HaveOccurred())
			_, err = run([]string{"IMG=" + nextImage, "VERSION=" + next}, "hack/images.sh", "manager")
			Expect(err).NotTo(HaveOccurred())
			_, err = run([]string{"BUNDLE_IMG=" + nextBundle, "BUNDLE_DIR=" + filepath.Join(out, "bundle"),
				"BUNDLE_DOCKERFILE=" + filepath.Join(out, "bundle.Dockerfile")}, "hack/olm.sh", "bundle-image")
			Expect(err).NotTo(HaveOccurred())
			_, err = run([]string{"CATALOG_IMG=" + nextCatalog, "CATALOG_DIR=" + filepath.Join(out, "catalog")}, "hack/olm.sh", "catalog-image")
			Expect(err).NotTo(HaveOccurred())
		})

		timed("upgrade: catalog updated until CSV v"+next+" Succeeded and v"+version+" gone", func() {
			_, err := kubectl("-n", catalogNS, "patch", "catalogsource", "kubeforge-catalog", "--type", "merge",
				"-p", `{"spec":{"image":"`+nextCatalog+`"}}`)
			Expect(err).NotTo(HaveOccurred())
			installed("kubeforge.v"+next, nextImage)
			Expect(get(operatorsNS, "csv/kubeforge.v"+next, "{.spec.replaces}")).To(Equal("kubeforge.v" + version))
			Eventually(func(g Gomega) {
				_, err := kubectl("-n", operatorsNS, "get", "csv", "kubeforge.v"+version)
				g.Expect(err).To(MatchError(ContainSubstring("NotFound")))
			}).Should(Succeed())
		})

		By("the PodSet made before is the same object with the same Pod, and the new manager reconciles it")
		ps := &appsv1alpha1.PodSet{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: workNS, Name: "web"}, ps)).To(Succeed())
		Expect(ps.UID).To(Equal(podSetUID))
		pod := &corev1.PodList{}
		Expect(k8sClient.List(ctx, pod, client.InNamespace(workNS), client.MatchingLabels{"app": "web"})).To(Succeed())
		Expect(pod.Items).To(HaveLen(1))
		Expect(pod.Items[0].UID).To(Equal(firstPod))
		scale("web", 2)
		ready("web", 2)
	})

	It("uninstalls: deleting the Subscription and the CSV removes the operator; the CRDs and the PodSet stay", func() {
		uninstall("kubeforge.v" + next)
		for _, crd := range []string{"podsets.apps.kubeforge.io", "platforms.apps.kubeforge.io", "balancers.networking.kubeforge.io",
			"workspaces.ide.kubeforge.io", "kubernetesclusters.cluster.kubeforge.io"} {
			_, err := kubectl("get", "crd", crd)
			Expect(err).NotTo(HaveOccurred(), crd)
		}
		ps := &appsv1alpha1.PodSet{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: workNS, Name: "web"}, ps)).To(Succeed())
		Expect(ps.UID).To(Equal(podSetUID))
		Expect(ps.DeletionTimestamp).To(BeNil())
	})

	It("installs the same on a cluster serving prometheus-operator's CRDs, and its monitoring objects apply there", func() {
		_, err := run(nil, "hack/addons.sh", "monitoring-crds")
		Expect(err).NotTo(HaveOccurred())
		timed("install with prometheus-operator's CRDs served", func() {
			subscribe()
			installed("kubeforge.v"+next, nextImage)
		})
		_, err = kubectl("apply", "-n", operatorsNS, "-k", "config/manifests/monitoring")
		Expect(err).NotTo(HaveOccurred())
		Expect(get(operatorsNS, "servicemonitor/kubeforge-controller-manager-metrics-monitor", "{.spec.selector.matchLabels.control-plane}")).
			To(Equal("controller-manager"))
		svc := get(operatorsNS, "service", `{.items[?(@.metadata.labels.control-plane=="controller-manager")].metadata.name}`)
		Expect(svc).To(ContainSubstring("kubeforge-controller-manager-metrics-service"), "the ServiceMonitor selects the bundle's metrics Service")
		ready("web", 2)
		_, err = kubectl("delete", "-n", operatorsNS, "-k", "config/manifests/monitoring")
		Expect(err).NotTo(HaveOccurred())
		uninstall("kubeforge.v" + next)
	})

	It("installs the bundle image as operator-sdk run bundle does", func() {
		const ns = "kubeforge-run-bundle"
		timed("run bundle (hack/olm.sh run-bundle) until CSV Succeeded", func() {
			_, err := run([]string{"BUNDLE_IMG=" + bundle, "NAMESPACE=" + ns}, "hack/olm.sh", "run-bundle")
			Expect(err).NotTo(HaveOccurred())
		})
		Expect(get(ns, "csv/kubeforge.v"+version, "{.status.phase}")).To(Equal("Succeeded"))
		Eventually(func(g Gomega) {
			pods := &corev1.PodList{}
			g.Expect(k8sClient.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{"control-plane": "controller-manager"})).To(Succeed())
			g.Expect(pods.Items).To(HaveLen(2))
			for _, p := range pods.Items {
				g.Expect(p.Spec.Containers[0].Image).To(Equal(image))
				g.Expect(p.Status.ContainerStatuses).NotTo(BeEmpty())
				g.Expect(p.Status.ContainerStatuses[0].Ready).To(BeTrue())
			}
		}).Should(Succeed())
		By("the operator it installed reconciles the PodSet made by the first install")
		scale("web", 1)
		ready("web", 1)
		_, err := run([]string{"NAMESPACE=" + ns}, "hack/olm.sh", "run-bundle-cleanup")
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			out, err := kubectl("-n", ns, "get", "pods", "-o", "name")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(strings.TrimSpace(out)).To(BeEmpty())
		}).Should(Succeed())
	})

	It("installs for one namespace (SingleNamespace): reconciles there, ignores another, and cannot read a Secret elsewhere", func() {
		const opNS, target = "kubeforge-single", "olm-tenant"
		manager := "system:serviceaccount:" + opNS + ":kubeforge-controller-manager"
		for _, ns := range []string{opNS, target} {
			_, err := kubectl("create", "namespace", ns)
			Expect(err).NotTo(HaveOccurred())
		}
		timed("SingleNamespace install: OperatorGroup for "+target+", Subscription, CSV Succeeded", func() {
			kubectlApply(`apiVersion: operators.coreos.com/v1
kind: OperatorGroup
metadata:
  name: kubeforge
  namespace: ` + opNS + `
spec:
  targetNamespaces: [` + target + `]
`)
			subscribeIn(opNS)
			installedIn(opNS, "kubeforge.v"+next, nextImage)
		})
		Expect(get(opNS, "deployment/kubeforge-controller-manager", "{.spec.template.metadata.annotations.olm\\.targetNamespaces}")).To(Equal(target),
			"OLM hands the manager its target namespace (WATCH_NAMESPACE)")

		By("a PodSet in the target namespace is defaulted by the webhook OLM scoped to it, and its Pod runs")
		Eventually(func(g Gomega) {
			labels, err := kubectl("get", "namespace", target, "-o", "jsonpath={.metadata.labels}")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(labels).To(ContainSubstring("olm.operatorgroup.uid/"), "OLM labels the target namespace its webhooks select")
		}).Should(Succeed())
		tenant := podSetIn(target, "tenant", nil, "web")
		createThroughWebhook(tenant)
		Expect(tenant.Spec.Replicas).To(Equal(ptr.To(appsv1alpha1.PodSetDefaultReplicas)))
		readyIn(target, "tenant", 1)

		By("a PodSet in another namespace is not acted upon: its new replicas stay unobserved and no Pod is added")
		ps := &appsv1alpha1.PodSet{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: workNS, Name: "web"}, ps)).To(Succeed())
		Expect(ps.Status.ObservedGeneration).To(Equal(ps.Generation), "run-bundle's operator reconciled it before it was removed")
		_, err := kubectl("-n", workNS, "patch", "podset", "web", "--type", "merge", "-p", `{"spec":{"replicas":3}}`)
		Expect(err).NotTo(HaveOccurred())
		Consistently(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: workNS, Name: "web"}, ps)).To(Succeed())
			g.Expect(ps.Status.ObservedGeneration).To(BeNumerically("<", ps.Generation))
			pods := &corev1.PodList{}
			g.Expect(k8sClient.List(ctx, pods, client.InNamespace(workNS), client.MatchingLabels{"app": "web"})).To(Succeed())
			g.Expect(pods.Items).To(HaveLen(1))
		}, "15s", "1s").Should(Succeed())

		By("outside its webhooks' namespaces, the references policy the manager applied still refuses a Secret the requester may not read")
		kubectlApply(`apiVersion: v1
kind: Secret
metadata: {name: alice-token, namespace: ` + workNS + `}
stringData: {token: s3cret}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: podset-writer, namespace: ` + workNS + `}
rules:
- {apiGroups: [apps.kubeforge.io], resources: [podsets, platforms], verbs: [create, get]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: mallory-podsets, namespace: ` + workNS + `}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: podset-writer}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: mallory}]
`)
		stealing := `apiVersion: apps.kubeforge.io/v1alpha1
kind: PodSet
metadata: {name: stealing, namespace: ` + workNS + `}
spec:
  replicas: 1
  template:
    metadata: {labels: {app: stealing}}
    spec:
      containers:
      - name: web
        image: ` + echoImage + `
        env: [{name: T, valueFrom: {secretKeyRef: {name: alice-token, key: token}}}]
`
		Eventually(func(g Gomega) {
			_, err := e2ekit.Run(root, []string{"KUBECONFIG=" + kubeconfig}, strings.NewReader(stealing), "kubectl", "--as", "mallory", "create", "-f", "-")
			g.Expect(err).To(HaveOccurred(), "admitted with no webhook in "+workNS)
			g.Expect(err.Error()).To(ContainSubstring("ValidatingAdmissionPolicy 'kubeforge-references-podsets'"))
			g.Expect(err.Error()).To(ContainSubstring("alice-token"))
		}, "30s").Should(Succeed())
		hookEnv := `apiVersion: apps.kubeforge.io/v1alpha1
kind: Platform
metadata: {name: stealing, namespace: ` + workNS + `}
spec:
  imageRepository: kubeforge.test
  version: v1
  components:
  - name: api
    image: ` + echoImage + `
    ports: [{name: http, port: 8080}]
    hooks:
      bootstrap:
        command: [sh, -c, 'echo $T']
        env: [{name: T, valueFrom: {secretKeyRef: {name: alice-token, key: token}}}]
`
		_, err = e2ekit.Run(root, []string{"KUBECONFIG=" + kubeconfig}, strings.NewReader(hookEnv), "kubectl", "--as", "mallory", "create", "-f", "-")
		Expect(err).To(HaveOccurred(), "a Platform hook's env admitted with no webhook in "+workNS)
		Expect(err.Error()).To(ContainSubstring("ValidatingAdmissionPolicy 'kubeforge-references-platforms'"))
		Expect(err.Error()).To(ContainSubstring("alice-token"))

		By("its ServiceAccount may read Secrets in the target namespace and nowhere else")
		canI := func(args ...string) string {
			out, _ := kubectl(append([]string{"auth", "can-i", "--as", manager}, args...)...)
			return strings.TrimSpace(out)
		}
		Expect(canI("get", "secrets", "-n", target)).To(Equal("yes"))
		Expect(canI("get", "secrets", "-n", workNS)).To(Equal("no"))
		Expect(canI("list", "secrets", "--all-namespaces")).To(Equal("no"))
		Expect(canI("create", "pods", "-n", workNS)).To(Equal("no"))
		Expect(canI("create", "subjectaccessreviews.authorization.k8s.io")).To(Equal("yes"), "the cluster-scoped grants it needs stay")

		uninstallFrom(opNS, "kubeforge.v"+next)
	})

	It("installs with kustomize on this cluster without cert-manager: the manager makes the webhooks' and the API's certificates, which verify against the CAs it publishes", func() {
		const ns = "kubeforge-system"
		_, err := kubectl("get", "crd", "certificates.cert-manager.io")
		Expect(err).To(HaveOccurred(), "this step proves an install without cert-manager")
		timed("make deploy DEPLOY_CONFIG=config/without-cert-manager until both replicas are Ready", func() {
			// make deploy as docs/install.md gives it, but without
			// regenerating config/ first (-o manifests): the kwok and demo
			// suites run beside this one and read those files, and
			// make test has checked them current (verify-generated).
			_, err := run([]string{"IMG=" + nextImage, "DEPLOY_CONFIG=config/without-cert-manager"}, "make", "-o", "manifests", "deploy")
			Expect(err).NotTo(HaveOccurred())
			Eventually(func(g Gomega) {
				pods := &corev1.PodList{}
				g.Expect(k8sClient.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{"control-plane": "controller-manager"})).To(Succeed())
				g.Expect(pods.Items).To(HaveLen(2))
				for _, p := range pods.Items {
					g.Expect(p.Status.ContainerStatuses).NotTo(BeEmpty())
					g.Expect(p.Status.ContainerStatuses[0].Ready).To(BeTrue(), "Ready once its webhook server serves the certificate")
				}
			}).Should(Succeed())
		})

		By("both webhook configurations carry the published CA, and the API server reaches the webhooks with it")
		ca := get(ns, "configmap/kubeforge-webhook-ca", `{.data.ca\.crt}`)
		Expect(ca).To(ContainSubstring("BEGIN CERTIFICATE"))
		for _, c := range []string{"mutatingwebhookconfiguration/kubeforge-mutating-webhook-configuration",
			"validatingwebhookconfiguration/kubeforge-validating-webhook-configuration"} {
			Eventually(func() string {
				b64 := get("", c, "{.webhooks[0].clientConfig.caBundle}")
				b, _ := base64.StdEncoding.DecodeString(b64)
				return strings.TrimSpace(string(b)) // as get trims ca
			}).Should(Equal(ca), c)
		}
		ps := podSet("without-cert-manager", nil, "web")
		createThroughWebhook(ps)
		Expect(ps.Spec.Replicas).To(Equal(ptr.To(appsv1alpha1.PodSetDefaultReplicas)), "defaulted by the webhook, over TLS the API server verified")
		ready("without-cert-manager", 1)

		By("each replica's API serves a certificate for its Service that verifies against the CA in kubeforge-api-ca")
		pool := x509.NewCertPool()
		Expect(pool.AppendCertsFromPEM([]byte(get(ns, "configmap/kubeforge-api-ca", `{.data.ca\.crt}`)))).To(BeTrue())
		pods := &corev1.PodList{}
		Expect(k8sClient.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{"control-plane": "controller-manager"})).To(Succeed())
		for _, p := range pods.Items {
			Eventually(func() error {
				conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", net.JoinHostPort(p.Status.PodIP, "8082"),
					&tls.Config{RootCAs: pool, ServerName: "kubeforge-api." + ns + ".svc"})
				if err == nil {
					_ = conn.Close()
				}
				return err
			}).Should(Succeed(), "pod %s", p.Name)
		}
	})
})
