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

package testenv

import (
	"context"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubeforge/kubeforge/internal/engine"
)

// Suite is one Ginkgo envtest suite, as its TestXxx function gives it to
// Run.
type Suite struct {
	// Name names the suite in Ginkgo's report.
	Name string
	// Options say what to install into the control plane.
	Options Options
	// Setup runs once the control plane is up, with it and a context that
	// ends with the suite: it starts what the specs need (a controller,
	// webhooks, servers) and sets the package variables they use.
	Setup func(ctx context.Context, env *Env) error
	// Teardown, when set, runs after that context ended, before the
	// control plane stops.
	Teardown func() error
}

// Run is the whole TestXxx of an envtest suite (cluster-api's
// envtest.Run is the model): it registers Gomega's fail handler and the
// suites' Eventually timeout, starts the control plane and Setup before
// the specs, stops everything after them, and runs the specs.
func Run(t *testing.T, s Suite) {
	t.Helper()
	gomega.RegisterFailHandler(ginkgo.Fail)
	gomega.SetDefaultEventuallyTimeout(EventuallyTimeout)
	var env *Env
	var cancel context.CancelFunc
	ginkgo.BeforeSuite(func() {
		var err error
		env, err = Start(s.Options)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		var ctx context.Context
		ctx, cancel = context.WithCancel(context.Background())
		if s.Setup != nil {
			gomega.Expect(s.Setup(ctx, env)).To(gomega.Succeed())
		}
	})
	ginkgo.AfterSuite(func() {
		if cancel != nil {
			cancel()
		}
		if s.Teardown != nil {
			gomega.Expect(s.Teardown()).To(gomega.Succeed())
		}
		if env != nil {
			gomega.Expect(env.Stop()).To(gomega.Succeed())
		}
	})
	ginkgo.RunSpecs(t, s.Name)
}

// Reconciler is a controller under test.
type Reconciler interface {
	SetupWithManager(ctrl.Manager) error
}

// ControllerSuite is what a controller's envtest suite gives its specs.
type ControllerSuite[R Reconciler] struct {
	Env *Env
	// Client talks to the API server directly (no cache).
	Client client.Client
	// Counting is the controller's own client; it counts the writes the
	// controller makes.
	Counting *CountingClient
	// Reconciler is the controller under test.
	Reconciler R
	// Ctx ends with the suite.
	Ctx context.Context
}

// ControllerSuiteInput says what a controller suite runs.
type ControllerSuiteInput[R Reconciler] struct {
	Name    string
	Options Options
	// Types are the controller's types: the manager's cache holds them as
	// the operator's does.
	Types engine.Types
	// New builds the reconciler on the manager's clients: c counts writes,
	// eng writes through it.
	New func(mgr ctrl.Manager, c client.Client, eng *engine.Engine) R
	// Before and After, when set, run before the controller starts and
	// after it stopped (a database server the specs use).
	Before, After func() error
}

// RunController runs a controller's envtest suite into s: the control
// plane, then the controller in a manager (StartController), the specs,
// and everything stopped.
func RunController[R Reconciler](t *testing.T, s *ControllerSuite[R], in ControllerSuiteInput[R]) {
	t.Helper()
	Run(t, Suite{
		Name: in.Name, Options: in.Options, Teardown: in.After,
		Setup: func(ctx context.Context, env *Env) (err error) {
			s.Env, s.Client, s.Ctx = env, env.Client, ctx
			if in.Before != nil {
				if err := in.Before(); err != nil {
					return err
				}
			}
			s.Counting, err = env.StartController(ctx, in.Types, func(mgr ctrl.Manager, c client.Client, eng *engine.Engine) error {
				s.Reconciler = in.New(mgr, c, eng)
				return s.Reconciler.SetupWithManager(mgr)
			})
			return err
		},
	})
}

// WebhookSuite is what a webhook suite gives its specs.
type WebhookSuite struct {
	Env *Env
	// Client talks to the API server, which calls the webhooks.
	Client client.Client
	// Ctx ends with the suite.
	Ctx context.Context
}

// RunWebhooks runs a webhook suite into s: the control plane with the
// CRDs and webhook configurations, the webhooks that setups register
// served where the API server calls them, the specs.
func RunWebhooks(t *testing.T, s *WebhookSuite, name string, setups ...func(ctrl.Manager) error) {
	t.Helper()
	Run(t, Suite{
		Name: name, Options: Options{CRDs: true, Webhooks: true},
		Setup: func(ctx context.Context, env *Env) error {
			s.Env, s.Client, s.Ctx = env, env.Client, ctx
			return env.StartWebhooks(ctx, setups...)
		},
	})
}
