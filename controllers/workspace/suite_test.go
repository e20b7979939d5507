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

package workspace_test

import (
	"context"
	"testing"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubeforge/kubeforge/controllers/workspace"
	"github.com/kubeforge/kubeforge/internal/engine"
	"github.com/kubeforge/kubeforge/internal/testenv"
)

// The controller runs in a manager against a real kube-apiserver and etcd
// (envtest), with cert-manager's CRDs. There is no scheduler and no
// kubelet: a spec binds a Pod and sets its status by hand. An unbound Pod
// is deleted at once; a bound one would wait for a kubelet.

var (
	env        *testenv.Env
	k8sClient  client.Client
	counting   *testenv.CountingClient
	reconciler *workspace.Reconciler
	ctx        context.Context
	cancel     context.CancelFunc
)

func TestWorkspaceController(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(testenv.EventuallyTimeout)
	RunSpecs(t, "Workspace controller")
}

var _ = BeforeSuite(func() {
	var err error
	env, err = testenv.Start(testenv.Options{CRDs: true, CertManagerCRDs: true})
	Expect(err).NotTo(HaveOccurred())
	k8sClient = env.Client
	ctx, cancel = context.WithCancel(context.Background())

	counting, err = env.StartController(ctx, []client.Object{&corev1.Pod{}, &corev1.Service{}, &corev1.PersistentVolumeClaim{}, &networkingv1.Ingress{}, &cmv1.Certificate{}},
		func(mgr ctrl.Manager, c client.Client, eng *engine.Engine) error {
			reconciler = &workspace.Reconciler{CertManager: true, Client: c, Engine: eng}
			return reconciler.SetupWithManager(mgr)
		})
	Expect(err).NotTo(HaveOccurred())
})

var _ = AfterSuite(func() {
	if cancel != nil {
		cancel()
	}
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})
