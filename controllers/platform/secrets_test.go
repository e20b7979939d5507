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

package platform

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/admit"
	"github.com/kubeforge/kubeforge/internal/engine"
	"github.com/kubeforge/kubeforge/internal/proof"
	"github.com/kubeforge/kubeforge/internal/scheme"
)

// signedPlatform is a Platform with a rotate-secret request, stamped as
// admission would stamp it, and a fake API server holding it.
func signedPlatform(t *testing.T, keys *proof.Keyring) (*appsv1alpha1.Platform, client.Client) {
	t.Helper()
	stored := platform("1.0", "api")
	stored.UID = types.UID("platform-uid")
	stored.Annotations = map[string]string{appsv1alpha1.RotateSecretAnnotation: "admin"}
	if err := admit.Platform.Sign(keys, stored, "alice", time.Now()); err != nil {
		t.Fatal(err)
	}
	return stored, fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(stored).Build()
}

func testKeys(t *testing.T) *proof.Keyring {
	t.Helper()
	keys, err := proof.NewKeyring(time.Now(), bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// A rotate request carried out on a Platform read before someone's write
// (or before the cache saw one of ours) is removed from the Platform as it
// is stored when it is still the request carried out — the same value
// under the same admission stamp — so that the next pass does not rotate
// again; one that differs by then (another value, the same value set
// again, which admission stamps anew) is a new request and stays. The
// Platform as stored keeps its stamp only when that stamp verifies for it.
// Either way the pass ends as a wait, not a failure.
func TestACarriedOutRequestIsRemovedFromThePlatformAsStored(t *testing.T) {
	const key = appsv1alpha1.RotateSecretAnnotation
	keys := testKeys(t)
	for _, c := range []struct {
		name string
		// meanwhile is what another writer does to the stored Platform
		// after this pass read it; nil for none.
		meanwhile func(*appsv1alpha1.Platform)
		// want is the request stored afterwards ("" for none); stamped
		// whether the stored Platform's stamp verifies.
		want    string
		stamped bool
		wait    bool
	}{
		{name: "read as stored", want: "", stamped: true},
		{name: "another annotation written since", meanwhile: func(p *appsv1alpha1.Platform) { p.Annotations["team"] = "shop" },
			want: "", stamped: true, wait: true},
		{name: "another request since", meanwhile: func(p *appsv1alpha1.Platform) {
			p.Annotations[key] = "admin,session"
			if err := admit.Platform.Sign(keys, p, "alice", time.Now()); err != nil {
				t.Fatal(err)
			}
		}, want: "admin,session", stamped: true, wait: true},
		{name: "the same request set again since", meanwhile: func(p *appsv1alpha1.Platform) {
			if err := admit.Platform.Sign(keys, p, "bob", time.Now()); err != nil {
				t.Fatal(err)
			}
		}, want: "admin", stamped: true, wait: true},
		{name: "the request taken away since", meanwhile: func(p *appsv1alpha1.Platform) {
			delete(p.Annotations, key)
			if err := admit.Platform.Sign(keys, p, "alice", time.Now()); err != nil {
				t.Fatal(err)
			}
		}, want: "", stamped: true, wait: true},
		{name: "the spec changed since without admission", meanwhile: func(p *appsv1alpha1.Platform) { p.Spec.Version = "2.0" },
			want: "", stamped: false, wait: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			stored, cl := signedPlatform(t, keys)
			ctx := context.Background()
			read := &appsv1alpha1.Platform{}
			if err := cl.Get(ctx, client.ObjectKeyFromObject(stored), read); err != nil {
				t.Fatal(err)
			}
			if !admit.Platform.Stamped(keys, read) {
				t.Fatal("the Platform as read is not stamped")
			}
			if c.meanwhile != nil {
				other := read.DeepCopy()
				c.meanwhile(other)
				if err := cl.Update(ctx, other); err != nil {
					t.Fatal(err)
				}
			}
			r := &Reconciler{Client: cl, APIReader: cl, Engine: &engine.Engine{Client: cl, Scheme: scheme.New(), Proof: keys}}

			err := r.clearAnnotation(ctx, read, key)
			if c.wait != (err != nil) || err != nil && !engine.Waiting(err) {
				t.Fatalf("clearAnnotation: %v; want a wait: %v", err, c.wait)
			}
			after := &appsv1alpha1.Platform{}
			if err := cl.Get(ctx, client.ObjectKeyFromObject(stored), after); err != nil {
				t.Fatal(err)
			}
			if got := after.Annotations[key]; got != c.want {
				t.Errorf("stored request %q, want %q", got, c.want)
			}
			if got := admit.Platform.Stamped(keys, after); got != c.stamped {
				t.Errorf("the stored Platform's stamp verifies: %v, want %v", got, c.stamped)
			}
			if c.name == "another annotation written since" && after.Annotations["team"] != "shop" {
				t.Errorf("the other writer's annotation was lost: %v", after.Annotations)
			}
		})
	}
}

// A pass that reads a request this manager already carried out and
// removed, from a cache behind the removal, waits instead of carrying it
// out again; the same value set again (stamped anew) is carried out.
func TestARequestReadAgainFromACacheBehindItsRemovalIsNotCarriedOutAgain(t *testing.T) {
	const key = appsv1alpha1.RotateSecretAnnotation
	keys := testKeys(t)
	stored, cl := signedPlatform(t, keys)
	ctx := context.Background()
	read := &appsv1alpha1.Platform{}
	if err := cl.Get(ctx, client.ObjectKeyFromObject(stored), read); err != nil {
		t.Fatal(err)
	}
	r := &Reconciler{Client: cl, APIReader: cl, Engine: &engine.Engine{Client: cl, Scheme: scheme.New(), Proof: keys}}
	if names, err := r.rotateRequest(read, key); err != nil || len(names) != 1 || names[0] != "admin" {
		t.Fatalf("rotateRequest before: %v, %v; want [admin]", names, err)
	}
	cached := read.DeepCopy()
	if err := r.clearAnnotation(ctx, read, key); err != nil {
		t.Fatal(err)
	}

	if names, err := r.rotateRequest(cached, key); !engine.Waiting(err) || len(names) != 0 {
		t.Errorf("the request read again from the cache: %v, %v; want a wait and nothing to rotate", names, err)
	}
	again := cached.DeepCopy()
	if err := admit.Platform.Sign(keys, again, "alice", time.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if names, err := r.rotateRequest(again, key); err != nil || len(names) != 1 {
		t.Errorf("the same value set again: %v, %v; want it carried out", names, err)
	}
	if names, err := r.rotateRequest(read, key); err != nil || len(names) != 0 {
		t.Errorf("after the removal: %v, %v; want nothing", names, err)
	}
}

// A database password rotation on a Platform read before someone's write
// ends its pass as a wait once the request is cleared: no warning that
// the database server is not ready, no plan from the Platform as read,
// and the next pass does not rotate again.
func TestARotationOnAPlatformChangedSinceReadEndsThePassAsAWait(t *testing.T) {
	keys := testKeys(t)
	stored := platform("1.0", "api")
	stored.Spec.Components[0].Database = &appsv1alpha1.ComponentDatabase{Enabled: true}
	stored.Spec.Database = &appsv1alpha1.PlatformDatabase{Engine: appsv1alpha1.DatabasePostgreSQL, Host: "127.0.0.1", Port: 1,
		AdminSecretRef: corev1.LocalObjectReference{Name: "acme-admin"}}
	appsv1alpha1.DefaultPlatform(stored)
	stored.UID = types.UID("platform-uid")
	stored.Annotations = map[string]string{appsv1alpha1.RotateDatabasePasswordAnnotation: "api"}
	if err := admit.Platform.Sign(keys, stored, "alice", time.Now()); err != nil {
		t.Fatal(err)
	}
	cl := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(stored).Build()
	ctx := context.Background()
	read := &appsv1alpha1.Platform{}
	if err := cl.Get(ctx, client.ObjectKeyFromObject(stored), read); err != nil {
		t.Fatal(err)
	}
	other := read.DeepCopy()
	other.Annotations["team"] = "shop"
	if err := cl.Update(ctx, other); err != nil {
		t.Fatal(err)
	}
	recorder := events.NewFakeRecorder(20)
	r := &Reconciler{Client: cl, APIReader: cl, Engine: &engine.Engine{Client: cl, Scheme: scheme.New(), Proof: keys, Recorder: recorder}}

	cached := read.DeepCopy()
	o, err := r.reconcile(ctx, read, nil)
	if !engine.Waiting(err) {
		t.Fatalf("reconcile: %v; want a wait", err)
	}
	if o.steps != nil {
		t.Errorf("the pass planned from the Platform as read: %+v", o.steps)
	}
	close(recorder.Events)
	for e := range recorder.Events {
		if strings.HasPrefix(e, corev1.EventTypeWarning) {
			t.Errorf("a warning for a wait: %s", e)
		}
	}
	after := &appsv1alpha1.Platform{}
	if err := cl.Get(ctx, client.ObjectKeyFromObject(stored), after); err != nil {
		t.Fatal(err)
	}
	if v, ok := after.Annotations[appsv1alpha1.RotateDatabasePasswordAnnotation]; ok {
		t.Errorf("the rotation request %q is still there for the next pass to carry out again", v)
	}

	// The next pass, on a cache still behind the removal, does not rotate
	// again: the password written stays.
	secret := &corev1.Secret{}
	name := client.ObjectKey{Namespace: stored.Namespace, Name: DatabaseSecretName(stored, &stored.Spec.Components[0])}
	if err := cl.Get(ctx, name, secret); err != nil {
		t.Fatal(err)
	}
	if _, err := r.reconcile(ctx, cached, nil); !engine.Waiting(err) {
		t.Fatalf("the next pass on the cache behind: %v; want a wait", err)
	}
	again := &corev1.Secret{}
	if err := cl.Get(ctx, name, again); err != nil {
		t.Fatal(err)
	}
	if string(again.Data["password"]) != string(secret.Data["password"]) {
		t.Error("the next pass rotated the password again")
	}
}
