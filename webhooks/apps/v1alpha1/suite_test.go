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
	"context"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
	SetDefaultEventuallyTimeout(testenv.EventuallyTimeout)
	RunSpecs(t, "apps.kubeforge.io webhooks")
}

var _ = BeforeSuite(func() {
	var err error
	env, err = testenv.Start(testenv.Options{CRDs: true, Webhooks: true})
	Expect(err).NotTo(HaveOccurred())
	k8sClient = env.Client
	ctx, cancel = context.WithCancel(context.Background())

	Expect(env.StartWebhooks(ctx, webhooks.SetupPodSetWebhookWithManager, webhooks.SetupPlatformWebhookWithManager)).To(Succeed())
})

var _ = AfterSuite(func() {
	if cancel != nil {
		cancel()
	}
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})
