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

// Package engine is the owned-object engine that every kubeforge reconciler
// uses. A reconciler builds the objects it wants with pure functions of its
// custom resource and hands them to Engine.Apply, which
//
//   - sets the controller owner reference and the common labels,
//   - skips the write entirely when the live object already has every field
//     we want (zero API writes for a reconcile where nothing changed),
//   - otherwise applies the object with server-side apply and one field
//     owner, which also repairs drift made by hand,
//   - and deletes objects this owner created earlier but no longer wants.
//
// Builders must spell out every field they care about. A field left at a
// zero value that the API server then defaults (a Service port's
// targetPort of 0, say) differs from the live object forever and costs a
// write on every reconcile; the log line "Updating owned object" names the
// first differing field, and the zero-write tests of each kind catch it.
package engine

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kubeforge/kubeforge/internal/conditions"
)

// The common labels the engine puts on every owned object.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	LabelInstance  = "app.kubernetes.io/instance"
	LabelComponent = "app.kubernetes.io/component"

	// ManagedByValue is the value of LabelManagedBy. The manager's cache
	// holds owned kinds only when they carry it.
	ManagedByValue = "kubeforge"

	// FieldOwner is the server-side apply field manager of every write.
	FieldOwner = "kubeforge"

	// AnnotationDesiredHash records a digest of what the engine last
	// applied, so that a field removed from the desired object is noticed.
	AnnotationDesiredHash = "kubeforge.io/desired-hash"

	// AnnotationRetain on a desired object (set it with Retain) makes the
	// engine apply it without an owner reference, so the garbage collector
	// keeps it when the owner is deleted, and never prune it. A volume
	// with a Retain reclaim policy is the case. Applying the same object
	// later without the annotation gives it the owner reference (back).
	AnnotationRetain = "kubeforge.io/retain-on-delete"
)

// AnnotationCreateOnly on a desired object (set it with CreateOnly) makes
// the engine create it when it is missing and otherwise leave it alone:
// no comparison, no update. A Job, whose spec cannot change and which
// records one run, is the case.
const AnnotationCreateOnly = "kubeforge.io/create-only"

// CreateOnly marks a desired object to be created once and never updated.
func CreateOnly(obj client.Object) {
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[AnnotationCreateOnly] = "true"
	obj.SetAnnotations(a)
}

// Retain marks a desired object to outlive its owner: see AnnotationRetain.
func Retain(obj client.Object) {
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[AnnotationRetain] = "true"
	obj.SetAnnotations(a)
}

// Engine applies and prunes the objects that a custom resource owns.
type Engine struct {
	// Client reads through the manager's cache and writes to the API server.
	Client client.Client
	// Scheme knows every owned type.
	Scheme *runtime.Scheme
	// Recorder, if set, receives an event for every create, update and delete.
	Recorder events.EventRecorder
}

// Result says what Apply did.
type Result struct {
	// Created, Updated, Unchanged and Pruned hold "Kind/name" entries.
	Created, Updated, Unchanged, Pruned []string
	// Live holds, by "Kind/name", each desired object as it is now: the API
	// server's answer for those created or updated, the cached copy for the
	// unchanged. Status computed from it does not lag behind this
	// reconcile's own writes, as a read from the cache right after would.
	Live map[string]client.Object
}

// LiveObject copies into obj the live version of the desired object with
// obj's kind and name, and reports whether Apply had one.
func (r Result) LiveObject(s *runtime.Scheme, obj client.Object) bool {
	gvk, err := apiutil.GVKForObject(obj, s)
	if err != nil {
		return false
	}
	live, ok := r.Live[objectKey(gvk, obj.GetName())]
	if !ok || reflect.TypeOf(live) != reflect.TypeOf(obj) {
		return false
	}
	reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(live.DeepCopyObject()).Elem())
	return true
}

// Writes is the number of API writes Apply made.
func (r Result) Writes() int { return len(r.Created) + len(r.Updated) + len(r.Pruned) }

// CommonLabels are the labels the engine sets on every object owned by
// owner. Builders use them for pod templates, whose labels the engine does
// not touch.
func CommonLabels(owner client.Object, component string) map[string]string {
	return map[string]string{
		LabelManagedBy: ManagedByValue,
		LabelInstance:  owner.GetName(),
		LabelComponent: component,
	}
}

// Apply makes the cluster hold exactly the desired objects for owner: it
// creates or updates each desired object (in order) and deletes the objects
// of the listed owned types that owner controls but no longer wants. The
// owned types are given as empty objects, e.g. &appsv1.Deployment{}: a
// controller's Types.Owned.
//
// Errors of individual objects are aggregated; Apply still tries every
// object, so one bad object does not stop the others from converging.
func (e *Engine) Apply(ctx context.Context, owner client.Object, desired []client.Object, ownedTypes ...client.Object) (Result, error) {
	res := Result{Live: map[string]client.Object{}}
	var errs []error
	keep := map[string]bool{}

	for _, obj := range desired {
		key, outcome, live, err := e.applyOne(ctx, owner, obj)
		if key != "" {
			keep[key] = true
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if live != nil {
			res.Live[key] = live
		}
		switch outcome {
		case created:
			res.Created = append(res.Created, key)
		case updated:
			res.Updated = append(res.Updated, key)
		default:
			res.Unchanged = append(res.Unchanged, key)
		}
	}

	// Pruning only after every desired object was attempted; never prune
	// when building the desired set failed part-way.
	if len(errs) == 0 {
		pruned, err := e.DeleteOwned(ctx, owner, ownedTypes,
			client.MatchingLabels{LabelManagedBy: ManagedByValue, LabelInstance: owner.GetName()},
			func(obj client.Object, key string) bool { return !keep[key] })
		res.Pruned = pruned
		if err != nil {
			errs = append(errs, err)
		}
	}
	return res, kerrors.NewAggregate(errs)
}

type outcome int

const (
	unchanged outcome = iota
	created
	updated
)

func (e *Engine) applyOne(ctx context.Context, owner client.Object, obj client.Object) (string, outcome, client.Object, error) {
	log := logf.FromContext(ctx)
	gvk, err := apiutil.GVKForObject(obj, e.Scheme)
	if err != nil {
		return "", unchanged, nil, fmt.Errorf("finding the kind of %T: %w", obj, err)
	}
	if obj.GetNamespace() == "" {
		obj.SetNamespace(owner.GetNamespace())
	}
	key := objectKey(gvk, obj.GetName())

	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	for k, v := range CommonLabels(owner, strings.ToLower(gvk.Kind)) {
		if k == LabelComponent && labels[k] != "" {
			continue // the builder named the component
		}
		labels[k] = v
	}
	obj.SetLabels(labels)
	if obj.GetAnnotations()[AnnotationRetain] != "true" {
		if err := controllerutil.SetControllerReference(owner, obj, e.Scheme); err != nil {
			return key, unchanged, nil, fmt.Errorf("setting owner of %s: %w", key, err)
		}
	}

	want, err := toComparable(obj)
	if err != nil {
		return key, unchanged, nil, err
	}
	hash, err := hashOf(want)
	if err != nil {
		return key, unchanged, nil, err
	}
	md, _ := want["metadata"].(map[string]any)
	mdAnnotations, _ := md["annotations"].(map[string]any)
	if mdAnnotations == nil {
		mdAnnotations = map[string]any{}
		md["annotations"] = mdAnnotations
	}
	mdAnnotations[AnnotationDesiredHash] = hash

	live, err := e.Scheme.New(gvk)
	if err != nil {
		return key, unchanged, nil, fmt.Errorf("creating an empty %s: %w", gvk.Kind, err)
	}
	liveObj := live.(client.Object)
	exists, diff := true, ""
	if err := e.Client.Get(ctx, client.ObjectKeyFromObject(obj), liveObj); err != nil {
		if !apierrors.IsNotFound(err) {
			return key, unchanged, nil, fmt.Errorf("reading %s: %w", key, err)
		}
		exists = false
	}
	if exists {
		if ref := metav1.GetControllerOf(liveObj); ref != nil && ref.UID != owner.GetUID() {
			return key, unchanged, nil, fmt.Errorf("%s exists and is controlled by %s %s, not by this %s",
				key, ref.Kind, ref.Name, owner.GetObjectKind().GroupVersionKind().Kind)
		}
		if obj.GetAnnotations()[AnnotationCreateOnly] == "true" {
			return key, unchanged, liveObj, nil
		}
		if liveObj.GetDeletionTimestamp() != nil {
			// It is going away; the delete event brings us back to create it anew.
			log.V(1).Info("Waiting for owned object to be deleted", "object", key)
			return key, unchanged, liveObj, nil
		}
		have, err := toComparable(liveObj)
		if err != nil {
			return key, unchanged, nil, err
		}
		diff = difference(have, want, "")
		if diff == "" {
			return key, unchanged, liveObj, nil
		}
	}

	if exists {
		log.Info("Updating owned object", "object", key, "firstDifference", diff)
	} else {
		log.Info("Creating owned object", "object", key)
	}
	u := &unstructured.Unstructured{Object: want}
	u.SetGroupVersionKind(gvk)
	err = e.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldOwner), client.ForceOwnership)
	if err != nil && exists && apierrors.IsInvalid(err) {
		// Server-side apply merges lists keyed by a field (a Service's ports by
		// port number). When someone changed such a key by hand, apply adds our
		// item next to theirs and the result is invalid. Replace the object
		// with ours laid over the live one instead: our lists win whole.
		log.Info("Replacing owned object after apply was refused", "object", key, "error", err.Error())
		u, err = e.replace(ctx, liveObj, want, gvk)
	}
	if err != nil {
		verb := "updating"
		if !exists {
			verb = "creating"
		}
		return key, unchanged, nil, fmt.Errorf("%s %s: %w", verb, key, err)
	}
	written := e.typed(gvk, u)
	if exists {
		e.event(owner, obj, "Updated", "Update", "Updated %s", key)
		return key, updated, written, nil
	}
	e.event(owner, obj, "Created", "Create", "Created %s", key)
	return key, created, written, nil
}

// typed converts the API server's answer into its Go type; nil when it
// cannot, which only costs the caller a fresher view.
func (e *Engine) typed(gvk schema.GroupVersionKind, u *unstructured.Unstructured) client.Object {
	obj, err := e.Scheme.New(gvk)
	if err != nil {
		return nil
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
		return nil
	}
	co, _ := obj.(client.Object)
	return co
}

// replace updates live to hold want: maps are merged (so fields the API
// server or others set stay), everything else is taken from want.
func (e *Engine) replace(ctx context.Context, live client.Object, want map[string]any, gvk schema.GroupVersionKind) (*unstructured.Unstructured, error) {
	base, err := runtime.DefaultUnstructuredConverter.ToUnstructured(live)
	if err != nil {
		return nil, err
	}
	delete(base, "status")
	u := &unstructured.Unstructured{Object: overlay(base, want).(map[string]any)}
	u.SetGroupVersionKind(gvk)
	return u, e.Client.Update(ctx, u, client.FieldOwner(FieldOwner))
}

// DeleteOwned deletes the objects of the given types in owner's namespace
// that match selector, are controlled by owner, are not already going, and
// that obsolete says are no longer wanted (it gets each object and its
// "Kind/name" key). Apply prunes with it; a controller that keeps a
// history (a KubernetesCluster's operations) trims it with it. It returns
// the keys of the objects it deleted.
func (e *Engine) DeleteOwned(ctx context.Context, owner client.Object, types []client.Object, selector client.MatchingLabels,
	obsolete func(obj client.Object, key string) bool) ([]string, error) {
	log := logf.FromContext(ctx)
	var deleted []string
	var errs []error
	for _, t := range types {
		gvk, err := apiutil.GVKForObject(t, e.Scheme)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		l, err := e.Scheme.New(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err != nil {
			errs = append(errs, fmt.Errorf("creating an empty %sList: %w", gvk.Kind, err))
			continue
		}
		list := l.(client.ObjectList)
		if err := e.Client.List(ctx, list, client.InNamespace(owner.GetNamespace()), selector); err != nil {
			errs = append(errs, fmt.Errorf("listing %s to prune: %w", gvk.Kind, err))
			continue
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			errs = append(errs, fmt.Errorf("reading %sList: %w", gvk.Kind, err))
			continue
		}
		for _, item := range items {
			obj, ok := item.(client.Object)
			if !ok || !metav1.IsControlledBy(obj, owner) || obj.GetDeletionTimestamp() != nil {
				continue
			}
			key := objectKey(gvk, obj.GetName())
			if !obsolete(obj, key) {
				continue
			}
			log.Info("Deleting obsolete owned object", "object", key)
			if err := e.Client.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
				errs = append(errs, fmt.Errorf("deleting obsolete %s: %w", key, err))
				continue
			}
			e.event(owner, obj, "Deleted", "Delete", "Deleted obsolete %s", key)
			deleted = append(deleted, key)
		}
	}
	sort.Strings(deleted)
	return deleted, kerrors.NewAggregate(errs)
}

func (e *Engine) event(owner, related runtime.Object, reason, action, note string, args ...any) {
	if e.Recorder != nil {
		e.Recorder.Eventf(owner, related, corev1.EventTypeNormal, reason, action, note, args...)
	}
}

// Event records a Normal event on owner: a reason in UpperCamelCase, the
// action taken ("Stop", "Delete") and what happened.
func (e *Engine) Event(owner runtime.Object, reason, action, note string, args ...any) {
	e.event(owner, nil, reason, action, note, args...)
}

// Invalid reports that owner's spec breaks a rule (the error of
// admit.Prepare): a log line and a Warning event. The reconciler then
// creates nothing and waits for a change; its status says why.
func (e *Engine) Invalid(ctx context.Context, owner client.Object, err error) {
	logf.FromContext(ctx).Info("Spec is invalid; waiting for a change", "error", err.Error())
	e.Warn(owner, conditions.ReasonInvalidSpec, "Validate", "%s", err.Error())
}

// Warn records a Warning event on owner: a reason in UpperCamelCase, the
// action that failed ("Validate", "Apply") and what went wrong.
func (e *Engine) Warn(owner runtime.Object, reason, action, note string, args ...any) {
	if e.Recorder != nil {
		e.Recorder.Eventf(owner, nil, corev1.EventTypeWarning, reason, action, note, args...)
	}
}

func objectKey(gvk schema.GroupVersionKind, name string) string {
	return gvk.Kind + "/" + name
}
