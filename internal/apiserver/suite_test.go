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
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubeforge/kubeforge/controllers/workspace"
	"github.com/kubeforge/kubeforge/internal/apiserver"
	"github.com/kubeforge/kubeforge/internal/engine"
	"github.com/kubeforge/kubeforge/internal/test/testenv"
	clusterwebhooks "github.com/kubeforge/kubeforge/webhooks/cluster/v1alpha1"
	idewebhooks "github.com/kubeforge/kubeforge/webhooks/ide/v1alpha1"
)

// The API server runs against envtest's kube-apiserver with RBAC: callers
// are ServiceAccounts whose tokens come from the TokenRequest API, with
// Roles the specs create; the webhooks are installed, so admission errors
// reach the API's callers. The server itself runs as a ServiceAccount
// bound to config/rbac/role.yaml and cluster_role.yaml — the operator's real roles, not
// envtest's admin — and every request it sends is counted (operatorCalls).
// envtest has no kubelet: pod logs come from a fake clientset.

var (
	env       *testenv.Env
	k8sClient client.Client
	clientset kubernetes.Interface
	logs      *fake.Clientset
	ctx       context.Context
	baseURL   string
	addr      string
	httpc     *http.Client
	// operatorCalls counts the requests the API server sends as the
	// operator (watches aside), for the specs that prove it sent none.
	operatorCalls atomic.Int64
)

// MaxWaits is the suite's per-caller cap on create-and-wait calls.
const maxWaits = 25

func TestAPIServer(t *testing.T) {
	testenv.Run(t, testenv.Suite{
		Name:    "API server",
		Options: testenv.Options{CRDs: true, Webhooks: true},
		Setup: func(suiteCtx context.Context, e *testenv.Env) error {
			var err error
			env, k8sClient, ctx = e, e.Client, suiteCtx
			Expect(env.StartWebhooks(ctx, clusterwebhooks.SetupKubernetesClusterWebhookWithManager, idewebhooks.SetupWorkspaceWebhookWithManager)).To(Succeed())
			clientset, err = kubernetes.NewForConfig(env.Config)
			Expect(err).NotTo(HaveOccurred())

			operatorCfg := operatorConfig()
			operator, err := client.New(operatorCfg, client.Options{Scheme: env.Scheme})
			Expect(err).NotTo(HaveOccurred())
			c, err := cache.New(operatorCfg, cache.Options{Scheme: env.Scheme})
			Expect(err).NotTo(HaveOccurred())
			go func() { defer GinkgoRecover(); Expect(c.Start(ctx)).To(Succeed()) }()
			Expect(c.WaitForCacheSync(ctx)).To(BeTrue())

			logs = fake.NewClientset()
			proofs := &engine.Engine{Scheme: env.Scheme, Proof: env.Proof}
			srv := &apiserver.Server{
				Addr: "127.0.0.1:0", Client: operator, APIReader: operator, Cache: c, Clientset: logs,
				// As in the manager: the clients acting as callers share the
				// operator's REST mapper (callers may not read discovery).
				ClientFor: apiserver.ImpersonatingClients(operatorCfg, client.Options{Scheme: env.Scheme, Mapper: operator.RESTMapper()}),
				// Every caller of the suite comes from 127.0.0.1.
				Auth:           &apiserver.Auth{Client: operator, TTL: 5 * time.Second, ReviewBurst: 1000},
				HandlerTimeout: 10 * time.Second, WaitTimeout: time.Minute,
				WorkspaceStatus:   workspace.StatusWith(proofs.Owns),
				Owns:              proofs.Owns,
				Proof:             env.Proof,
				MaxWaitsPerCaller: maxWaits,
			}
			a, err := srv.Listen()
			Expect(err).NotTo(HaveOccurred())
			addr = a.String()
			baseURL = "https://" + addr
			go func() { defer GinkgoRecover(); Expect(srv.Start(ctx)).To(Succeed()) }()
			httpc = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
				TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // the server's certificate is self-signed
			}}
			Eventually(func() error {
				resp, err := httpc.Get(baseURL + "/openapi.json")
				if err == nil {
					resp.Body.Close()
				}
				return err
			}).Should(Succeed())
			return nil
		},
	})
}

// operatorConfig makes the operator's identity — a ServiceAccount bound to
// the ClusterRoles of config/rbac/role.yaml and cluster_role.yaml — and returns a config that
// authenticates as it with a token, counting its requests.
func operatorConfig() *rest.Config {
	Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kubeforge-system"}})).To(Succeed())
	Expect(k8sClient.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "kubeforge-system", Name: "kubeforge"}})).To(Succeed())
	// Both of the manager's roles: namespaced and cluster-scoped rules.
	for _, file := range []string{"role.yaml", "cluster_role.yaml"} {
		b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "rbac", file))
		Expect(err).NotTo(HaveOccurred())
		role := &rbacv1.ClusterRole{}
		Expect(yaml.Unmarshal(b, role)).To(Succeed())
		role.Name = "kubeforge-" + strings.TrimSuffix(file, ".yaml")
		Expect(k8sClient.Create(ctx, role)).To(Succeed())
		Expect(k8sClient.Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: role.Name},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role.Name},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "kubeforge", Namespace: "kubeforge-system"}},
		})).To(Succeed())
	}
	tr, err := clientset.CoreV1().ServiceAccounts("kubeforge-system").CreateToken(ctx, "kubeforge", &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: new(int64(3600))},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	cfg := &rest.Config{Host: env.Config.Host, BearerToken: tr.Status.Token, TLSClientConfig: rest.TLSClientConfig{CAData: env.Config.CAData},
		QPS: 100, Burst: 200}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			if r.URL.Query().Get("watch") != "true" {
				operatorCalls.Add(1)
			}
			return rt.RoundTrip(r)
		})
	})
	// RBAC grants take a moment to reach the authorizer's cache.
	Eventually(func() error {
		c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
		if err != nil {
			return err
		}
		return c.List(ctx, &corev1.SecretList{}, client.InNamespace("default"))
	}).Should(Succeed())
	return cfg
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// caller makes a ServiceAccount in ns with a Role of rules there, and
// returns a token for it from the TokenRequest API.
func caller(ns, name string, rules ...rbacv1.PolicyRule) string {
	_ = k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	Expect(k8sClient.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})).To(Succeed())
	if len(rules) > 0 {
		Expect(k8sClient.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: rules})).To(Succeed())
		Expect(k8sClient.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: ns}},
		})).To(Succeed())
		Expect(env.Granted(ctx, "system:serviceaccount:"+ns+":"+name, ns, rules...)).To(Succeed())
	}
	tr, err := clientset.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: new(int64(3600)), Audiences: []string{apiserver.DefaultAudience}},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	return tr.Status.Token
}

func rule(group, resource string, verbs ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: []string{group}, Resources: []string{resource}, Verbs: verbs}
}

func path(ns string, rest ...string) string {
	p := fmt.Sprintf("%s/api/v1/namespaces/%s/kubernetesclusters", baseURL, ns)
	for _, r := range rest {
		p += "/" + r
	}
	return p
}
