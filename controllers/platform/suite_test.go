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

package platform_test

import (
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubeforge/kubeforge/controllers/platform"
	"github.com/kubeforge/kubeforge/internal/engine"
	"github.com/kubeforge/kubeforge/internal/test/testdb"
	"github.com/kubeforge/kubeforge/internal/test/testenv"
)

// The controller runs in a manager against a real kube-apiserver and etcd
// (envtest). There is no kube-controller-manager: workloads get no pods
// and no status unless a spec sets them by hand, as it does to make a
// component Ready. The database specs run against real MariaDB and
// PostgreSQL servers on loopback (internal/test/testdb).
var suite = &testenv.ControllerSuite[*platform.Reconciler]{}

// dbServers are the database servers the specs provision on, by engine.
var dbServers = map[string]*testdb.Server{}

func TestPlatformController(t *testing.T) {
	testenv.RunController(t, suite, platform.Types(false), func(mgr ctrl.Manager, c client.Client, eng *engine.Engine) *platform.Reconciler {
		return &platform.Reconciler{Client: c, APIReader: mgr.GetAPIReader(), Engine: eng, CleanupTimeout: 3 * time.Second}
	}, testenv.Around(startDatabases, stopDatabases))
}

// startDatabases starts a MariaDB and a PostgreSQL server on loopback.
func startDatabases() error {
	for _, engine := range []string{testdb.MariaDB, testdb.PostgreSQL} {
		s, err := testdb.Start(engine)
		if err != nil {
			return err
		}
		dbServers[engine] = s
	}
	return nil
}

// stopDatabases stops them.
func stopDatabases() error {
	for _, s := range dbServers {
		if err := s.Close(); err != nil {
			return err
		}
	}
	return nil
}
