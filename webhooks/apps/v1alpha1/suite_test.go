/*
Copyright 2026 The kubeforge Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package v1alpha1_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/kubeforge/kubeforge/internal/testenv"
	webhooks "github.com/kubeforge/kubeforge/webhooks/apps/v1alpha1"
)

// These specs run the webhooks in a manager and let a real kube-apiserver
// call them over HTTPS, as envtest's WebhookInstallOptions configure.

var (
	env       *testenv.Env
	k8sClient client.Client
	ctx       context.Context
	cancel    context.CancelFunc
)

func TestWebhooks(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "apps.kubeforge.io webhooks")
}

var _ = BeforeSuite(func() {
	var err error
	env, err = testenv.Start(testenv.Options{CRDs: true, Webhooks: true})
	Expect(err).NotTo(HaveOccurred())
	k8sClient = env.Client
	ctx, cancel = context.WithCancel(context.Background())

	wio := &env.WebhookInstallOptions
	mgr, err := env.NewManager(ctrl.Options{
		WebhookServer: webhook.NewServer(webhook.Options{
			Host: wio.LocalServingHost, Port: wio.LocalServingPort, CertDir: wio.LocalServingCertDir,
		}),
	})
	Expect(err).NotTo(HaveOccurred())
	Expect(webhooks.SetupPodSetWebhookWithManager(mgr)).To(Succeed())
	go func() {
		defer GinkgoRecover()
		Expect(mgr.Start(ctx)).To(Succeed())
	}()

	addr := net.JoinHostPort(wio.LocalServingHost, fmt.Sprint(wio.LocalServingPort))
	Eventually(func() error {
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: time.Second}, "tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // test only: is the server up?
		if err != nil {
			return err
		}
		return conn.Close()
	}).Should(Succeed())
})

var _ = AfterSuite(func() {
	if cancel != nil {
		cancel()
	}
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})
