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
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// Background runs the slow work of a reconcile — calls to a server
// outside the cluster that a tenant names, which may answer slowly or
// never — off the reconcile workers. A reconcile asks Do for the result of
// the work its object needs now; the first ask starts the work and
// returns at once, and when the work ends the object is reconciled again
// (Source) and its ask gets the result. So a tenant's silent server holds
// a goroutine and a slot, never a worker that other tenants' objects
// need. The slots are fair: at most PerNamespace pieces of work of one
// namespace run at once, and Max in all; the rest wait their turn,
// without holding a worker either.
type Background struct {
	// Max and PerNamespace bound the work running at once, in all and per
	// namespace. Zero means DefaultBackgroundMax and
	// DefaultBackgroundPerNamespace.
	Max, PerNamespace int

	once    sync.Once
	mu      sync.Mutex
	tasks   map[types.NamespacedName]*task
	all     chan struct{}
	perNS   map[string]chan struct{}
	events  chan event.TypedGenericEvent[client.Object]
	started int
}

// The defaults of Background.Max and PerNamespace.
const (
	DefaultBackgroundMax          = 16
	DefaultBackgroundPerNamespace = 2
)

// task is the work for one object: for one fingerprint of what it
// depends on.
type task struct {
	fingerprint string
	done        bool
	result      any
}

func (b *Background) init() {
	b.once.Do(func() {
		if b.Max <= 0 {
			b.Max = DefaultBackgroundMax
		}
		if b.PerNamespace <= 0 {
			b.PerNamespace = DefaultBackgroundPerNamespace
		}
		b.tasks = map[types.NamespacedName]*task{}
		b.all = make(chan struct{}, b.Max)
		b.perNS = map[string]chan struct{}{}
		b.events = make(chan event.TypedGenericEvent[client.Object], 1024)
	})
}

// Do returns the result of obj's work for fingerprint (what the work
// depends on, so that a result for another spec or another password is
// never used) once it has ended, and forgets it; ok is false while it
// runs or waits for a slot, and the first call starts it. The work
// outlives the reconcile that started it: its context never ends, so it
// must bound itself (its own timeouts). A result for an older fingerprint
// is dropped and the work started again.
func (b *Background) Do(obj client.Object, fingerprint string, work func(context.Context) any) (result any, ok bool) {
	b.init()
	key := types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.tasks[key]
	switch {
	case t != nil && !t.done:
		return nil, false // running or waiting: its end brings obj back
	case t != nil && t.fingerprint == fingerprint:
		delete(b.tasks, key)
		return t.result, true
	}
	t = &task{fingerprint: fingerprint}
	b.tasks[key] = t
	ns := b.perNS[key.Namespace]
	if ns == nil {
		ns = make(chan struct{}, b.PerNamespace)
		b.perNS[key.Namespace] = ns
	}
	b.started++
	owner := obj.DeepCopyObject().(client.Object)
	go func() {
		ns <- struct{}{}
		b.all <- struct{}{}
		res := work(context.Background())
		<-b.all
		<-ns
		b.mu.Lock()
		t.result, t.done = res, true
		b.mu.Unlock()
		b.events <- event.TypedGenericEvent[client.Object]{Object: owner}
	}()
	return nil, false
}

// Forget drops what is known of the work of the object key names (it is
// gone). A piece still running ends on its own; its end brings the key
// back, which forgets it then.
func (b *Background) Forget(key types.NamespacedName) {
	b.init()
	b.mu.Lock()
	defer b.mu.Unlock()
	if t := b.tasks[key]; t != nil && t.done {
		delete(b.tasks, key)
	}
}

// Started counts the pieces of work started, for tests and metrics.
func (b *Background) Started() int {
	b.init()
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.started
}

// Source is what the controller watches: the object whose work ended.
func (b *Background) Source() source.Source {
	b.init()
	return source.Channel(b.events, &handler.EnqueueRequestForObject{})
}
