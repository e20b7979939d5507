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

package certs_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/kubeforge/kubeforge/internal/apiserver"
	"github.com/kubeforge/kubeforge/internal/certs"
	"github.com/kubeforge/kubeforge/internal/test/testenv"
)

// freePort is a TCP port nothing listens on now.
func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

var (
	env      *testenv.Env
	suiteCtx context.Context
)

func TestCerts(t *testing.T) {
	testenv.Run(t, testenv.Suite{
		Name: "The operator's own certificates",
		Setup: func(ctx context.Context, e *testenv.Env) error {
			env, suiteCtx = e, ctx
			return nil
		},
	})
}

const dnsName = "kubeforge-api.kubeforge-system.svc"

// served is the certificate chain the server at addr presents, verified
// against the CA of pool for dnsName.
func served(addr string, pool *x509.CertPool) (*x509.Certificate, error) {
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, &tls.Config{RootCAs: pool, ServerName: dnsName})
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0], nil
}

var _ = Describe("The API's certificate, without cert-manager", func() {
	It("is made by the operator, served by the API, verifies against the published CA, and is renewed before it ends", func() {
		ctx, cancel := context.WithCancel(suiteCtx)
		defer cancel()
		Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kubeforge-system"}}))).To(Succeed())
		// Two replicas, as deployed: the leader renews, both serve.
		// (Each its own controller name: two managers share this process's
		// registry of controller names.)
		replica := func(name string) (ctrl.Manager, string) {
			mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"},
				LeaderElection: true, LeaderElectionID: "certs-test", LeaderElectionNamespace: "kubeforge-system", LeaderElectionReleaseOnCancel: true})
			Expect(err).NotTo(HaveOccurred())
			dir := GinkgoT().TempDir()
			// A short validity, so that the spec sees a renewal: a certificate
			// valid for 20 s is replaced once it has less than 10 s left.
			Expect(certs.Provision(ctx, mgr, env.Client, certs.Options{
				Namespace: "kubeforge-system", Secret: "kubeforge-api-cert", CAConfigMap: "kubeforge-api-ca", Dir: dir, Name: name,
				DNSNames: []string{dnsName, "kubeforge-api"}, Validity: 20 * time.Second, RenewBefore: 10 * time.Second, CAValidity: time.Hour,
			})).To(Succeed())
			return mgr, dir
		}
		mgr, dir := replica("api")
		api := &apiserver.Server{Addr: "127.0.0.1:0", CertDir: dir}
		addr, err := api.Listen()
		Expect(err).NotTo(HaveOccurred())
		Expect(mgr.Add(api)).To(Succeed())
		go func() { defer GinkgoRecover(); Expect(mgr.Start(ctx)).To(Succeed()) }()
		Eventually(mgr.Elected(), "30s").Should(BeClosed())
		follower, followerDir := replica("api-follower")
		go func() { defer GinkgoRecover(); Expect(follower.Start(ctx)).To(Succeed()) }()

		By("the CA is published in a ConfigMap")
		pool := x509.NewCertPool()
		Eventually(func(g Gomega) {
			cm := &corev1.ConfigMap{}
			g.Expect(env.Client.Get(ctx, types.NamespacedName{Namespace: "kubeforge-system", Name: "kubeforge-api-ca"}, cm)).To(Succeed())
			g.Expect(pool.AppendCertsFromPEM([]byte(cm.Data["ca.crt"]))).To(BeTrue())
		}, "30s").Should(Succeed())

		By("the API serves a certificate for its Service's name that verifies against it")
		var first *x509.Certificate
		Eventually(func() error {
			first, err = served(addr.String(), pool)
			return err
		}, "30s").Should(Succeed())
		Expect(first.DNSNames).To(ContainElements(dnsName, "kubeforge-api"))
		Expect(first.NotAfter).To(BeTemporally("~", time.Now().Add(20*time.Second), 10*time.Second))
		_, err = served(addr.String(), x509.NewCertPool())
		Expect(err).To(HaveOccurred(), "nothing else vouches for it: it is not a certificate any client trusts")

		By("before it ends, a new one is served, from the same published CA")
		Eventually(func(g Gomega) {
			c, err := served(addr.String(), pool)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(c.Raw).NotTo(Equal(first.Raw))
			g.Expect(c.NotAfter).To(BeTemporally(">", first.NotAfter))
		}, "30s", "500ms").Should(Succeed())
		Expect(time.Now()).To(BeTemporally("<", first.NotAfter), "renewed before the first one ended")

		By("the replica that is not the leader keeps the same certificate to serve")
		Eventually(func(g Gomega) {
			secret := &corev1.Secret{}
			g.Expect(env.Client.Get(ctx, types.NamespacedName{Namespace: "kubeforge-system", Name: "kubeforge-api-cert"}, secret)).To(Succeed())
			b, err := os.ReadFile(filepath.Join(followerDir, certs.CertFile))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(b).To(Equal(secret.Data[certs.CertFile]))
		}, "30s").Should(Succeed())
		select {
		case <-follower.Elected():
			Fail("the second replica was elected too")
		default:
		}
	})

	It("is made for the webhooks too: served once it is there, and its CA injected into the webhook configurations and published", func() {
		ctx, cancel := context.WithCancel(suiteCtx)
		defer cancel()
		Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kubeforge-system"}}))).To(Succeed())
		none := admissionregistrationv1.SideEffectClassNone
		ignore := admissionregistrationv1.Ignore
		hook := func(name string) admissionregistrationv1.WebhookClientConfig {
			return admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
				Namespace: "kubeforge-system", Name: "kubeforge-webhook-service", Path: &name}}
		}
		// Webhooks that match nothing: only their caBundle matters here.
		nothing := &metav1.LabelSelector{MatchLabels: map[string]string{"certs-test": "matches-nothing"}}
		Expect(env.Client.Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: "certs-test-validating"},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "v.certs-test.kubeforge.io", ClientConfig: hook("/v"), SideEffects: &none,
				FailurePolicy: &ignore, AdmissionReviewVersions: []string{"v1"}, ObjectSelector: nothing}},
		})).To(Succeed())
		Expect(env.Client.Create(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: "certs-test-mutating"},
			Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: "m.certs-test.kubeforge.io", ClientConfig: hook("/m"), SideEffects: &none,
				FailurePolicy: &ignore, AdmissionReviewVersions: []string{"v1"}, ObjectSelector: nothing}},
		})).To(Succeed())

		dir := GinkgoT().TempDir()
		port := freePort()
		srv := certs.WaitingWebhookServer(webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: port, CertDir: dir}), dir)
		mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}, WebhookServer: srv})
		Expect(err).NotTo(HaveOccurred())
		const webhookName = "kubeforge-webhook-service.kubeforge-system.svc"
		Expect(certs.Provision(ctx, mgr, env.Client, certs.Options{
			Namespace: "kubeforge-system", Secret: "kubeforge-webhook-cert", CAConfigMap: "kubeforge-webhook-ca", Dir: dir, Name: "webhook",
			DNSNames: []string{webhookName}, Validity: time.Hour, RenewBefore: 10 * time.Minute, CAValidity: 2 * time.Hour,
			Webhooks: []certs.Webhook{{Name: "certs-test-mutating", Mutating: true}, {Name: "certs-test-validating"}},
		})).To(Succeed())
		mgr.GetWebhookServer().Register("/v", http.NotFoundHandler())
		go func() { defer GinkgoRecover(); Expect(mgr.Start(ctx)).To(Succeed()) }()

		var ca string
		Eventually(func(g Gomega) {
			cm := &corev1.ConfigMap{}
			g.Expect(env.Client.Get(ctx, types.NamespacedName{Namespace: "kubeforge-system", Name: "kubeforge-webhook-ca"}, cm)).To(Succeed())
			ca = cm.Data["ca.crt"]
			g.Expect(ca).To(ContainSubstring("BEGIN CERTIFICATE"))
		}, "30s").Should(Succeed())
		By("the caBundle of both configurations is the published CA")
		Eventually(func(g Gomega) {
			v := &admissionregistrationv1.ValidatingWebhookConfiguration{}
			g.Expect(env.Client.Get(ctx, types.NamespacedName{Name: "certs-test-validating"}, v)).To(Succeed())
			g.Expect(string(v.Webhooks[0].ClientConfig.CABundle)).To(Equal(ca))
			m := &admissionregistrationv1.MutatingWebhookConfiguration{}
			g.Expect(env.Client.Get(ctx, types.NamespacedName{Name: "certs-test-mutating"}, m)).To(Succeed())
			g.Expect(string(m.Webhooks[0].ClientConfig.CABundle)).To(Equal(ca))
		}, "30s").Should(Succeed())
		By("the webhook server started once the certificate was there, and serves it for the Service's name")
		pool := x509.NewCertPool()
		Expect(pool.AppendCertsFromPEM([]byte(ca))).To(BeTrue())
		Eventually(func() error {
			conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
				&tls.Config{RootCAs: pool, ServerName: webhookName})
			if err == nil {
				_ = conn.Close()
			}
			return err
		}, "30s").Should(Succeed())
		Expect(mgr.GetWebhookServer().StartedChecker()(nil)).To(Succeed())
	})

	It("refuses a validity it could not renew in time", func() {
		mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
		Expect(err).NotTo(HaveOccurred())
		err = certs.Provision(suiteCtx, mgr, env.Client, certs.Options{Namespace: "kubeforge-system", Secret: "s", Dir: GinkgoT().TempDir(),
			DNSNames: []string{dnsName}, Validity: time.Hour, RenewBefore: 2 * time.Hour})
		Expect(err).To(MatchError(ContainSubstring("a certificate valid for 1h0m0s cannot be renewed 2h0m0s before its end")))
	})
})
