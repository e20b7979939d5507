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
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kubeforge/kubeforge/internal/conditions"
	"github.com/kubeforge/kubeforge/internal/proof"
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

	// AnnotationRetainedFor on a retained object names whom it was kept
	// for: the owner's kind and name, and what else identifies it (a
	// Workspace's user). Only a desired object with the same value takes
	// a retained object back; anything else is a NameConflict.
	AnnotationRetainedFor = "kubeforge.io/retained-for"
)

// AnnotationCreateOnly on a desired object (set it with CreateOnly) makes
// the engine create it when it is missing and otherwise leave it alone:
// no comparison, no update. A Job, whose spec cannot change and which
// records one run, is the case.
const AnnotationCreateOnly = "kubeforge.io/create-only"

// CreateOnly marks a desired object to be created once and never updated.
// A ConfigMap or Secret is also made immutable (Immutable): what was
// created is what is used, whoever may write such objects.
func CreateOnly(obj client.Object) {
	mark(obj, AnnotationCreateOnly, "true")
	Immutable(obj)
}

// mark sets annotation k of a desired object to v.
func mark(obj client.Object, k, v string) {
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[k] = v
	obj.SetAnnotations(a)
}

// KeepOnly marks a desired create-only object whose content the caller
// does not have — it saw the object exists and left the content out, as
// for a Secret holding a password made once: the engine keeps it when it
// is there and never creates it from this (that would make it empty for
// good). An object found missing nonetheless (deleted since the caller
// looked) is left missing and the apply stops there, as for an object
// being made anew: the later stages, which may use it by name, wait; the
// next pass, which sees it missing, gives the content. The mark is never
// written.
func KeepOnly(obj client.Object) {
	CreateOnly(obj)
	a := obj.GetAnnotations()
	a[AnnotationKeepOnly] = "true"
	obj.SetAnnotations(a)
}

// AnnotationKeepOnly on a desired object is KeepOnly's mark.
const AnnotationKeepOnly = "kubeforge.io/keep-only"

func isCreateOnly(obj client.Object) bool {
	return obj.GetAnnotations()[AnnotationCreateOnly] == "true"
}

// Immutable makes a desired ConfigMap or Secret immutable: nobody, the
// tenants who may update such objects included, can change its content
// after the operator made it. CreateOnly sets it: what is made once and
// then relied on. (Not for one whose content changes while Pods mount it
// by name: the kubelet keeps an immutable object's content cached, so one
// made anew under the same name would not reach new Pods on that node.)
// Other kinds are left as they are.
func Immutable(obj client.Object) {
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		o.Immutable = ptr.To(true)
	case *corev1.Secret:
		o.Immutable = ptr.To(true)
	}
}

// immutable reports whether a live ConfigMap or Secret is immutable.
func immutable(obj client.Object) bool {
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		return ptr.Deref(o.Immutable, false)
	case *corev1.Secret:
		return ptr.Deref(o.Immutable, false)
	}
	return false
}

// immutableField is what sealing an object made before seals also sets:
// immutable, when the desired object is.
func immutableField(desired client.Object) map[string]any {
	if immutable(desired) {
		return map[string]any{"immutable": true}
	}
	return nil
}

// Retain marks a desired object to outlive its owner: see AnnotationRetain.
func Retain(obj client.Object) {
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[AnnotationRetain] = "true"
	if _, ok := a[AnnotationRetainedFor]; !ok {
		a[AnnotationRetainedFor] = ""
	}
	obj.SetAnnotations(a)
}

// Claim records on a desired object that may be retained (now or after a
// policy change) whom it belongs to: the engine writes the owner's kind
// and name into AnnotationRetainedFor, followed by identity, what else
// must match for a later owner to take it back (a Workspace's user; may
// be empty).
func Claim(obj client.Object, identity string) {
	mark(obj, AnnotationRetainedFor, identity)
}

// ConflictError says that an object with a name the owner wants exists
// and is not the owner's: the engine leaves it exactly as it is.
type ConflictError struct {
	// Key is the object's "Kind/name".
	Key string
	// Reason is the status reason: NameConflict, or
	// RetainedBeforeUpgrade for an object kept before ownership proofs.
	Reason string
	// Message says whose it is and what to do.
	Message string
}

func (e *ConflictError) Error() string { return e.Message }

// Failed says, for status, why an object could not be acted on at all:
// its spec breaks a rule (reason InvalidSpec, the error of admit.Prepare)
// or applying its objects failed (FailureReason). ok is false when neither.
func Failed(invalid, applyErr error) (reason string, err error, ok bool) {
	switch {
	case invalid != nil:
		return InvalidReason(invalid), invalid, true
	case applyErr != nil && !Waiting(applyErr):
		return FailureReason(applyErr), applyErr, true
	}
	return "", nil, false
}

// Waiting reports whether every error in err is a wait, not a failure: an
// object being made anew, or a KeepOnly object gone since its owner
// looked (what uses them waited), or a write refused because its object
// changed since it was read; the next pass goes on. Every error
// joined or aggregated into err must be one (a wait beside a failure is a
// failure). A reconciler shows it as progress and comes back shortly
// (WaitRequeue) rather than reporting an error: Waits does that for a
// whole reconciler.
func Waiting(err error) bool {
	all := func(errs []error) bool {
		for _, e := range errs {
			if !Waiting(e) {
				return false
			}
		}
		return len(errs) > 0
	}
	switch e := err.(type) {
	case nil:
		return false
	case kerrors.Aggregate:
		return all(e.Errors())
	case interface{ Unwrap() []error }: // errors.Join, fmt.Errorf with several %w
		return all(e.Unwrap())
	}
	if err == ErrMadeAnew || err == ErrChangedSinceRead {
		return true
	}
	return Waiting(errors.Unwrap(err))
}

// WaitRequeue is how soon a reconciler comes back after a wait (Waiting).
const WaitRequeue = time.Second

// WaitLimit is how long the waits of one object may follow each other
// before Waits reports them: then, and once a WaitLimit after that.
const WaitLimit = time.Minute

// Waits is r with the engine's waits taken for what they are: a reconcile
// that ends in one (Waiting) comes back after WaitRequeue, or sooner when
// it asked to, with no error — controller-runtime then neither backs off
// nor logs a "Reconciler error" for an object being made anew; the wait is
// logged at V(1). A failure beside a wait stays an error. Waits that do
// not clear — one object's, one after the other, for longer than
// WaitLimit — are returned as the error they are once a WaitLimit (logged
// as a "Reconciler error", counted in
// controller_runtime_reconcile_errors_total), and waited on as before in
// between, until a reconcile ends otherwise. Every kind's controller is
// completed with it.
func Waits(r reconcile.Reconciler) reconcile.Reconciler {
	return waits(r, WaitLimit, time.Now)
}

// waitsOf is what Waits keeps of one object's waits in a row.
type waitsOf struct{ began, reported time.Time }

func waits(r reconcile.Reconciler, limit time.Duration, now func() time.Time) reconcile.Reconciler {
	var mu sync.Mutex
	since := map[reconcile.Request]*waitsOf{}
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		res, err := r.Reconcile(ctx, req)
		mu.Lock()
		defer mu.Unlock()
		if !Waiting(err) {
			delete(since, req)
			return res, err
		}
		t := now()
		w := since[req]
		if w == nil {
			w = &waitsOf{began: t, reported: t}
			since[req] = w
		}
		if t.Sub(w.reported) > limit {
			w.reported = t
			return res, fmt.Errorf("waiting for %s: %w", t.Sub(w.began).Round(time.Second), err)
		}
		logf.FromContext(ctx).V(1).Info("Waiting for the next pass", "why", err.Error())
		if res.RequeueAfter <= 0 || res.RequeueAfter > WaitRequeue {
			res.RequeueAfter = WaitRequeue
		}
		return res, nil
	})
}

// FailureReason is the status reason for an error of Apply: NameConflict
// when an object with a wanted name is not the owner's,
// NoDefaultStorageClass when its claims would name no class in a cluster
// without a default one (NoDefaultStorageClassError), ApplyFailed
// otherwise.
func FailureReason(err error) string {
	reason := ""
	anyError(err, func(e error) bool {
		var c *ConflictError
		if errors.As(e, &c) && reason == "" {
			reason = c.Reason
		}
		return false
	})
	if reason != "" {
		return reason
	}
	if anyError(err, func(e error) bool {
		var n *NoDefaultStorageClassError
		return errors.As(e, &n)
	}) {
		return ReasonNoDefaultStorageClass
	}
	if IsConflict(err) {
		return conditions.ReasonNameConflict
	}
	return conditions.ReasonApplyFailed
}

// IsConflict reports whether err (or, for an aggregate, one of its
// errors) is a ConflictError.
func IsConflict(err error) bool {
	return anyError(err, func(e error) bool {
		var c *ConflictError
		return errors.As(e, &c)
	})
}

// anyError reports whether is holds for err or, through wrapping and
// aggregates (which errors.As does not look into), one of its errors.
func anyError(err error, is func(error) bool) bool {
	if err == nil {
		return false
	}
	if is(err) {
		return true
	}
	var agg kerrors.Aggregate
	if errors.As(err, &agg) {
		for _, e := range agg.Errors() {
			if anyError(e, is) {
				return true
			}
		}
	}
	return false
}

// Engine applies and prunes the objects that a custom resource owns.
type Engine struct {
	// Client reads through the manager's cache and writes to the API server.
	Client client.Client
	// Reader reads from the API server, past the cache: the manager's
	// cache holds only objects with kubeforge's label, so an object that
	// is not in it may still exist. Nil reads through Client.
	Reader client.Reader
	// Scheme knows every owned type.
	Scheme *runtime.Scheme
	// Recorder, if set, receives an event per apply for what it created and
	// one for what it updated (each naming the objects), and one per delete.
	Recorder events.EventRecorder
	// Proof seals what the engine creates and recognises what it made
	// (package proof). Required.
	Proof *proof.Keyring
	// Premade are the objects made before the ownership key that the
	// one-time migration may seal (LoadPremade); nil, none.
	Premade *Premade
	// Progress paces the status writes that only report progress, for
	// the kinds that report it (Pacer).
	Progress Pacer

	refused refusals
	made    made
}

// Result says what Apply did.
type Result struct {
	// Created, Updated, Unchanged and Pruned hold "Kind/name" entries.
	Created, Updated, Unchanged, Pruned []string
	// Migrated holds the "Kind/name" of objects made before ownership
	// proofs that this Apply sealed as the owner's (the one-time migration):
	// a controller rotates the credentials among them.
	Migrated []string
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
// Errors of individual objects are aggregated, each recorded as a Warning
// event on owner (ApplyFailed, or NameConflict for an object with a wanted
// name that is not owner's). Apply still tries every object after one that
// failed, so one bad object does not stop the others from converging —
// but none after one that is not owner's, which they may use by name.
func (e *Engine) Apply(ctx context.Context, owner client.Object, desired []client.Object, ownedTypes ...client.Object) (Result, error) {
	stages := make([][]client.Object, len(desired))
	for i, obj := range desired {
		stages[i] = []client.Object{obj}
	}
	return e.ApplyStages(ctx, owner, stages, ownedTypes...)
}

// ApplyStages is Apply with the desired objects in stages: the objects of
// one stage do not use each other, so they are applied at the same time,
// and a stage starts once the one before it is applied. What a stage's
// objects use by name is in an earlier stage: after an object that is not
// owner's, no later stage is applied. A kind whose first objects are
// independent (a Workspace's volume claim, NetworkPolicy and Secret, which
// its Pod then uses) reaches what its user waits for in fewer round trips.
func (e *Engine) ApplyStages(ctx context.Context, owner client.Object, stages [][]client.Object, ownedTypes ...client.Object) (Result, error) {
	res := Result{Live: map[string]client.Object{}}
	if err := e.checkOrder(stages); err != nil {
		return res, err
	}
	var errs []error
	keep := map[string]bool{}

	type applied struct {
		key      string
		outcome  outcome
		live     client.Object
		err      error
		migrated bool
	}
	// Every object is read at once before the first stage: a new owner's
	// objects are not in the cache, and reading them one stage after
	// another would put a round trip to the API server per stage before
	// what the user waits for. A read that is stale by the time its stage
	// comes is caught as before: an apply that did not create is never
	// ours, and one meant for an object gone since it was read names its
	// UID, so the API server refuses it.
	reads := e.readAll(ctx, owner, stages)
	// The seals of a stage's new objects are written while the next stage
	// is applied: what the next stage needs is that they are ours, which
	// the apply's answer already shows. All are written before returning.
	var seals sealing
	desired := map[string]client.Object{}
	conflict := ""
	for _, stage := range stages {
		if conflict != "" {
			// Objects come dependencies first: what follows an object that
			// is not ours may use it by name (a Pod its volume claim, a
			// proxy its ConfigMap), so none of it is applied.
			for _, obj := range stage {
				logf.FromContext(ctx).Info("Not applying an object that may use one that is not ours or not there yet",
					"object", obj.GetName(), "waitingFor", conflict)
			}
			continue
		}
		results := make([]applied, len(stage))
		if len(stage) == 1 {
			r := &results[0]
			r.key, r.outcome, r.live, r.err = e.applyOne(ctx, owner, stage[0], reads[stage[0]], &seals, &r.migrated)
		} else {
			var wg sync.WaitGroup
			for i, obj := range stage {
				wg.Go(func() {
					r := &results[i]
					r.key, r.outcome, r.live, r.err = e.applyOne(ctx, owner, obj, reads[obj], &seals, &r.migrated)
				})
			}
			wg.Wait()
		}
		for i, r := range results {
			if r.migrated {
				res.Migrated = append(res.Migrated, r.key)
			}
			if r.key != "" {
				keep[r.key] = true
				desired[r.key] = stage[i]
			}
			if r.err != nil {
				var noClass *NoDefaultStorageClassError
				switch {
				case IsConflict(r.err) || errors.Is(r.err, ErrMadeAnew): // it has its own warning
					conflict = r.key
				case errors.As(r.err, &noClass):
					// Not made: what follows may mount it by name, and a
					// claim of that name someone else made must not take
					// its place (a Pod waiting for its claim binds any).
					conflict = r.key
					e.warn(owner, stage[i], ReasonNoDefaultStorageClass, "Apply", "%s", r.err.Error())
				default:
					e.warn(owner, stage[i], conditions.ReasonApplyFailed, "Apply", "%s", r.err.Error())
				}
				errs = append(errs, r.err)
				continue
			}
			if r.live != nil {
				res.Live[r.key] = r.live
			}
			switch r.outcome {
			case created:
				res.Created = append(res.Created, r.key)
			case updated:
				res.Updated = append(res.Updated, r.key)
			default:
				res.Unchanged = append(res.Unchanged, r.key)
			}
		}
	}

	sealed, sealErrs := seals.wait()
	errs = append(errs, sealErrs...)
	// One event for what this apply created (once sealed: proven ours) and
	// one for what it updated, each naming every object, rather than an
	// event per object: events are writes too, and a new owner's five or
	// ten objects cost the API server five or ten more.
	e.eventFor(owner, "Created", "Create", slices.DeleteFunc(slices.Clone(res.Created), func(k string) bool { return !sealed[k] }), desired)
	e.eventFor(owner, "Updated", "Update", res.Updated, desired)

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

// goneSince reports whether read, an object the engine read, is no longer
// under its name or is going: deleted, being deleted (a Pod stopping
// gracefully; the delete event brings the owner back), or another object
// there now.
func (e *Engine) goneSince(ctx context.Context, gvk schema.GroupVersionKind, read client.Object) bool {
	now := &metav1.PartialObjectMetadata{}
	now.SetGroupVersionKind(gvk)
	err := e.reader().Get(ctx, client.ObjectKeyFromObject(read), now)
	return apierrors.IsNotFound(err) || err == nil && (now.GetUID() != read.GetUID() || now.GetDeletionTimestamp() != nil)
}

// ErrMadeAnew says an object was deleted to be made anew, or is gone or
// going since it was read: what uses it by name waits for the new one
// (Waiting).
var ErrMadeAnew = errors.New("made anew")

// ErrChangedSinceRead says a write held to what was read, so that it is
// never laid over a newer object (SyncFinalizer's; a controller's own
// optimistic-lock patch may wrap it too), was refused because the object
// changed since it was read: the next pass reads it again (Waiting).
var ErrChangedSinceRead = errors.New("changed since it was read")

// keptOnlyMissing is the answer for a KeepOnly object found missing: not
// created from what has no content, and what uses it by name (a Pod that
// reads a password from it) is not applied either — nothing may start
// against a name anyone could fill meanwhile. The next pass makes it.
func keptOnlyMissing(ctx context.Context, key string) error {
	logf.FromContext(ctx).V(1).Info("Not creating an object given without its content (KeepOnly)", "object", key)
	return fmt.Errorf("%s is gone since it was looked at: made anew on the next pass: %w", key, ErrMadeAnew)
}

type outcome int

const (
	unchanged outcome = iota
	created
	updated
)

func (e *Engine) applyOne(ctx context.Context, owner client.Object, obj client.Object, read *liveRead, seals *sealing, migrated *bool) (string, outcome, client.Object, error) {
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
	ownerGVK, err := apiutil.GVKForObject(owner, e.Scheme)
	if err != nil {
		return key, unchanged, nil, fmt.Errorf("finding the kind of the owner: %w", err)
	}
	ownerName := ownerGVK.Kind + " " + owner.GetName()
	bind, _ := binding(ownerGVK.Kind, owner, obj)
	a := obj.GetAnnotations()
	if _, ok := a[AnnotationRetainedFor]; ok {
		// Whom it is kept for, for people to read; the seal is the proof.
		a[AnnotationRetainedFor] = strings.TrimPrefix(string(bind), "retained:")
		obj.SetAnnotations(a)
	}
	if a[AnnotationRetain] != "true" {
		if err := controllerutil.SetControllerReference(owner, obj, e.Scheme); err != nil {
			return key, unchanged, nil, fmt.Errorf("setting owner of %s: %w", key, err)
		}
	}

	want, err := toComparable(obj)
	if err != nil {
		return key, unchanged, nil, err
	}
	keepOnly := false
	if md, _ := want["metadata"].(map[string]any); md != nil {
		if an, _ := md["annotations"].(map[string]any); an != nil {
			keepOnly = an[AnnotationKeepOnly] == "true"
			delete(an, AnnotationKeepOnly)
		}
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

	gk, name := gvk.GroupKind(), client.ObjectKeyFromObject(obj)
	refusal := refusalKey(gk, name)
	if read == nil {
		// Its kind was unknown to readAll.
		read = e.readLive(ctx, gvk, name, isCreateOnly(obj), e.refused.recent(refusal, time.Now()))
	}
	if read.err != nil {
		return key, unchanged, nil, fmt.Errorf("reading %s: %w", key, read.err)
	}
	if read.unproven && keepOnly {
		return key, unchanged, nil, keptOnlyMissing(ctx, key)
	}
	if read.unproven {
		// Not in the cache: create it, which fails on anything under the
		// name. Only then is the API server asked what is there.
		if err := e.claimsHaveAClass(ctx, key, obj, nil); err != nil {
			return key, unchanged, nil, err
		}
		mdAnnotations[proof.Annotation] = e.Proof.PendingMark(sealed(gk, obj), bind)
		log.Info("Creating owned object", "object", key)
		u := &unstructured.Unstructured{Object: want}
		u.SetGroupVersionKind(gvk)
		err := e.Client.Create(ctx, u, client.FieldOwner(FieldOwner))
		if err == nil {
			written := e.typed(gvk, u)
			if written == nil {
				return key, unchanged, nil, fmt.Errorf("reading the created %s", key)
			}
			e.refused.forget(refusal)
			e.made.add(written.GetUID(), gk, client.ObjectKeyFromObject(written), bind, time.Now())
			seals.start(key, e.sealNew(ctx, owner, obj, gk, written, bind, true))
			return key, created, written, nil
		}
		if !apierrors.IsAlreadyExists(err) && !apierrors.IsInvalid(err) {
			return key, unchanged, nil, fmt.Errorf("creating %s: %w", key, err)
		}
		// AlreadyExists, or what a create can meet before it looks at the
		// name (a Service's address or port held by what is already
		// there): the API server says what is there, and the apply below
		// answers as for an object read in the first place. The name is
		// read first for a while (refusals): a refused create still passes
		// admission, where a ResourceQuota counts it until its controller
		// recounts.
		log.V(1).Info("Could not create owned object", "object", key, "error", err.Error())
		e.refused.add(refusal, time.Now())
		delete(mdAnnotations, proof.Annotation)
		if read = e.readLive(ctx, gvk, name, isCreateOnly(obj), true); read.err != nil {
			return key, unchanged, nil, fmt.Errorf("reading %s: %w", key, read.err)
		}
	}
	liveObj, exists := read.obj, read.exists
	diff, remake := "", false
	standing := ours
	if exists {
		standing = e.standingOf(gk, owner, liveObj, bind)
		if standing != ours && e.Reader != nil {
			// The cache may not have seen this object's seal yet (it is
			// written right after the create): ask the API server before
			// calling it anything but ours.
			if err := e.Reader.Get(ctx, client.ObjectKeyFromObject(obj), liveObj); err != nil {
				if !apierrors.IsNotFound(err) {
					return key, unchanged, nil, fmt.Errorf("reading %s: %w", key, err)
				}
				exists = false
			}
			liveObj.GetObjectKind().SetGroupVersionKind(gvk)
			if exists {
				standing = e.standingOf(gk, owner, liveObj, bind)
			}
		}
	}
	if exists {
		switch standing {
		case ours:
		case reseal, handedBack:
			log.Info("Sealing an owned object again", "object", key)
			if err := e.seal(ctx, gk, liveObj, bind, nil); err != nil {
				return key, unchanged, nil, err
			}
		case migrate:
			// The one-time migration (docs/security.md): an object this owner
			// controls, made before the ownership key existed.
			log.Info("Sealing an object made before ownership proofs", "object", key)
			if err := e.seal(ctx, gk, liveObj, bind, immutableField(obj)); err != nil {
				return key, unchanged, nil, err
			}
			*migrated = true
		case unfinished:
			// Created and never sealed (the operator stopped in between), or a
			// copy of that mark: nobody's to keep. Deleted and made anew.
			log.Info("Deleting an object that was created and never sealed", "object", key)
			remake = true
		case retainedBeforeSeals:
			conflict := &ConflictError{Key: key, Reason: ReasonRetainedBeforeUpgrade, Message: fmt.Sprintf(
				"%s was kept by a kubeforge version without ownership proofs; it is left untouched and not handed back "+
					"automatically: someone allowed to read it hands it back to this %s (docs/security.md, \"Hand-back\")", key, ownerGVK.Kind)}
			log.Info("Leaving an object retained before ownership proofs alone", "object", key)
			e.warn(owner, liveObj, ReasonRetainedBeforeUpgrade, "Apply", "%s", conflict.Message)
			return key, unchanged, nil, conflict
		default:
			msg := fmt.Sprintf("%s exists and was not created by this %s, so kubeforge leaves it exactly as it is: "+
				"delete or rename it, or give the %s another name", key, ownerName, ownerGVK.Kind)
			if ref := metav1.GetControllerOf(liveObj); ref != nil && ref.UID != owner.GetUID() && e.Proven(gk, liveObj) {
				msg = fmt.Sprintf("%s exists and belongs to %s %s, not to this %s", key, ref.Kind, ref.Name, ownerGVK.Kind)
			}
			conflict := &ConflictError{Key: key, Reason: conditions.ReasonNameConflict, Message: msg}
			log.Info("Leaving an object that is not ours alone", "object", key)
			e.warn(owner, liveObj, conditions.ReasonNameConflict, "Apply", "%s", conflict.Message)
			return key, unchanged, nil, conflict
		}
		if isCreateOnly(obj) {
			return key, unchanged, liveObj, nil
		}
		if liveObj.GetDeletionTimestamp() != nil {
			// It is going away; the delete event brings us back to create it anew.
			log.V(1).Info("Waiting for owned object to be deleted", "object", key)
			return key, unchanged, liveObj, nil
		}
		if !remake {
			have, err := toComparable(liveObj)
			if err != nil {
				return key, unchanged, nil, err
			}
			diff = difference(have, want, "")
			if diff == "" {
				return key, unchanged, liveObj, nil
			}
		}
	}
	if remake {
		if err := e.Client.Delete(ctx, liveObj, client.Preconditions{UID: ptr.To(liveObj.GetUID())}); client.IgnoreNotFound(err) != nil {
			return key, unchanged, nil, fmt.Errorf("deleting %s to make it anew: %w", key, err)
		}
		// Gone at once unless a finalizer holds it; then the delete event
		// brings us back, and what uses it by name waits.
		if err := e.reader().Get(ctx, client.ObjectKeyFromObject(obj), liveObj); !apierrors.IsNotFound(err) {
			return key, unchanged, nil, fmt.Errorf("%s is being deleted to be made anew: %w", key, ErrMadeAnew)
		}
		e.event(owner, obj, "Deleted", "Delete", "Deleted %s to make it anew", key)
		exists = false
	}
	if !exists && keepOnly {
		return key, unchanged, nil, keptOnlyMissing(ctx, key)
	}
	if !exists {
		// Whom it is for, before the API server gives it a UID to seal.
		mdAnnotations[proof.Annotation] = e.Proof.PendingMark(sealed(gk, obj), bind)
	}

	var was client.Object
	if exists {
		was = liveObj
	}
	if err := e.claimsHaveAClass(ctx, key, obj, was); err != nil {
		return key, unchanged, nil, err
	}
	if exists {
		log.Info("Updating owned object", "object", key, "firstDifference", diff)
	} else {
		log.Info("Creating owned object", "object", key)
	}
	if exists {
		// This object and no other: server-side apply creates what is not
		// there, so an apply meant for an object deleted since it was read
		// (a cache that has not seen the delete yet) would make a new one,
		// without its pending mark and never sealed. With the UID the API
		// server refuses it instead, and the next pass creates it anew.
		md["uid"] = string(liveObj.GetUID())
	}
	u := &unstructured.Unstructured{Object: want}
	u.SetGroupVersionKind(gvk)
	err = e.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldOwner), client.ForceOwnership)
	if err != nil && exists && e.goneSince(ctx, gvk, liveObj) {
		log.V(1).Info("Owned object gone or going since it was read", "object", key, "error", err.Error())
		return key, unchanged, nil, fmt.Errorf("%s is gone since it was looked at: made anew on the next pass: %w", key, ErrMadeAnew)
	}
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
		return key, updated, written, nil
	}
	if written == nil {
		return key, unchanged, nil, fmt.Errorf("reading the created %s", key)
	}
	if !createdByUs(written) {
		// Server-side apply creates or updates: an object someone made under
		// the name between the read and this write was updated, not
		// created. Its other writer shows in its managed fields; it is not
		// sealed, so it is never ours.
		conflict := &ConflictError{Key: key, Reason: conditions.ReasonNameConflict, Message: fmt.Sprintf(
			"%s was created by someone else while this %s was creating it, so kubeforge does not take it as its own", key, ownerGVK.Kind)}
		e.warn(owner, obj, conditions.ReasonNameConflict, "Apply", "%s", conflict.Message)
		return key, unchanged, nil, conflict
	}
	seals.start(key, e.sealNew(ctx, owner, obj, gk, written, bind, false))
	return key, created, written, nil
}

// sealNew is the seal of written, which the engine just created, for
// sealing.start. posted says it was made by a create rather than by
// server-side apply: the API server then recorded its fields as the
// engine's update, and the seal makes them the engine's apply, as if it
// had been made by one, so that a field later dropped from the desired
// object is removed by the next apply and not left behind.
func (e *Engine) sealNew(ctx context.Context, owner, obj client.Object, gk schema.GroupKind, written client.Object, bind proof.Binding, posted bool) func() error {
	return func() error {
		var err error
		if posted {
			err = e.sealAsApplied(ctx, gk, written, bind)
		}
		if !posted || err != nil {
			err = e.seal(ctx, gk, written, bind, nil)
		}
		if err != nil {
			e.warn(owner, obj, conditions.ReasonApplyFailed, "Apply", "%s", err.Error())
		}
		return err
	}
}

// sealAsApplied seals live, which the engine created with a create, and
// records in the same patch the create's fields as the engine's apply.
// The managed fields are written whole, so the patch holds only if
// nobody wrote the object since they were read (an entry written since,
// a controller's status or an autoscaler's scale, would be lost): on a
// conflict they are read again, a few times, before the caller seals
// without them.
func (e *Engine) sealAsApplied(ctx context.Context, gk schema.GroupKind, live client.Object, b proof.Binding) error {
	current := live
	for range 3 {
		managed := asApplied(current.GetManagedFields())
		if managed == nil {
			return errors.New("no create of the engine's to record as its apply")
		}
		err := e.sealWith(ctx, gk, current, b, nil, managed)
		if err == nil || !apierrors.IsConflict(err) {
			return err
		}
		fresh := live.DeepCopyObject().(client.Object)
		if err := e.reader().Get(ctx, client.ObjectKeyFromObject(live), fresh); err != nil {
			return err
		}
		if fresh.GetUID() != live.GetUID() {
			return fmt.Errorf("%s %s was made anew", gk.Kind, live.GetName())
		}
		current = fresh
	}
	return errors.New("written meanwhile, three times")
}

// refusals remembers for a while the names under which the engine's
// create was refused (something else is there): they are read from the
// API server before anything is created under them again, rather than
// met with a create each reconcile.
type refusals struct {
	mu sync.Mutex
	at map[string]time.Time
}

// refusalMemory is how long a refused create is remembered.
const refusalMemory = 10 * time.Minute

func refusalKey(gk schema.GroupKind, key client.ObjectKey) string {
	return gk.String() + " " + key.String()
}

func (r *refusals) add(key string, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.at == nil {
		r.at = map[string]time.Time{}
	}
	if len(r.at) >= 1024 {
		for k, t := range r.at {
			if now.Sub(t) > refusalMemory {
				delete(r.at, k)
			}
		}
	}
	r.at[key] = now
}

func (r *refusals) recent(key string, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.at[key]
	if ok && now.Sub(t) > refusalMemory {
		delete(r.at, key)
		return false
	}
	return ok
}

func (r *refusals) forget(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.at, key)
}

// asApplied is managed with the engine's own update of the main resource
// turned into its apply; nil when there is none.
func asApplied(managed []metav1.ManagedFieldsEntry) []metav1.ManagedFieldsEntry {
	out, found := make([]metav1.ManagedFieldsEntry, 0, len(managed)), false
	for _, m := range managed {
		if m.Manager == FieldOwner && m.Operation == metav1.ManagedFieldsOperationUpdate && m.Subresource == "" {
			m.Operation, found = metav1.ManagedFieldsOperationApply, true
		}
		out = append(out, m)
	}
	if !found {
		return nil
	}
	return out
}

// liveRead is what the API server holds under a desired object's name.
type liveRead struct {
	obj    client.Object // empty when !exists
	exists bool
	// unproven: not in the cache, which holds only objects with
	// kubeforge's label, so not proven absent. applyOne then creates it
	// with a create that fails on anything under the name, and reads the
	// API server only when it does.
	unproven bool
	err      error
}

// readLive reads the object of kind gvk at key: from the cache, and from
// the API server when the cache does not have it — the cache holds only
// objects with kubeforge's label, so not in it is not absent, and an
// object someone else made under this name is never taken over.
//
// Of a create-only Secret or ConfigMap only the metadata is read (from the
// metadata cache, which holds those with kubeforge's label): whether it
// exists and is ours is all its apply looks at, so the reconciles of a
// settled owner do not read its content from the API server each time.
// Its live copy then carries only its metadata.
func (e *Engine) readLive(ctx context.Context, gvk schema.GroupVersionKind, key client.ObjectKey, createOnly, past bool) *liveRead {
	live, err := e.Scheme.New(gvk)
	if err != nil {
		return &liveRead{err: fmt.Errorf("creating an empty %s: %w", gvk.Kind, err)}
	}
	r := &liveRead{obj: live.(client.Object), exists: true}
	target := r.obj
	metaOnly := createOnly && IsContentKind(gvk.GroupKind())
	if metaOnly {
		meta := &metav1.PartialObjectMetadata{}
		meta.SetGroupVersionKind(gvk)
		target = meta
	}
	if err := e.Client.Get(ctx, key, target); err != nil {
		if !apierrors.IsNotFound(err) {
			return &liveRead{err: err}
		}
		if !past {
			r.exists, r.unproven = false, true
		} else if err := e.reader().Get(ctx, key, target); err != nil {
			if !apierrors.IsNotFound(err) {
				return &liveRead{err: err}
			}
			r.exists = false
		}
	}
	if metaOnly && r.exists {
		reflectMeta(target.(*metav1.PartialObjectMetadata), r.obj)
	}
	// A direct read (ConfigMaps and Secrets are never cached) leaves the
	// type empty; the comparison needs it as the desired object has it.
	r.obj.GetObjectKind().SetGroupVersionKind(gvk)
	return r
}

// reflectMeta gives obj the metadata meta holds.
func reflectMeta(meta *metav1.PartialObjectMetadata, obj client.Object) {
	if a, ok := obj.(metav1.ObjectMetaAccessor); ok {
		*a.GetObjectMeta().(*metav1.ObjectMeta) = *meta.ObjectMeta.DeepCopy()
	}
}

// readAll reads every desired object of stages at the same time. An object
// whose kind is unknown is left out: applyOne reports it.
func (e *Engine) readAll(ctx context.Context, owner client.Object, stages [][]client.Object) map[client.Object]*liveRead {
	reads := map[client.Object]*liveRead{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, stage := range stages {
		for _, obj := range stage {
			gvk, err := apiutil.GVKForObject(obj, e.Scheme)
			if err != nil {
				continue
			}
			ns := obj.GetNamespace()
			if ns == "" {
				ns = owner.GetNamespace()
			}
			wg.Go(func() {
				key := client.ObjectKey{Namespace: ns, Name: obj.GetName()}
				r := e.readLive(ctx, gvk, key, isCreateOnly(obj), e.refused.recent(refusalKey(gvk.GroupKind(), key), time.Now()))
				mu.Lock()
				reads[obj] = r
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	return reads
}

// sealing runs the seals of new objects in the background.
type sealing struct {
	wg     sync.WaitGroup
	mu     sync.Mutex
	errs   []error
	sealed map[string]bool
}

// start runs seal, the seal of the object key names.
func (s *sealing) start(key string, seal func() error) {
	s.wg.Go(func() {
		err := seal()
		s.mu.Lock()
		defer s.mu.Unlock()
		if err != nil {
			s.errs = append(s.errs, err)
			return
		}
		if s.sealed == nil {
			s.sealed = map[string]bool{}
		}
		s.sealed[key] = true
	})
}

// wait returns once every seal is written: the keys of those written, and
// the errors of those that failed.
func (s *sealing) wait() (map[string]bool, []error) {
	s.wg.Wait()
	return s.sealed, s.errs
}

// createdByUs reports whether obj, the answer to the engine's create, was
// written by the engine's apply alone: a freshly created object has one
// managed-fields entry, the engine's apply. Entries of another writer (or
// of an update, which a client may claim under any manager's name) mean
// the object existed before.
func createdByUs(obj client.Object) bool {
	for _, m := range obj.GetManagedFields() {
		if m.Manager != FieldOwner || m.Operation != metav1.ManagedFieldsOperationApply {
			return false
		}
	}
	return len(obj.GetManagedFields()) > 0
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
		list, err := e.listFor(gvk)
		if err != nil {
			errs = append(errs, err)
			continue
		}
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
			// Only what is proven owner's, and controlled by it: a retained
			// object (no owner reference) is never pruned.
			if !ok || !metav1.IsControlledBy(obj, owner) || !e.owns(gvk.GroupKind(), owner, obj) || obj.GetDeletionTimestamp() != nil {
				continue
			}
			key := objectKey(gvk, obj.GetName())
			if !obsolete(obj, key) {
				continue
			}
			log.Info("Deleting obsolete owned object", "object", key)
			// Only the object proven ours: the list is the cache's, and the
			// name may hold another object by now.
			uid := obj.GetUID()
			err := e.Client.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground), client.Preconditions{UID: &uid})
			if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
				continue // gone, or another object under the name since
			}
			if err != nil {
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

// listFor is an empty list of gvk's objects: the typed list, or for the
// kinds whose content kubeforge never lists (ContentKinds) their metadata.
func (e *Engine) listFor(gvk schema.GroupVersionKind) (client.ObjectList, error) {
	if IsContentKind(gvk.GroupKind()) {
		l := &metav1.PartialObjectMetadataList{}
		l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		return l, nil
	}
	l, err := e.Scheme.New(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err != nil {
		return nil, fmt.Errorf("creating an empty %sList: %w", gvk.Kind, err)
	}
	return l.(client.ObjectList), nil
}

// reader reads past the cache.
func (e *Engine) reader() client.Reader {
	if e.Reader != nil {
		return e.Reader
	}
	return e.Client
}

func (e *Engine) warn(owner, related runtime.Object, reason, action, note string, args ...any) {
	if e.Recorder != nil {
		e.Recorder.Eventf(owner, related, corev1.EventTypeWarning, reason, action, note, args...)
	}
}

func (e *Engine) event(owner, related runtime.Object, reason, action, note string, args ...any) {
	if e.Recorder != nil {
		e.Recorder.Eventf(owner, related, corev1.EventTypeNormal, reason, action, note, args...)
	}
}

// eventFor records one Normal event on owner naming the objects keys
// (e.g. "Created PersistentVolumeClaim/a-home, Secret/a-auth"), within
// the 1 kB an event's note may hold, the rest counted. It is related to
// the first of them: the events library takes an event with the same
// owner, reason and related object as one within 6 minutes (a series,
// whose count grows and whose note stays the first's), and the related
// object keeps the events of separate applies apart as the events of
// separate objects were.
func (e *Engine) eventFor(owner runtime.Object, reason, action string, keys []string, desired map[string]client.Object) {
	if len(keys) == 0 {
		return
	}
	e.event(owner, desired[keys[0]], reason, action, "%s %s", reason, listWithin(keys, maxEventNote-len(reason)-1))
}

// maxEventNote is the length of an event's note the API server accepts.
const maxEventNote = 1024

// listWithin joins keys with ", " in at most limit bytes: as many as fit,
// then how many more there are.
func listWithin(keys []string, limit int) string {
	out := ""
	for i, k := range keys {
		next := k
		if i > 0 {
			next = out + ", " + k
		}
		more := ""
		if i < len(keys)-1 {
			more = fmt.Sprintf(" and %d more", len(keys)-1-i)
		}
		if len(next)+len(more) > limit {
			if i == 0 {
				return fmt.Sprintf("%d objects", len(keys))
			}
			return out + fmt.Sprintf(" and %d more", len(keys)-i)
		}
		out = next
	}
	return out
}

// Event records a Normal event on owner: a reason in UpperCamelCase, the
// action taken ("Stop", "Delete") and what happened.
func (e *Engine) Event(owner runtime.Object, reason, action, note string, args ...any) {
	e.event(owner, nil, reason, action, note, args...)
}

// Invalid reports that owner's spec breaks a rule or was not approved by
// admission (the error of admit.Prepare): a log line and a Warning event
// with the error's reason (InvalidReason). The reconciler then creates
// nothing and waits for a change; its status says why.
func (e *Engine) Invalid(ctx context.Context, owner client.Object, err error) {
	reason := InvalidReason(err)
	logf.FromContext(ctx).Info("Not acting on the spec; waiting for a change", "reason", reason, "error", err.Error())
	e.Warn(owner, reason, "Validate", "%s", err.Error())
}

// InvalidReason is the condition reason for an error of admit.Prepare:
// the error's own (Reason() string, e.g. NotAdmitted), else InvalidSpec.
func InvalidReason(err error) string {
	var r interface{ Reason() string }
	if errors.As(err, &r) {
		return r.Reason()
	}
	return conditions.ReasonInvalidSpec
}

// Warn records a Warning event on owner: a reason in UpperCamelCase, the
// action that failed ("Validate", "Apply") and what went wrong.
func (e *Engine) Warn(owner runtime.Object, reason, action, note string, args ...any) {
	e.warn(owner, nil, reason, action, note, args...)
}

func objectKey(gvk schema.GroupVersionKind, name string) string {
	return gvk.Kind + "/" + name
}
