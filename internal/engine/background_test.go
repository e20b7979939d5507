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

package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func obj(ns, name string) client.Object {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

// waitResult asks until the work of o has ended, as the reconciles its
// end brings back would.
func waitResult(t *testing.T, b *Background, o client.Object, fp string) any {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if res, ok := b.Do(o, fp, nil); ok {
			return res
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("the work of %s never ended", o.GetName())
	return nil
}

func TestBackgroundStartsOnceAnswersAtOnceAndBringsTheObjectBack(t *testing.T) {
	b := &Background{}
	release := make(chan struct{})
	o := obj("team-a", "shop")
	start := time.Now()
	for range 3 {
		if _, ok := b.Do(o, "v1", func(context.Context) any { <-release; return "provisioned" }); ok {
			t.Fatal("a result before the work ended")
		}
	}
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Errorf("Do held its caller %s: the work must not run on the reconcile worker", d)
	}
	if n := b.Started(); n != 1 {
		t.Errorf("started %d times for one object and fingerprint, want 1", n)
	}
	close(release)
	select {
	case e := <-b.events:
		if e.Object.GetName() != "shop" {
			t.Errorf("the end brought back %s", e.Object.GetName())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the end of the work brought nothing back")
	}
	if res := waitResult(t, b, o, "v1"); res != "provisioned" {
		t.Errorf("result %v", res)
	}
	// A result is used once; one for another fingerprint never.
	b.Do(o, "v1", func(context.Context) any { return "old spec" })
	<-b.events
	if res, ok := b.Do(o, "v2", func(context.Context) any { return "new spec" }); ok {
		t.Fatalf("the result of another fingerprint was used: %v", res)
	}
	<-b.events
	if res := waitResult(t, b, o, "v2"); res != "new spec" {
		t.Errorf("result %v, want the work of the new fingerprint", res)
	}
}

// A tenant's silent servers hold the tenant's own slots only: another
// namespace's work runs and ends meanwhile.
func TestBackgroundIsFairBetweenNamespaces(t *testing.T) {
	b := &Background{Max: 4, PerNamespace: 2}
	silent := make(chan struct{})
	defer close(silent)
	for i := range 10 {
		b.Do(obj("mallory", fmt.Sprintf("hang-%d", i)), "v1", func(context.Context) any { <-silent; return nil })
	}
	running := make(chan struct{}, 10)
	b.Do(obj("mallory", "hang-0"), "v1", nil) // still running: nothing new
	// Wait until mallory's work holds what it can: her namespace's slots.
	holding := func() (ns, all int) {
		b.mu.Lock()
		defer b.mu.Unlock()
		return len(b.perNS["mallory"]), len(b.all)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if ns, _ := holding(); ns == 2 || time.Now().After(deadline) {
			break
		}
	}
	if ns, all := holding(); ns != 2 || all != 2 {
		t.Fatalf("mallory's 10 silent pieces hold %d of her namespace's slots and %d of all, want 2 and 2", ns, all)
	}
	o := obj("alice", "shop")
	b.Do(o, "v1", func(context.Context) any { running <- struct{}{}; return "done" })
	select {
	case <-running:
	case <-time.After(5 * time.Second):
		t.Fatal("alice's work waits behind mallory's silent servers")
	}
	if res := waitResult(t, b, o, "v1"); res != "done" {
		t.Errorf("result %v", res)
	}
	if ns, _ := holding(); ns != 2 {
		t.Errorf("mallory holds %d slots, want her namespace's 2", ns)
	}
}
