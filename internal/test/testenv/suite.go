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
	"os"
	"strconv"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"go.uber.org/zap/zapcore"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/kubeforge/kubeforge/internal/admit"
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
	// What the controllers and webhooks log goes to the spec's own output,
	// which Ginkgo shows only for a spec that fails: a failure then comes
	// with what the operator did meanwhile. KUBEFORGE_TEST_V raises the
	// verbosity (as the manager's --zap-log-level does).
	level := zapcore.InfoLevel
	if v, err := strconv.Atoi(os.Getenv("KUBEFORGE_TEST_V")); err == nil && v > 0 {
		level = zapcore.Level(-v)
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(ginkgo.GinkgoWriter), zap.UseDevMode(true), zap.Level(level), zap.StacktraceLevel(zapcore.PanicLevel)))
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
	// Client talks to the API server directly (no cache), and stamps the
	// kubeforge objects it writes as the mutating webhook would
	// (Env.Admitting); Env.Client does not.
	Client client.Client
	// Counting is the controller's own client; it counts the writes the
	// controller makes.
	Counting *CountingClient
	// Reconciler is the controller under test.
	Reconciler R
	// Ctx ends with the suite.
	Ctx context.Context
}

// SuiteOption changes what a controller suite starts.
type SuiteOption func(*controllerSuite)

type controllerSuite struct {
	options       Options
	before, after func() error
}

// WithCertManagerCRDs installs cert-manager's CRDs too.
func WithCertManagerCRDs() SuiteOption {
	return func(c *controllerSuite) { c.options.CertManagerCRDs = true }
}

// Around runs before before the controller starts and after after it
// stopped (a database server the specs use).
func Around(before, after func() error) SuiteOption {
	return func(c *controllerSuite) { c.before, c.after = before, after }
}

// RunController runs a controller's envtest suite, named after the test,
// into s: the control plane with the CRDs, the controller that newR builds
// on a manager whose cache holds types as the operator's does (newR gets
// the counting client c and an engine writing through it), the specs,
// and everything stopped.
func RunController[R Reconciler](t *testing.T, s *ControllerSuite[R], types engine.Types,
	newR func(mgr ctrl.Manager, c client.Client, eng *engine.Engine) R, opts ...SuiteOption) {
	t.Helper()
	in := controllerSuite{options: Options{CRDs: true}}
	for _, o := range opts {
		o(&in)
	}
	Run(t, Suite{
		Name: t.Name(), Options: in.options, Teardown: in.after,
		Setup: func(ctx context.Context, env *Env) (err error) {
			s.Env, s.Client, s.Ctx = env, env.Admitting(), ctx
			if in.before != nil {
				if err := in.before(); err != nil {
					return err
				}
			}
			s.Counting, err = env.StartController(ctx, types, func(mgr ctrl.Manager, c client.Client, eng *engine.Engine) error {
				s.Reconciler = newR(mgr, c, eng)
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

// RunWebhooks runs a webhook suite, named after the test, into s: the control plane with the
// CRDs and webhook configurations, the webhooks that setups register
// served where the API server calls them, the specs.
func RunWebhooks(t *testing.T, s *WebhookSuite, setups ...func(ctrl.Manager, admit.Options) error) {
	t.Helper()
	Run(t, Suite{
		Name: t.Name(), Options: Options{CRDs: true, Webhooks: true},
		Setup: func(ctx context.Context, env *Env) error {
			s.Env, s.Client, s.Ctx = env, env.Client, ctx
			return env.StartWebhooks(ctx, setups...)
		},
	})
}
