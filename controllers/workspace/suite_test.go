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
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubeforge/kubeforge/controllers/workspace"
	"github.com/kubeforge/kubeforge/internal/engine"
	"github.com/kubeforge/kubeforge/internal/test/testenv"
)

// The controller runs in a manager against a real kube-apiserver and etcd
// (envtest), with cert-manager's CRDs. There is no scheduler and no
// kubelet: a spec binds a Pod and sets its status by hand. An unbound Pod
// is deleted at once; a bound one would wait for a kubelet.
var suite = &testenv.ControllerSuite[*workspace.Reconciler]{}

func TestWorkspaceController(t *testing.T) {
	testenv.RunController(t, suite, workspace.Types(true), func(_ ctrl.Manager, c client.Client, eng *engine.Engine) *workspace.Reconciler {
		return &workspace.Reconciler{Options: workspace.Options{CertManager: true, AllowFrom: []string{"ingress-nginx"}}, Client: c, Engine: eng}
	}, testenv.WithCertManagerCRDs())
}
