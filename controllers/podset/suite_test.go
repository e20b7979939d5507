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

package podset_test

import (
	"context"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubeforge/kubeforge/controllers/podset"
	"github.com/kubeforge/kubeforge/internal/engine"
	"github.com/kubeforge/kubeforge/internal/testenv"
)

// The controller runs in a manager against a real kube-apiserver and etcd
// (envtest). There is no kube-controller-manager: Deployments get no pods
// and no status unless a spec sets them by hand.

var (
	env        *testenv.Env
	k8sClient  client.Client
	counting   *testenv.CountingClient
	reconciler *podset.Reconciler
	ctx        context.Context
	cancel     context.CancelFunc
)

func TestPodSetController(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(testenv.EventuallyTimeout)
	RunSpecs(t, "PodSet controller")
}

var _ = BeforeSuite(func() {
	var err error
	env, err = testenv.Start(testenv.Options{CRDs: true})
	Expect(err).NotTo(HaveOccurred())
	k8sClient = env.Client
	ctx, cancel = context.WithCancel(context.Background())

	counting, err = env.StartController(ctx, []client.Object{&appsv1.Deployment{}, &corev1.Pod{}},
		func(mgr ctrl.Manager, c client.Client, eng *engine.Engine) error {
			reconciler = &podset.Reconciler{Client: c, Engine: eng}
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
