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
	"time"

	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubeforge/kubeforge/internal/admit"
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
		NewClient: func(config *rest.Config, options client.Options) (client.Client, error) {
			c, err := client.New(config, options)
			if err != nil {
				return nil, err
			}
			return engine.MetadataFromCache(c, options), nil
		},
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

// KitSigner is who the stamps of Admitting name.
const KitSigner = "kubeforge test kit (for the mutating webhook)"

// Admitting returns a client that stands in for kubeforge's mutating
// webhook, which the controller suites do not run: each kubeforge object
// it creates or changes gets the admission stamp the webhook writes once
// the access checks pass (admit.Stamper), so that the reconcilers act on
// it. Env.Client writes objects as they would be stored while the
// webhooks were not called: without one.
func (e *Env) Admitting() client.Client {
	return AdmittingClient(e.Client, e.Scheme, e.Proof)
}

// AdmittingClient is Env.Admitting for any client and keyring (the
// performance harness's, whose manager runs without webhooks).
func AdmittingClient(c client.Client, s *kruntime.Scheme, keys *proof.Keyring) client.Client {
	return admittingClient{Client: c, scheme: s, keys: keys}
}

type admittingClient struct {
	client.Client
	scheme *kruntime.Scheme
	keys   *proof.Keyring
}

func (c admittingClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if err := c.sign(obj); err != nil {
		return err
	}
	if err := c.Client.Create(ctx, obj, opts...); err != nil {
		return err
	}
	return c.kept(obj)
}

func (c admittingClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	if err := c.sign(obj); err != nil {
		return err
	}
	if err := c.Client.Update(ctx, obj, opts...); err != nil {
		return err
	}
	return c.kept(obj)
}

func (c admittingClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	if err := c.Client.Patch(ctx, obj, patch, opts...); err != nil {
		return err
	}
	return c.restamp(ctx, obj)
}

func (c admittingClient) sign(obj client.Object) error {
	if st := admit.StamperFor(c.scheme, obj); st != nil {
		return st.SignObject(c.keys, obj, KitSigner, time.Now())
	}
	return nil
}

// kept fails when the stamp signed for a create or update does not verify
// for what the API server stored (its own defaults changed the spec): a
// stamp the webhook made would not verify either.
func (c admittingClient) kept(obj client.Object) error {
	if st := admit.StamperFor(c.scheme, obj); st != nil && st.NeedsStamp(c.keys, obj) {
		return fmt.Errorf("the stamp signed for %s %s/%s does not verify for the object stored", st.GroupVersionKind().Kind,
			obj.GetNamespace(), obj.GetName())
	}
	return nil
}

// restamp stamps obj as a patch left it (the kit cannot sign what a
// patch will make before the API server makes it): one more write, as
// the webhook's own signature would have been.
func (c admittingClient) restamp(ctx context.Context, obj client.Object) error {
	st := admit.StamperFor(c.scheme, obj)
	if st == nil || !st.NeedsStamp(c.keys, obj) {
		return nil
	}
	base := obj.DeepCopyObject().(client.Object)
	if err := st.SignObject(c.keys, obj, KitSigner, time.Now()); err != nil {
		return err
	}
	return c.Client.Patch(ctx, obj, client.MergeFrom(base))
}
