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

// Package admit is the thin admission plumbing shared by every kind's
// webhook: it registers a kind's defaulter and validator on the manager's
// webhook server, and turns field errors into admission responses.
package admit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/storage/names"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kubeforge/kubeforge/internal/proof"
	"github.com/kubeforge/kubeforge/internal/validation"
)

// Kind is one kind's admission rules: pure functions of the object,
// served by its webhooks and run again by its reconciler (Prepare).
type Kind[T client.Object] struct {
	// GVK names the kind; the webhook paths are derived from it.
	GVK schema.GroupVersionKind
	// Default fills in defaults that do not depend on other fields.
	Default func(T)
	// ValidateCreate returns every problem with a new object.
	ValidateCreate func(T) field.ErrorList
	// ValidateUpdate returns every problem with a change (including the
	// ValidateCreate problems of the new object).
	ValidateUpdate func(oldObj, newObj T) field.ErrorList
	// Harmless, when set, clears in a copy of the spec the fields whose
	// change cannot make the operator use anything new (replicas, started,
	// paused): an update that changes nothing else is not asked about the
	// object's references again. Any other change is, every reference.
	Harmless func(T)
	// Implicit, when set, lists what the operator makes for the object and
	// its pods then use (a Workspace's home claim and password Secret); on
	// an update by anyone but the recorded owner, each is checked like a
	// reference the spec names (access.go).
	Implicit func(T) []validation.Reference
	// ImplicitCEL is Implicit for the references policy: by the policy's
	// variable of the kind of reference (secrets, claims), a CEL list of
	// the names, computed from object (not defaulted); a test holds it to
	// Implicit.
	ImplicitCEL map[string]string
	// Commands are annotations that make the operator act (rotate
	// generated Secrets, retry an operation): setting or changing one is
	// checked like a change of the spec, not admitted as metadata.
	Commands []string
	// Consumed are the Commands the operator takes away once it acted on
	// them (a Platform's rotate annotations): taking one away asks for
	// nothing, and keeps the object's admission stamp.
	Consumed []string
	// Transition, when set, holds rules about what a request asks for that
	// only admission applies, not the reconciler: a new object, or a change
	// (old is nil on a create). A rule that arrives with an operator
	// upgrade (e.g. the installer's version range) then refuses new
	// requests without making objects stored before it invalid.
	Transition func(oldObj, newObj T) field.ErrorList
	// DefaultNew, when set, writes the defaults that only admission
	// writes, into what a request adds — a new object (old is nil), a new
	// component — and keeps what the stored object had where the request
	// drops it; never into what is stored. A default that arrives with an
	// operator upgrade (a component's podSecurity) then changes nothing
	// that already runs, and the reconciler (Prepare) does not apply it.
	DefaultNew func(oldObj, newObj T)
}

// With returns the kind with rules added to its create and update
// validation: the operator administrator's policy (an installer image
// allow-list), which the webhook and the reconciler then both apply.
func (k Kind[T]) With(rules func(T) field.ErrorList) Kind[T] {
	create, update := k.ValidateCreate, k.ValidateUpdate
	k.ValidateCreate = func(obj T) field.ErrorList { return append(create(obj), rules(obj)...) }
	k.ValidateUpdate = func(oldObj, newObj T) field.ErrorList { return append(update(oldObj, newObj), rules(newObj)...) }
	return k
}

// Prepare is what a reconciler does first: it returns a defaulted copy of
// obj, for the builders and the status code, and, when that copy breaks a
// rule, the same Invalid error the validating webhook would have answered.
// So an object stored without the webhooks (not installed, or rules that
// changed since) gets a clear condition instead of broken children. And
// when obj makes the operator use anything the access checks guard
// (NeedsApproval) but carries no admission stamp that verifies with keys,
// it returns a *NotAdmittedError: no admission check approved what it
// names for the requester, so nothing may be made for it. keys is the
// operator's keyring; nil (a unit test of a builder) requires no stamp.
func Prepare[T client.Object](k Kind[T], keys *proof.Keyring, obj T) (T, error) {
	defaulted := obj.DeepCopyObject().(T)
	k.Default(defaulted)
	if err := Invalid(k.GVK.GroupKind(), obj, k.ValidateCreate(defaulted)); err != nil {
		return defaulted, err
	}
	if keys != nil {
		if need, what := k.NeedsApproval(defaulted); need && !k.Stamped(keys, obj) {
			return defaulted, k.notAdmitted(obj, what)
		}
	}
	return defaulted, nil
}

// MutatePath is where the kind's mutating webhook is served: the path
// controller-runtime's builder and kubebuilder's markers use,
// /mutate-<group with dashes>-<version>-<lower-case kind>.
func MutatePath(gvk schema.GroupVersionKind) string { return "/mutate-" + pathSuffix(gvk) }

// ValidatePath is where the kind's validating webhook is served.
func ValidatePath(gvk schema.GroupVersionKind) string { return "/validate-" + pathSuffix(gvk) }

func pathSuffix(gvk schema.GroupVersionKind) string {
	return strings.ReplaceAll(gvk.Group, ".", "-") + "-" + gvk.Version + "-" + strings.ToLower(gvk.Kind)
}

// Options are what the webhooks need beyond each kind's rules.
type Options struct {
	// Proof recognises the objects kubeforge made (a retained home that a
	// spec names as a claim).
	Proof *proof.Keyring
	// Policy is what the administrator allows Ingresses and Workspaces.
	Policy validation.Policy
	// InstallerImages are the installer images KubernetesClusters may run;
	// nil is validation.DefaultInstallerImages.
	InstallerImages validation.ImagePolicy
	// Reader reads past the cache what a spec names (a claim, to see
	// whose it is): the manager's API reader, scoped as its client is
	// (engine.Scope); nil is mgr.GetAPIReader().
	Reader client.Reader
	// Reviews creates the access checks' SubjectAccessReviews; nil is
	// mgr.GetClient().
	Reviews client.Client
	// ReviewCacheTTL keeps the allowed answers of the access checks'
	// SubjectAccessReviews this long (DefaultReviewCacheTTL says why);
	// 0 asks the API server every time.
	ReviewCacheTTL time.Duration
}

// Register serves the kind's mutating and validating webhooks on the
// manager's webhook server, at MutatePath and ValidatePath.
func Register[T client.Object](mgr ctrl.Manager, k Kind[T], opts Options) error {
	if opts.Reader == nil {
		opts.Reader = mgr.GetAPIReader()
	}
	if opts.Reviews == nil {
		opts.Reviews = mgr.GetClient()
	}
	mutate, validate := webhooks(mgr.GetScheme(), k, opts)
	srv := mgr.GetWebhookServer()
	srv.Register(MutatePath(k.GVK), mutate)
	srv.Register(ValidatePath(k.GVK), validate)
	return nil
}

// webhooks are the kind's mutating and validating webhooks; opts has its
// Reader and Reviews.
func webhooks[T client.Object](s *runtime.Scheme, k Kind[T], opts Options) (mutate, validate http.Handler) {
	gk := k.GVK.GroupKind()
	v := validator[T]{kind: k, gk: gk, reviews: opts.Reviews, cache: newReviewCache(opts.ReviewCacheTTL), reader: opts.Reader, proof: opts.Proof}
	m := newMutating[T](s, k.GVK, defaulter[T]{k: k, keys: opts.Proof, checks: v})
	m.Handler = guardQuantities(gk, m.Handler)
	val := admission.WithValidator[T](s, v)
	val.Handler, val.LogConstructor = guardQuantities(gk, val.Handler), lazyRequestLog
	return review{m}, review{val}
}

type defaulter[T client.Object] struct {
	k    Kind[T]
	keys *proof.Keyring
	// checks asks the access checks before a stamp is signed.
	checks validator[T]
}

func (d defaulter[T]) Default(ctx context.Context, obj T) error {
	d.k.Default(obj)
	req, err := admission.RequestFromContext(ctx)
	if err != nil {
		return nil
	}
	var old *T
	if req.Operation == admissionv1.Update {
		o := reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T)
		if err := decodeObject(req.OldObject.Raw, o); err != nil {
			return fmt.Errorf("reading the stored object: %w", err)
		}
		old = &o
	}
	if d.k.DefaultNew != nil {
		var was T
		if old != nil {
			was = *old
		}
		d.k.DefaultNew(was, obj)
	}
	var stored metav1.Object
	if old != nil {
		stored = *old
	}
	recordCreator(req, stored, obj)
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return nil
	}
	if req.Operation == admissionv1.Create && obj.GetName() == "" && obj.GetGenerateName() != "" {
		// The API server would make the name after this webhook, and the
		// rules and the stamp cover the name: make it here, as the API
		// server does.
		obj.SetName(names.SimpleNameGenerator.GenerateName(obj.GetGenerateName()))
	}
	if d.keys == nil {
		// Nothing to sign with: no stamp, and none a client wrote.
		dropStamp(obj)
		return nil
	}
	// Whether the update leaves the spec as it was, asked once: the rules
	// and the harmless check below both need it.
	metadataOnly := old != nil && d.k.MetadataOnly(*old, obj)
	if errs := d.k.rulesFor(obj, old, metadataOnly); len(errs) > 0 {
		// Refused by the validating webhook, which is called for what has
		// no stamp (see below).
		dropStamp(obj)
		return nil
	}
	harmless := metadataOnly
	if old != nil && d.k.Harmless != nil {
		harmless = d.k.onlyHarmless(*old, obj)
	}
	if harmless {
		switch {
		case !d.k.commandChanged(*old, obj):
			// Nothing the checks guard changed: keep a stamp that verifies.
			d.k.keepStamp(d.keys, obj, *old)
			return nil
		case d.k.onlyConsumed(*old, obj):
			// A command the operator acted on, taken away: the same
			// approval, for the object without it.
			return d.k.carryStamp(d.keys, obj, *old)
		}
	}
	// A create, a change of the spec or a command: sign only what the
	// kind's rules (above) and the access checks approve, asked here, so
	// that a stamp never depends on the validating webhook having been
	// called. What they refuse gets no stamp: the validating webhook, called for
	// what is not stamped (its matchConditions), refuses it with its field
	// errors after the CRD's schema has had its say, as it always has; the
	// references policy refuses what it names. No answer from the API
	// server is not a refusal: the request fails, to be tried again.
	var was T
	var who metav1.Object = obj
	over := ""
	if old != nil {
		was, who, over = *old, *old, (*old).GetResourceVersion()
	}
	if errs := d.checks.access(ctx, obj, false, was); len(errs) > 0 {
		for _, e := range errs {
			if e.Type == field.ErrorTypeInternal {
				return Invalid(d.k.GVK.GroupKind(), obj, field.ErrorList{e})
			}
		}
		dropStamp(obj)
		return nil
	}
	return d.k.sign(d.keys, obj, who, over, req.UserInfo.Username, time.Now())
}

// recordCreator writes who created the object and whom it belongs to
// (proof.CreatedByAnnotation, proof.OwnerAnnotation) from what the API
// server authenticated — through kubeforge's REST and gRPC APIs, the
// caller they act as — and keeps both as they were on every update, so
// that no client sets or changes them. An owner the client names on
// create is kept for the validating webhook to check (the requester must
// be allowed to impersonate that user); the ValidatingAdmissionPolicy
// kubeforge-owner-record holds the same rules when the webhooks are not
// called. old is the stored object of an update, as the request gives it.
func recordCreator(req admission.Request, old metav1.Object, obj client.Object) {
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	switch {
	case req.Operation == admissionv1.Create:
		annotations[proof.CreatedByAnnotation] = req.UserInfo.Username
		if annotations[proof.OwnerAnnotation] == "" {
			annotations[proof.OwnerAnnotation] = req.UserInfo.Username
		}
	case req.Operation == admissionv1.Update:
		// Without a stored object (never, today: Default refuses an update
		// whose stored object does not decode), no record is kept.
		var stored map[string]string
		if old != nil {
			stored = old.GetAnnotations()
		}
		for _, key := range []string{proof.CreatedByAnnotation, proof.OwnerAnnotation} {
			if was, ok := stored[key]; ok {
				annotations[key] = was
			} else {
				delete(annotations, key)
			}
		}
	default:
		return
	}
	obj.SetAnnotations(annotations)
}

type validator[T client.Object] struct {
	kind Kind[T]
	gk   schema.GroupKind
	// reviews creates SubjectAccessReviews; cache keeps their allowed
	// answers a moment.
	reviews client.Client
	cache   *reviewCache
	// reader reads objects a spec names (a claim, to see whose it is).
	reader client.Reader
	proof  *proof.Keyring
}

func (v validator[T]) ValidateCreate(ctx context.Context, obj T) (admission.Warnings, error) {
	errs := v.kind.rules(obj, nil)
	if len(errs) == 0 && !v.approvedByMutating(ctx, obj) {
		var none T
		errs = v.access(ctx, obj, false, none)
	}
	return nil, Invalid(v.gk, obj, errs)
}

// approvedByMutating reports whether the mutating webhook asked this
// request's access checks itself: obj carries a stamp it made for the
// requester moments ago, for obj as it is.
func (v validator[T]) approvedByMutating(ctx context.Context, obj T) bool {
	req, err := admission.RequestFromContext(ctx)
	return err == nil && v.proof != nil && v.kind.freshlyApproved(v.proof, obj, req.UserInfo.Username, time.Now())
}

func (v validator[T]) ValidateUpdate(ctx context.Context, oldObj, newObj T) (admission.Warnings, error) {
	if v.kind.MetadataOnly(oldObj, newObj) {
		// Labels, annotations, finalizers: always admitted, so that an object
		// stored before today's rules can still be labelled, or let go of —
		// but a command annotation asks the operator to act for the
		// requester, like a change of the spec (taking away one the
		// operator consumes asks for nothing).
		if !v.kind.commandChanged(oldObj, newObj) || v.kind.onlyConsumed(oldObj, newObj) || v.approvedByMutating(ctx, newObj) {
			return nil, nil
		}
		return nil, Invalid(v.gk, newObj, v.access(ctx, newObj, false, oldObj))
	}
	errs := v.kind.rules(newObj, &oldObj)
	if len(errs) == 0 {
		harmless := v.kind.onlyHarmless(oldObj, newObj) && !v.kind.commandChanged(oldObj, newObj)
		if harmless || !v.approvedByMutating(ctx, newObj) {
			errs = v.access(ctx, newObj, harmless, oldObj)
		}
	}
	return nil, Invalid(v.gk, newObj, errs)
}

// rules are the kind's validation rules for obj: created (old nil), or
// updated from *old — none for an update of metadata only, which is always
// admitted (ValidateUpdate says why).
func (k Kind[T]) rules(obj T, old *T) field.ErrorList {
	return k.rulesFor(obj, old, old != nil && k.MetadataOnly(*old, obj))
}

// rulesFor is rules, told whether the update is of metadata only.
func (k Kind[T]) rulesFor(obj T, old *T, metadataOnly bool) field.ErrorList {
	var before T
	var errs field.ErrorList
	switch {
	case old == nil:
		errs = k.ValidateCreate(obj)
	case metadataOnly:
		return nil
	default:
		before = *old
		errs = k.ValidateUpdate(before, obj)
	}
	if k.Transition != nil {
		errs = append(errs, k.Transition(before, obj)...)
	}
	return errs
}

// MetadataOnly reports whether an update leaves the spec as it was (after
// the defaults the mutating webhook fills in), changing only metadata.
func (k Kind[T]) MetadataOnly(oldObj, newObj T) bool {
	return k.sameSpec(oldObj, newObj, nil)
}

// commandChanged reports whether an update sets, changes or removes one
// of the kind's command annotations: a removal can be a command too (a
// KubernetesCluster retries when its retry annotation differs from the
// last it acted on, empty included), and the references policy sees it
// the same way.
func (k Kind[T]) commandChanged(oldObj, newObj T) bool {
	for _, a := range k.Commands {
		v, ok := newObj.GetAnnotations()[a]
		was, had := oldObj.GetAnnotations()[a]
		if ok != had || v != was {
			return true
		}
	}
	return false
}

// onlyHarmless reports whether an update changes nothing in the spec but
// the fields Harmless clears.
func (k Kind[T]) onlyHarmless(oldObj, newObj T) bool {
	if k.Harmless == nil {
		return k.MetadataOnly(oldObj, newObj)
	}
	return k.sameSpec(oldObj, newObj, k.Harmless)
}

// sameSpec compares the specs as they serialise, the stored one with the
// kind's defaults, after clear (when given) on copies of both: the same
// JSON, the same spec (encoding/json writes map keys sorted, and leaves
// out what it would leave out of the object). Only the specs are
// serialised: an object's managed fields, on every update, cost more than
// its spec.
func (k Kind[T]) sameSpec(oldObj, newObj T, clear func(T)) bool {
	was, is := oldObj.DeepCopyObject().(T), newObj
	k.Default(was)
	if clear != nil {
		is = newObj.DeepCopyObject().(T)
		clear(was)
		clear(is)
	}
	a, errA := specJSON(was)
	b, errB := specJSON(is)
	return errA == nil && errB == nil && bytes.Equal(a, b)
}

// specJSON is obj's spec as JSON.
func specJSON(obj client.Object) ([]byte, error) {
	spec := specField(obj)
	if !spec.IsValid() || spec.Kind() != reflect.Struct || !spec.CanAddr() {
		return nil, fmt.Errorf("%T has no spec", obj)
	}
	return json.Marshal(spec.Addr().Interface())
}

// unstructuredSpec is obj's spec as unstructured content.
func unstructuredSpec(obj client.Object) (map[string]any, error) {
	spec := specField(obj)
	if !spec.IsValid() || spec.Kind() != reflect.Struct || !spec.CanAddr() {
		return nil, fmt.Errorf("%T has no spec", obj)
	}
	return runtime.DefaultUnstructuredConverter.ToUnstructured(spec.Addr().Interface())
}

func (v validator[T]) ValidateDelete(context.Context, T) (admission.Warnings, error) {
	return nil, nil
}

// Invalid turns field errors into the API's Invalid (422) error, or nil.
func Invalid(gk schema.GroupKind, obj runtime.Object, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	name := ""
	if o, ok := obj.(interface{ GetName() string }); ok {
		name = o.GetName()
	}
	return apierrors.NewInvalid(gk, name, errs)
}

// guardQuantities answers with field errors for resource quantities that
// do not parse, before the typed decoding inside h fails on them with a
// message that names no field.
func guardQuantities(gk schema.GroupKind, h admission.Handler) admission.Handler {
	return admission.HandlerFunc(func(ctx context.Context, req admission.Request) admission.Response {
		// Every request, and before h: the typed decoding takes a quantity
		// with spaces around it (" 500m"), which this walk and the CRD's
		// schema refuse.
		if req.Operation == admissionv1.Create || req.Operation == admissionv1.Update {
			if errs := validation.RawQuantityErrors(req.Object.Raw); len(errs) > 0 {
				status := apierrors.NewInvalid(gk, req.Name, errs).ErrStatus
				return admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{
					Allowed: false,
					Result:  &status,
				}}
			}
		}
		resp := h.Handle(ctx, req)
		if !resp.Allowed && resp.Result != nil && resp.Result.Code == 0 {
			resp.Result.Code = http.StatusForbidden
		}
		return resp
	})
}
