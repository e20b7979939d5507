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
	"fmt"
	"os"
	"strings"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubeforge/kubeforge/internal/engine"
	"github.com/kubeforge/kubeforge/internal/proof"
)

// StartController runs a manager on the test control plane the way the
// operator runs one: its cache holds the owned types only with kubeforge's
// label and without managedFields, for the controller's Types. Writes go through a CountingClient,
// which setup gets along with an engine that writes through it, to build
// and register the reconciler. The manager runs until ctx ends.
func (e *Env) StartController(ctx context.Context, types engine.Types,
	setup func(mgr ctrl.Manager, c client.Client, eng *engine.Engine) error) (*CountingClient, error) {
	// The cache and client the manager runs with (cmd/manager): ConfigMaps
	// and Secrets as metadata, unsealed objects stripped.
	settings := engine.CacheSettings{Transform: engine.CacheTransform(e.Proof, e.Scheme, types)}
	mgr, err := e.NewManager(ctrl.Options{
		Cache: engine.CacheOptions(settings, engine.Cached(types)...),
		NewCache: func(config *rest.Config, opts cache.Options) (cache.Cache, error) {
			c, err := cache.New(config, opts)
			return engine.GuardCache(c), err
		},
		Client: engine.ClientOptions(),
	})
	if err != nil {
		return nil, err
	}
	counting := NewCountingClient(mgr.GetClient())
	eng := &engine.Engine{Client: counting, Reader: mgr.GetAPIReader(), Scheme: mgr.GetScheme(), Recorder: mgr.GetEventRecorder("kubeforge"),
		Proof: e.Proof}
	if err := setup(mgr, counting, eng); err != nil {
		return nil, err
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "the test manager stopped: %v\n", err)
		}
	}()
	return counting, nil
}

// Sealed reports whether obj carries the engine's seal, not only the mark
// of a create in flight: the engine is done writing it. A test that plays
// a Kubernetes controller (writing a Deployment's or Pod's status) waits
// for it, since the seal changes the object (and a Deployment's
// generation) right after its create.
func Sealed(obj client.Object) bool {
	return strings.HasPrefix(obj.GetAnnotations()[proof.Annotation], "v1.")
}
