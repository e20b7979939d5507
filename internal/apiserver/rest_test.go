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

package apiserver_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
	"github.com/kubeforge/kubeforge/controllers/kubernetescluster"
	"github.com/kubeforge/kubeforge/internal/apiserver"
	"github.com/kubeforge/kubeforge/internal/proof"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// call sends a request and returns the status code and the body.
func call(method, url, token string, body any) (int, []byte) {
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		r = bytes.NewReader(b)
	case string:
		r = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		Expect(err).NotTo(HaveOccurred())
		r = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	Expect(err).NotTo(HaveOccurred())
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := httpc.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	return resp.StatusCode, out
}

func apiError(body []byte) apiserver.Error {
	var e apiserver.Error
	ExpectWithOffset(1, json.Unmarshal(body, &e)).To(Succeed(), string(body))
	return e
}

const clusterSpec = `{"version":"v1.31.4","masters":[{"address":"10.0.0.10","name":"cp1"}],"nodes":[{"address":"10.0.0.21","name":"w1"}],"sshSecretRef":{"name":"ssh"}}`

var _ = Describe("REST API for KubernetesClusters", Ordered, func() {
	var admin, reader string
	BeforeAll(func() {
		admin = caller("team-a", "admin", rule("cluster.kubeforge.io", "kubernetesclusters", "create", "get", "list", "update", "delete"),
			rule("", "pods/log", "get"), rule("", "secrets", "get"))
		reader = caller("team-a", "reader", rule("cluster.kubeforge.io", "kubernetesclusters", "get", "list"))
	})

	It("should refuse callers without a token or with a garbage one (401)", func() {
		code, body := call("GET", path("team-a"), "", nil)
		Expect(code).To(Equal(http.StatusUnauthorized))
		Expect(apiError(body).Reason).To(Equal("Unauthorized"))
		code, body = call("GET", path("team-a"), "not-a-token", nil)
		Expect(code).To(Equal(http.StatusUnauthorized), string(body))
	})

	It("should refuse a valid token that was not issued for this API's audience (401)", func() {
		// The reader's RBAC allows the call; only the audience is wrong: a
		// token for the Kubernetes API alone.
		tr, err := clientset.CoreV1().ServiceAccounts("team-a").CreateToken(ctx, "reader", &authenticationv1.TokenRequest{
			Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: new(int64(3600))},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		code, _ := call("GET", path("team-a"), tr.Status.Token, nil)
		Expect(code).To(Equal(http.StatusUnauthorized))
		code, _ = call("GET", path("team-a"), reader, nil)
		Expect(code).To(Equal(http.StatusOK), "the same ServiceAccount's token for the kubeforge audience")
	})

	It("should create, get, list, scale up and down, and delete a cluster", func() {
		code, body := call("POST", path("team-a"), admin, `{"name":"prod","spec":`+clusterSpec+`}`)
		Expect(code).To(Equal(http.StatusCreated), string(body))
		kc := &clusterv1alpha1.KubernetesCluster{}
		Expect(json.Unmarshal(body, kc)).To(Succeed())
		Expect(kc.Name).To(Equal("prod"))
		Expect(kc.Spec.Network.Plugin).NotTo(BeEmpty(), "the mutating webhook defaulted the spec")

		code, body = call("GET", path("team-a", "prod"), reader, nil)
		Expect(code).To(Equal(http.StatusOK), string(body))
		code, body = call("GET", path("team-a"), reader, nil)
		Expect(code).To(Equal(http.StatusOK), string(body))
		list := &clusterv1alpha1.KubernetesClusterList{}
		Expect(json.Unmarshal(body, list)).To(Succeed())
		Expect(list.Items).To(HaveLen(1))

		code, body = call("POST", path("team-a", "prod", "scaleup"), admin, `{"nodes":[{"address":"10.0.0.22","name":"w2"}]}`)
		Expect(code).To(Equal(http.StatusOK), string(body))
		Expect(json.Unmarshal(body, kc)).To(Succeed())
		Expect(kc.Spec.Nodes).To(HaveLen(2))
		code, body = call("POST", path("team-a", "prod", "scaledown"), admin, `{"nodes":[{"name":"w1"}]}`)
		Expect(code).To(Equal(http.StatusOK), string(body))
		Expect(json.Unmarshal(body, kc)).To(Succeed())
		Expect(kc.Spec.Nodes).To(Equal([]clusterv1alpha1.Host{{Address: "10.0.0.22", Name: "w2"}}))

		code, body = call("DELETE", path("team-a", "prod"), admin, nil)
		Expect(code).To(Equal(http.StatusAccepted), string(body))
	})

	It("should create as the caller: admission checks the caller's access to the Secrets named, and records the caller", func() {
		// The operator may read every Secret; this caller may create
		// clusters but not read the SSH key. Made as the operator, the
		// cluster would have been admitted.
		noKey := caller("team-a", "no-key", rule("cluster.kubeforge.io", "kubernetesclusters", "create", "get"))
		code, body := call("POST", path("team-a"), noKey, `{"name":"borrowed-key","spec":`+clusterSpec+`}`)
		Expect(code).To(Equal(http.StatusUnprocessableEntity), string(body))
		e := apiError(body)
		Expect(e.Fields).To(ContainElement(And(HaveField("Field", "spec.sshSecretRef.name"),
			HaveField("Message", ContainSubstring("system:serviceaccount:team-a:no-key may not get the Secret ssh")))))
		Expect(e.Message).NotTo(ContainSubstring("kubeforge-system"), "nothing of the operator's identity")

		code, body = call("POST", path("team-a"), admin, `{"name":"credited","spec":`+clusterSpec+`}`)
		Expect(code).To(Equal(http.StatusCreated), string(body))
		kc := &clusterv1alpha1.KubernetesCluster{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: "team-a", Name: "credited"}, kc)).To(Succeed())
		Expect(kc.Annotations).To(HaveKeyWithValue(proof.CreatedByAnnotation, "system:serviceaccount:team-a:admin"))

		// Recorded by the webhook, not taken from the request: neither set
		// at create nor changed later by hand.
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: "team-a", Name: "credited"}, kc)).To(Succeed())
		kc.Annotations[proof.CreatedByAnnotation] = "someone-else"
		Expect(k8sClient.Update(ctx, kc)).To(Succeed())
		Expect(kc.Annotations).To(HaveKeyWithValue(proof.CreatedByAnnotation, "system:serviceaccount:team-a:admin"))
		forged := &clusterv1alpha1.KubernetesCluster{}
		Expect(json.Unmarshal([]byte(`{"metadata":{"namespace":"team-a","name":"forged","annotations":{"kubeforge.io/created-by":"someone-else"}},"spec":`+clusterSpec+`}`), forged)).To(Succeed())
		Expect(k8sClient.Create(ctx, forged)).To(Succeed())
		Expect(forged.Annotations[proof.CreatedByAnnotation]).NotTo(Equal("someone-else"))
		Expect(forged.Annotations[proof.CreatedByAnnotation]).NotTo(BeEmpty())
	})

	It("should refuse what the caller's RBAC does not allow (403), with the reason, and other namespaces", func() {
		code, body := call("POST", path("team-a"), reader, `{"name":"nope","spec":`+clusterSpec+`}`)
		Expect(code).To(Equal(http.StatusForbidden))
		e := apiError(body)
		Expect(e.Reason).To(Equal("Forbidden"))
		Expect(e.Message).To(ContainSubstring("system:serviceaccount:team-a:reader may not create kubernetesclusters.cluster.kubeforge.io"))
		code, _ = call("GET", path("team-b"), admin, nil)
		Expect(code).To(Equal(http.StatusForbidden), "allowed in team-a, not in team-b")
	})

	It("should refuse a scale while an operation runs (409)", func() {
		code, body := call("POST", path("team-a"), admin, `{"name":"busy","spec":`+clusterSpec+`}`)
		Expect(code).To(Equal(http.StatusCreated), string(body))
		kc := &clusterv1alpha1.KubernetesCluster{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: "team-a", Name: "busy"}, kc)).To(Succeed())
		kc.Status.CurrentOperation = "create-2"
		Expect(k8sClient.Status().Update(ctx, kc)).To(Succeed())
		code, body = call("POST", path("team-a", "busy", "scaleup"), admin, `{"nodes":[{"address":"10.0.0.23"}]}`)
		Expect(code).To(Equal(http.StatusConflict))
		Expect(apiError(body).Message).To(ContainSubstring("operation create-2 is running"))
	})

	It("should answer bad bodies with 400, 413 and 422 (admission's field errors passed through)", func() {
		code, body := call("POST", path("team-a"), admin, `{"name":`)
		Expect(code).To(Equal(http.StatusBadRequest), string(body))
		Expect(apiError(body).Reason).To(Equal("BadRequest"))
		code, _ = call("POST", path("team-a"), admin, `{"name":"x","spec":{},"surprise":1}`)
		Expect(code).To(Equal(http.StatusBadRequest), "unknown fields are refused")

		huge := `{"name":"huge","labels":{"a":"` + strings.Repeat("x", apiserver.MaxBodyBytes) + `"},"spec":` + clusterSpec + `}`
		code, body = call("POST", path("team-a"), admin, huge)
		Expect(code).To(Equal(http.StatusRequestEntityTooLarge), string(body[:min(len(body), 200)]))

		code, body = call("POST", path("team-a"), admin, `{"name":"bad","spec":{"version":"banana","masters":[{"address":"10.0.0.10"}],"sshSecretRef":{"name":"ssh"}}}`)
		Expect(code).To(Equal(http.StatusUnprocessableEntity), string(body))
		e := apiError(body)
		Expect(e.Reason).To(Equal("Invalid"))
		Expect(e.Fields).To(ContainElement(HaveField("Field", "spec.version")))
	})

	It("should stream the log of the Pod the current operation's Job made, to a caller who may read the cluster and pod logs", func() {
		code, body := call("POST", path("team-a"), admin, `{"name":"logged","spec":`+clusterSpec+`}`)
		Expect(code).To(Equal(http.StatusCreated), string(body))
		code, body = call("GET", path("team-a", "logged", "logs"), admin, nil)
		Expect(code).To(Equal(http.StatusNotFound), "no operation yet: %s", body)

		kc := &clusterv1alpha1.KubernetesCluster{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: "team-a", Name: "logged"}, kc)).To(Succeed())
		kc.Status.Operations = []clusterv1alpha1.Operation{{ID: "precheck-1", Type: clusterv1alpha1.OpPrecheck, JobName: "logged-precheck-1", Result: clusterv1alpha1.ResultRunning}}
		kc.Status.CurrentOperation = "precheck-1"
		Expect(k8sClient.Status().Update(ctx, kc)).To(Succeed())
		// The operation's Job, as the controller makes it (sealed as the cluster's).
		job := kubernetescluster.Job(kc, kc.Status.Operations[0])
		job.TypeMeta = metav1.TypeMeta{}
		Expect(k8sClient.Create(ctx, job)).To(Succeed())
		code, body = call("GET", path("team-a", "logged", "logs"), admin, nil)
		Expect(code).To(Equal(http.StatusNotFound), "a Job kubeforge did not seal is not the operation's: %s", body)
		sealAs(kc, job)
		Eventually(func() int { code, _ := call("GET", path("team-a", "logged", "logs"), admin, nil); return code }).Should(Equal(http.StatusNotFound),
			"no pod yet")

		// A Pod that only carries the Job's name label is not its Pod.
		pod := func(name string, controlled bool) *corev1.Pod {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name,
				Labels: map[string]string{"job-name": job.Name, "batch.kubernetes.io/controller-uid": string(job.UID)}}}
			if controlled {
				p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID, Controller: ptr.To(true)}}
			}
			_, err := logs.CoreV1().Pods("team-a").Create(ctx, p, metav1.CreateOptions{})
			Expect(err).NotTo(HaveOccurred())
			return p
		}
		pod("logged-precheck-1-label", false)
		code, body = call("GET", path("team-a", "logged", "logs"), admin, nil)
		Expect(code).To(Equal(http.StatusNotFound), "a pod labelled like the Job's is not its pod: %s", body)
		pod("logged-precheck-1-abcde", true)
		code, body = call("GET", path("team-a", "logged", "logs")+"?follow=true", admin, nil)
		Expect(code).To(Equal(http.StatusOK), string(body))
		Expect(string(body)).To(Equal("fake logs")) // what client-go's fake clientset streams

		code, _ = call("GET", path("team-a", "logged", "logs"), reader, nil)
		Expect(code).To(Equal(http.StatusForbidden), "reading logs needs get pods/log")
		podReader := caller("team-a", "pod-reader", rule("", "pods/log", "get"))
		code, _ = call("GET", path("team-a", "logged", "logs"), podReader, nil)
		Expect(code).To(Equal(http.StatusForbidden), "reading a cluster's logs needs get on the cluster too")

		// A second Pod claiming the Job as its controller (planted): the
		// Job makes one, so none is streamed.
		pod("logged-precheck-1-fghij", true)
		code, body = call("GET", path("team-a", "logged", "logs"), admin, nil)
		Expect(code).To(Equal(http.StatusConflict), string(body))
		Expect(apiError(body).Message).To(ContainSubstring("2 Pods claim to be operation precheck-1's installer"))
	})

	It("should accept an installer's callback with its operation's token, once", func() {
		code, body := call("POST", path("team-a"), admin, `{"name":"cb","spec":`+clusterSpec+`}`)
		Expect(code).To(Equal(http.StatusCreated), string(body))
		kc := &clusterv1alpha1.KubernetesCluster{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: "team-a", Name: "cb"}, kc)).To(Succeed())
		op := clusterv1alpha1.Operation{ID: "create-2", Type: clusterv1alpha1.OpCreate, JobName: "cb-create-2", Result: clusterv1alpha1.ResultRunning}
		kc.Status.Operations = []clusterv1alpha1.Operation{op}
		kc.Status.CurrentOperation = op.ID
		Expect(k8sClient.Status().Update(ctx, kc)).To(Succeed())
		secret := kubernetescluster.CallbackSecret(kc, op, "the-right-token", "", nil)
		Expect(k8sClient.Create(ctx, secret)).To(Succeed())
		sealFor(kc, secret)
		url := path("team-a", "cb", "operations", "create-2", "callback")

		// The manager's cache has seen the operation and its Secret.
		Eventually(func() int {
			code, _ := call("POST", url, "the-right-token", `{"result":"maybe"}`)
			return code
		}).Should(Equal(http.StatusUnprocessableEntity))

		// Every refusal is the same 401, and costs the API server nothing:
		// the token is checked against the cache before anything is read.
		refusals := map[string][2]string{
			"no token":                 {url, ""},
			"a wrong token":            {url, "a-wrong-token"},
			"a user's token":           {url, admin},
			"an operation not running": {path("team-a", "cb", "operations", "upgrade-9", "callback"), "the-right-token"},
			"a cluster that is not":    {path("team-a", "nope", "operations", "create-2", "callback"), "the-right-token"},
			"another namespace":        {path("team-b", "cb", "operations", "create-2", "callback"), "the-right-token"},
		}
		before := operatorCalls.Load()
		var first []byte
		for what, r := range refusals {
			code, body := call("POST", r[0], r[1], `{"result":"succeeded"}`)
			Expect(code).To(Equal(http.StatusUnauthorized), what)
			if first == nil {
				first = body
			}
			Expect(body).To(Equal(first), "%s is refused like the others", what)
		}
		Expect(operatorCalls.Load()-before).To(BeZero(), "requests the API server got for %d refused callbacks", len(refusals))

		code, body = call("POST", url, "the-right-token", `{"result":"maybe"}`)
		Expect(code).To(Equal(http.StatusUnprocessableEntity), string(body))
		code, body = call("POST", url, "the-right-token", `{"result":"succeeded","message":"all hosts up"}`)
		Expect(code).To(Equal(http.StatusAccepted), string(body))
		code, body = call("POST", url, "the-right-token", `{"result":"failed"}`)
		Expect(code).To(Equal(http.StatusUnauthorized), "a token works once")
		Expect(body).To(Equal(first))

		// Once the operation is no longer the current one, its token is dead.
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: "team-a", Name: "cb"}, kc)).To(Succeed())
		next := clusterv1alpha1.Operation{ID: "scale-3", Type: clusterv1alpha1.OpScaleUp, JobName: "cb-scale-3", Result: clusterv1alpha1.ResultRunning}
		kc.Status.Operations = append(kc.Status.Operations, next)
		kc.Status.CurrentOperation = next.ID
		Expect(k8sClient.Status().Update(ctx, kc)).To(Succeed())
		old := kubernetescluster.CallbackSecret(kc, clusterv1alpha1.Operation{ID: "create-9"}, "old-token", "", nil)
		Expect(k8sClient.Create(ctx, old)).To(Succeed())
		sealFor(kc, old)
		Consistently(func() int {
			code, _ := call("POST", path("team-a", "cb", "operations", "create-9", "callback"), "old-token", `{"result":"failed"}`)
			return code
		}, "1s").Should(Equal(http.StatusUnauthorized), "a token of an operation that is not running")

		got := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: "team-a", Name: secret.Name}, got)).To(Succeed())
		Expect(got.Annotations).To(HaveKeyWithValue(apiserver.CallbackResultAnnotation, "succeeded"))
		Expect(got.Annotations).To(HaveKeyWithValue(apiserver.CallbackMessageAnnotation, "all hosts up"))
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: "team-a", Name: "cb"}, kc)).To(Succeed())
		Expect(kc.Status.Operations[0].Result).To(Equal(clusterv1alpha1.ResultRunning), "the Job stays authoritative")
	})

	It("should refuse a callback whose token is right but whose Secret kubeforge did not make", func() {
		code, body := call("POST", path("team-a"), admin, `{"name":"planted","spec":`+clusterSpec+`}`)
		Expect(code).To(Equal(http.StatusCreated), string(body))
		kc := &clusterv1alpha1.KubernetesCluster{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: "team-a", Name: "planted"}, kc)).To(Succeed())
		op := clusterv1alpha1.Operation{ID: "create-2", Type: clusterv1alpha1.OpCreate, JobName: "planted-create-2", Result: clusterv1alpha1.ResultRunning}
		kc.Status.Operations = []clusterv1alpha1.Operation{op}
		kc.Status.CurrentOperation = op.ID
		Expect(k8sClient.Status().Update(ctx, kc)).To(Succeed())
		// Planted with everything kubeforge's has, but no seal.
		Expect(k8sClient.Create(ctx, kubernetescluster.CallbackSecret(kc, op, "the-planters-token", "", nil))).To(Succeed())
		Consistently(func() int {
			code, _ := call("POST", path("team-a", "planted", "operations", "create-2", "callback"), "the-planters-token", `{"result":"succeeded"}`)
			return code
		}, "2s").Should(Equal(http.StatusUnauthorized))
	})

	It("should hand back only an object retained before ownership proofs, to a caller allowed to read it and update the owner", func() {
		url := baseURL + "/api/v1/namespaces/team-a/handbacks"
		body := `{"kind":"Secret","name":"kept","owner":{"kind":"Workspace","name":"w"}}`
		code, resp := call("POST", url, "", body)
		Expect(code).To(Equal(http.StatusUnauthorized), string(resp))
		code, resp = call("POST", url, admin, `{"kind":"ConfigMap","name":"kept","owner":{"kind":"Workspace","name":"w"}}`)
		Expect(code).To(Equal(http.StatusUnprocessableEntity), string(resp))
		By("a caller who may not read the Secret, or not update the owner")
		nobody := caller("team-a", "nobody")
		code, resp = call("POST", url, nobody, body)
		Expect(code).To(Equal(http.StatusForbidden), string(resp))
		Expect(apiError(resp).Message).To(ContainSubstring("get secrets"))
		readsOnly := caller("team-a", "secret-reader", rule("", "secrets", "get"))
		code, resp = call("POST", url, readsOnly, body)
		Expect(code).To(Equal(http.StatusForbidden), string(resp))
		Expect(apiError(resp).Message).To(ContainSubstring("update workspaces"))
		keeper := caller("team-a", "keeper", rule("", "secrets", "get"), rule("ide.kubeforge.io", "workspaces", "update"))
		code, resp = call("POST", url, keeper, body)
		Expect(code).To(Equal(http.StatusNotFound), string(resp))
		// Made now, after the ownership key: not one to hand back.
		Expect(k8sClient.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "kept", Namespace: "team-a",
			Annotations: map[string]string{"kubeforge.io/retain-on-delete": "true"}}})).To(Succeed())
		code, resp = call("POST", url, keeper, body)
		Expect(code).To(Equal(http.StatusConflict), string(resp))
		Expect(apiError(resp).Message).To(ContainSubstring("not an object retained by a kubeforge version before ownership proofs"))

		By("a claim: a caller who may create pods but not get the claim, as admission asks of a spec that names it")
		claim := `{"kind":"PersistentVolumeClaim","name":"kept-home","owner":{"kind":"Workspace","name":"w"}}`
		podMaker := caller("team-a", "pod-maker", rule("", "pods", "create"), rule("ide.kubeforge.io", "workspaces", "update"))
		code, resp = call("POST", url, podMaker, claim)
		Expect(code).To(Equal(http.StatusForbidden), string(resp))
		Expect(apiError(resp).Message).To(ContainSubstring("get persistentvolumeclaims"))
		claimReader := caller("team-a", "claim-reader", rule("", "persistentvolumeclaims", "get"), rule("ide.kubeforge.io", "workspaces", "update"))
		code, resp = call("POST", url, claimReader, claim)
		Expect(code).To(Equal(http.StatusForbidden), string(resp))
		Expect(apiError(resp).Message).To(ContainSubstring("create pods"))
		both := caller("team-a", "claim-mounter", rule("", "persistentvolumeclaims", "get"), rule("", "pods", "create"), rule("ide.kubeforge.io", "workspaces", "update"))
		code, resp = call("POST", url, both, claim)
		Expect(code).To(Equal(http.StatusNotFound), string(resp))
	})

	It("should describe every route in /openapi.json", func() {
		code, body := call("GET", baseURL+"/openapi.json", "", nil)
		Expect(code).To(Equal(http.StatusOK))
		var doc struct {
			OpenAPI string                    `json:"openapi"`
			Paths   map[string]map[string]any `json:"paths"`
		}
		Expect(json.Unmarshal(body, &doc)).To(Succeed())
		Expect(doc.OpenAPI).To(HavePrefix("3."))
		base := "/api/v1/namespaces/{ns}/kubernetesclusters"
		for p, methods := range map[string][]string{
			base: {"post", "get"}, base + "/{name}": {"get", "delete"}, base + "/{name}/scaleup": {"post"},
			base + "/{name}/scaledown": {"post"}, base + "/{name}/logs": {"get"}, base + "/{name}/operations/{id}/callback": {"post"},
			"/api/v1/namespaces/{ns}/handbacks": {"post"},
		} {
			Expect(doc.Paths).To(HaveKey(p))
			for _, m := range methods {
				Expect(doc.Paths[p]).To(HaveKey(m), "%s %s", m, p)
			}
		}
		code, body = call("GET", baseURL+"/api/v1/nothing", admin, nil)
		Expect(code).To(Equal(http.StatusNotFound))
		Expect(apiError(body).Message).To(ContainSubstring("/openapi.json"))
	})
})

// sealFor seals secret as the operator's for kc, as the KubernetesCluster
// controller's engine does for the callback Secrets it makes.
func sealFor(kc *clusterv1alpha1.KubernetesCluster, secret *corev1.Secret) { sealAs(kc, secret) }

// sealAs seals obj as made for owner, as a controller's engine does for
// what it creates.
func sealAs(owner, obj client.Object) {
	GinkgoHelper()
	Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
	gvk, err := apiutil.GVKForObject(obj, k8sClient.Scheme())
	Expect(err).NotTo(HaveOccurred())
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[proof.Annotation] = env.Proof.Seal(proof.Object{GroupKind: gvk.GroupKind(),
		Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: string(obj.GetUID())}, proof.Owner(string(owner.GetUID())))
	obj.SetAnnotations(a)
	Expect(k8sClient.Update(ctx, obj)).To(Succeed())
}
