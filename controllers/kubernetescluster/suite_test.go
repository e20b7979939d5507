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

package kubernetescluster_test

import (
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubeforge/kubeforge/controllers/kubernetescluster"
	"github.com/kubeforge/kubeforge/internal/engine"
	"github.com/kubeforge/kubeforge/internal/test/testenv"
)

// The controller runs in a manager against a real kube-apiserver and etcd
// (envtest). There is no kube-controller-manager: Jobs get no pods and
// no status unless a spec sets them by hand, as it does to finish an
// operation.
var suite = &testenv.ControllerSuite[*kubernetescluster.Reconciler]{}

func TestKubernetesClusterController(t *testing.T) {
	testenv.RunController(t, suite, kubernetescluster.Types, func(mgr ctrl.Manager, c client.Client, eng *engine.Engine) *kubernetescluster.Reconciler {
		return &kubernetescluster.Reconciler{Client: c, APIReader: mgr.GetAPIReader(), Engine: eng, CleanupTimeout: 3 * time.Second}
	})
}
