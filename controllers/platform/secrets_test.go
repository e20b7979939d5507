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
	"github.com/kubeforge/kubeforge/internal/engine"
	"github.com/kubeforge/kubeforge/internal/proof"
	"github.com/kubeforge/kubeforge/internal/scheme"
)

// A rotate command carried out on a Platform read before someone's write
// (or before the cache saw one of ours) is cleared on the Platform as it
// is stored, so that the next pass does not rotate again; one that asks
// for something else by then is a new request and stays. Either way the
// pass ends as a wait, not a failure.
func TestACarriedOutCommandIsClearedOnThePlatformAsStored(t *testing.T) {
	const key = appsv1alpha1.RotateSecretAnnotation
	keys, err := proof.NewKeyring(time.Now(), bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		// meanwhile is what another writer does to the stored Platform
		// after this pass read it; nil for none.
		meanwhile func(*appsv1alpha1.Platform)
		// want is the command stored after the clear ("" for none).
		want string
		wait bool
	}{
		{name: "read as stored", want: "", wait: false},
		{name: "another annotation written since", meanwhile: func(p *appsv1alpha1.Platform) { p.Annotations["team"] = "shop" }, want: "", wait: true},
		{name: "a new request since", meanwhile: func(p *appsv1alpha1.Platform) { p.Annotations[key] = "admin,session" }, want: "admin,session", wait: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			stored := platform("1.0", "api")
			stored.UID = types.UID("platform-uid")
			stored.Annotations = map[string]string{key: "admin"}
			cl := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(stored).Build()
			ctx := context.Background()
			read := &appsv1alpha1.Platform{}
			if err := cl.Get(ctx, client.ObjectKeyFromObject(stored), read); err != nil {
				t.Fatal(err)
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
				t.Errorf("stored command %q, want %q", got, c.want)
			}
			if c.meanwhile != nil && c.want == "" && after.Annotations["team"] != "shop" {
				t.Errorf("the other writer's annotation was lost: %v", after.Annotations)
			}
		})
	}
}

// A database password rotation on a Platform read before someone's write
// ends its pass as a wait once the request is cleared: no warning that
// the database server is not ready, no plan from the Platform as read,
// and the next pass does not rotate again.
func TestARotationOnAPlatformChangedSinceReadEndsThePassAsAWait(t *testing.T) {
	keys, err := proof.NewKeyring(time.Now(), bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	stored := platform("1.0", "api")
	stored.Spec.Components[0].Database = &appsv1alpha1.ComponentDatabase{Enabled: true}
	stored.Spec.Database = &appsv1alpha1.PlatformDatabase{Engine: appsv1alpha1.DatabasePostgreSQL, Host: "127.0.0.1", Port: 1,
		AdminSecretRef: corev1.LocalObjectReference{Name: "acme-admin"}}
	appsv1alpha1.DefaultPlatform(stored)
	stored.UID = types.UID("platform-uid")
	stored.Annotations = map[string]string{appsv1alpha1.RotateDatabasePasswordAnnotation: "api"}
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
}
