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

package refwalk

import (
	"reflect"
	"sync"
)

// TypePlans holds, per struct type, what a walker over values needs of
// its fields, read from the type once: the walkers run on every admission
// request and every reconcile, and the types do not change. A plan may
// need the plans of the types below it; a type still being planned (a
// recursive type) is reported by planning, and a walker must then count
// it as one that can hold anything, so that nothing is skipped.
type TypePlans[P any] struct {
	mu       sync.Mutex
	done     sync.Map // reflect.Type → P
	underway map[reflect.Type]bool
	MakePlan func(t reflect.Type) P // called with mu held
}

// Of is t's plan.
func (tp *TypePlans[P]) Of(t reflect.Type) P {
	if p, ok := tp.done.Load(t); ok {
		return p.(P)
	}
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return tp.Locked(t)
}

// Locked is Of, with mu held: for a plan that needs another's.
func (tp *TypePlans[P]) Locked(t reflect.Type) P {
	if p, ok := tp.done.Load(t); ok {
		return p.(P)
	}
	if tp.underway == nil {
		tp.underway = map[reflect.Type]bool{}
	}
	tp.underway[t] = true
	defer delete(tp.underway, t)
	p := tp.MakePlan(t)
	tp.done.Store(t, p)
	return p
}

// Planning reports whether t's plan is being made (mu held).
func (tp *TypePlans[P]) Planning(t reflect.Type) bool { return tp.underway[t] }
