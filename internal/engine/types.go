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
	"maps"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/kubeforge/kubeforge/internal/proof"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Types are the object types one controller works with, declared once in
// its package: its controller's watches (Controller), the engine's prune
// list (Owned, given to Apply) and the manager's cache filter (Cached)
// all read them, and so do the test suites.
type Types struct {
	// Owned types are created and controlled by the kind: watched with
	// Owns, pruned by Apply.
	Owned []client.Object
	// Read types are only read. Their objects carry kubeforge's labels
	// (pods of a workload the kind owns, EndpointSlices of its Services),
	// so the label-filtered cache holds them.
	Read []Read
}

// Read is a type a controller reads but does not own.
type Read struct {
	Object client.Object
	// OwnerLabel, when set, names the label whose value is the name of the
	// custom resource (in the same namespace) that a change of such an
	// object concerns: the controller watches the type and maps each
	// change to that resource.
	OwnerLabel string
	// Concerns, when set, says which updates of such an object concern
	// the resource (MembershipChanged: a kind that only lists them); nil,
	// every update does. Creates and deletes always do.
	Concerns func(old, updated client.Object) bool
	// Metadata, when true, watches and caches the type's metadata only
	// (list it as a metav1.PartialObjectMetadataList of its kind): for a
	// kind whose labels and references are all it reads (a PodSet's
	// ReplicaSets), so that their specs cost the cache nothing.
	Metadata bool
	// Keep, for a type watched whole, is what the controller reads of an
	// object of it: the cache keeps only what Keep returns (and bounded
	// metadata, CacheTransform) of an object whose seal does not verify —
	// which is every object of the type someone else made, the operator's
	// labels being anyone's to write. Its content must be bounded whatever
	// the object holds. Every Read of one type names the same function
	// (package workload has them); without one, such an object keeps its
	// metadata only.
	Keep func(client.Object) client.Object
}

// MembershipChanged is Read.Concerns for a kind whose status only lists
// the objects it reads (a PodSet's Pods' names): an update concerns it
// when the object's labels change (it may join or leave the selection),
// its controller does (membership is proven by the controller's UID, not
// by labels: it is adopted or released), its deletion starts or, for a
// Pod, it finishes (Succeeded or Failed: its controller no longer counts
// it) — not when the rest of its status does. A PodSet's 50 Pods starting
// on the real node brought ≈ 270 reconciles, most of them for a Pod's
// status.
func MembershipChanged(old, updated client.Object) bool {
	return !maps.Equal(old.GetLabels(), updated.GetLabels()) ||
		controllerUID(old) != controllerUID(updated) ||
		(old.GetDeletionTimestamp() == nil) != (updated.GetDeletionTimestamp() == nil) ||
		finished(old) != finished(updated)
}

func finished(o client.Object) bool {
	p, ok := o.(*corev1.Pod)
	return ok && (p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed)
}

func controllerUID(o client.Object) types.UID {
	if ref := metav1.GetControllerOfNoCopy(o); ref != nil {
		return ref.UID
	}
	return ""
}

// Controller starts the controller for forType: it watches every change of
// forType (status included: a status write decided against a cache that
// lagged behind the previous write is corrected when the cache catches
// up; a reconcile with nothing to do writes nothing), every Owned type,
// and every Read type with an OwnerLabel. Of an Owned type it leaves out
// the update that is only the engine's seal of an object it has just
// created (keys verifies it): the create and the apply's answer have told
// the reconcile all it needs, and the object's next change brings the
// owner back as before.
func (t Types) Controller(mgr ctrl.Manager, keys *proof.Keyring, name string, forType client.Object) *builder.Builder {
	b := ctrl.NewControllerManagedBy(mgr).Named(name).For(forType)
	notSeal := builder.WithPredicates(notOwnSeal(mgr.GetScheme(), keys))
	for _, o := range t.Owned {
		if gvk, err := apiutil.GVKForObject(o, mgr.GetScheme()); err == nil && IsContentKind(gvk.GroupKind()) {
			// Their content is never cached: a change of their metadata
			// (which every write changes) is what brings the owner back.
			b = b.Owns(o, builder.OnlyMetadata, notSeal)
			continue
		}
		b = b.Owns(o, notSeal)
	}
	for _, r := range t.Read {
		if r.OwnerLabel == "" {
			continue
		}
		var opts []builder.WatchesOption
		if r.Metadata {
			opts = append(opts, builder.OnlyMetadata)
		}
		if r.Concerns != nil {
			opts = append(opts, builder.WithPredicates(predicate.Funcs{
				UpdateFunc: func(e event.UpdateEvent) bool { return r.Concerns(e.ObjectOld, e.ObjectNew) },
			}))
		}
		b = b.Watches(r.Object, EnqueueByLabel(r.OwnerLabel), opts...)
	}
	return b
}

// EnqueueByLabel maps an object to the custom resource named by its label
// in the same namespace; objects without the label map to nothing.
func EnqueueByLabel(label string) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
		name, ok := obj.GetLabels()[label]
		if !ok || name == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}}}
	})
}

// Cached is every type that the controllers of ts own or read, once each:
// the types the manager's cache holds only with kubeforge's label.
func Cached(ts ...Types) []client.Object {
	var out []client.Object
	seen := map[reflect.Type]bool{}
	add := func(o client.Object) {
		if t := reflect.TypeOf(o); !seen[t] {
			seen[t] = true
			out = append(out, o)
		}
	}
	for _, t := range ts {
		for _, o := range t.Owned {
			add(o)
		}
		for _, r := range t.Read {
			add(r.Object)
		}
	}
	return out
}

// OwnedOnly are the types some kind owns and no kind reads: what the
// cache may strip when it is not sealed (CacheTransform). A type another
// kind reads as made by Kubernetes (a PodSet's Pods) is never stripped.
func OwnedOnly(ts ...Types) []client.Object {
	read := map[reflect.Type]bool{}
	for _, t := range ts {
		for _, r := range t.Read {
			read[reflect.TypeOf(r.Object)] = true
		}
	}
	var out []client.Object
	seen := map[reflect.Type]bool{}
	for _, t := range ts {
		for _, o := range t.Owned {
			if rt := reflect.TypeOf(o); !read[rt] && !seen[rt] {
				seen[rt] = true
				out = append(out, o)
			}
		}
	}
	return out
}

// notOwnSeal passes every event but an update that only seals an object:
// its proof annotation went from the pending mark to a seal that verifies
// for the same binding, and nothing else changed but the resource version
// and the managed fields. Anything else — a seal taken away, changed or
// copied from elsewhere, any other change made with it — passes.
func notOwnSeal(s *runtime.Scheme, keys *proof.Keyring) predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		if keys == nil || e.ObjectOld == nil || e.ObjectNew == nil {
			return true
		}
		gvk, err := apiutil.GVKForObject(e.ObjectNew, s)
		if err != nil {
			gvk = e.ObjectNew.GetObjectKind().GroupVersionKind()
		}
		gk := gvk.GroupKind()
		was, before := keys.Check(sealed(gk, e.ObjectOld), e.ObjectOld.GetAnnotations()[proof.Annotation])
		is, after := keys.Check(sealed(gk, e.ObjectNew), e.ObjectNew.GetAnnotations()[proof.Annotation])
		if before != proof.Pending || after != proof.Sealed || was != is {
			return true
		}
		return !sameButSeal(e.ObjectOld, e.ObjectNew)
	}}
}

// sameButSeal reports whether a and b differ only in their proof
// annotation, resource version and managed fields.
func sameButSeal(a, b client.Object) bool {
	strip := func(o client.Object) client.Object {
		c := o.DeepCopyObject().(client.Object)
		c.SetResourceVersion("")
		c.SetManagedFields(nil)
		an := maps.Clone(c.GetAnnotations())
		delete(an, proof.Annotation)
		if len(an) == 0 {
			an = nil
		}
		c.SetAnnotations(an)
		return c
	}
	return equality.Semantic.DeepEqual(strip(a), strip(b))
}
