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

package admit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/go-logr/logr"
	"gomodules.xyz/jsonpatch/v2"
	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	sigsjson "sigs.k8s.io/json"
)

// mutating is a kind's mutating webhook: controller-runtime's defaulting
// handler (admission.WithDefaulter) with the same answers — the stored
// object decodes to the same typed object; where the client wrote a value
// in a form of its own in a spec the defaults leave alone, it stays as sent
// instead of rewritten in the type's form — at a fraction of its cost on
// the request path of every create and spec change. It decodes
// the object once, straight into its type, and answers with a patch of
// what the webhook changes — the annotations it writes (the stamp, the
// creator and owner records), the labels (a Workspace's user), a name it
// makes, the spec's defaults — read from the typed objects, where
// controller-runtime diffs the whole object as JSON, managed fields
// included. A change elsewhere (none today), or every annotation or
// label taken away, gets controller-runtime's whole-object patch.
type mutating[T client.Object] struct {
	// gvk is the kind and version T decodes; a request for another goes
	// to controller-runtime's handler, whose decoder knows versions.
	gvk       schema.GroupVersionKind
	defaulter admission.Defaulter[T]
	// fallback is controller-runtime's handler, for what patch does not cover.
	fallback admission.Handler
}

// wholeObjectPatches counts the answers left to controller-runtime's
// handler (a test reads it).
var wholeObjectPatches atomic.Int64

func newMutating[T client.Object](s *runtime.Scheme, gvk schema.GroupVersionKind, d admission.Defaulter[T]) *admission.Webhook {
	return &admission.Webhook{Handler: mutating[T]{gvk: gvk, defaulter: d, fallback: admission.WithDefaulter[T](s, d).Handler},
		LogConstructor: lazyRequestLog}
}

func (m mutating[T]) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation == admissionv1.Delete {
		// As controller-runtime's: nothing to default in a deletion.
		return admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{Allowed: true, Result: &metav1.Status{Code: http.StatusOK}}}
	}
	if len(req.Object.Raw) == 0 {
		return admission.Errored(http.StatusBadRequest, errors.New("there is no content to decode"))
	}
	if req.Kind.Group != m.gvk.Group || req.Kind.Version != m.gvk.Version || req.Kind.Kind != m.gvk.Kind {
		wholeObjectPatches.Add(1)
		return m.fallback.Handle(ctx, req)
	}
	obj := reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T)
	if err := decodeObject(req.Object.Raw, obj); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	original := obj.DeepCopyObject().(T)
	if err := m.defaulter.Default(admission.NewContextWithRequest(ctx, req), obj); err != nil {
		var apiStatus apierrors.APIStatus
		if errors.As(err, &apiStatus) {
			status := apiStatus.Status()
			return admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{Allowed: false, Result: &status}}
		}
		return admission.Denied(err.Error())
	}
	if reflect.DeepEqual(original, obj) {
		return admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{Allowed: true}}
	}
	ops, ok := patch(req.Object.Raw, original, obj)
	if !ok {
		wholeObjectPatches.Add(1)
		return m.fallback.Handle(ctx, req)
	}
	pt := admissionv1.PatchTypeJSONPatch
	return admission.Response{Patches: ops, AdmissionResponse: admissionv1.AdmissionResponse{Allowed: true, PatchType: &pt}}
}

// patch is the JSON patch that makes of raw (which decoded as original)
// what obj is, when obj differs from original only in its annotations,
// labels, name and spec; ok false otherwise. Its operations are the ones
// controller-runtime's handler sends: relative to raw, and without the
// removals that only decoding into the type would make (fields the type
// leaves out), which it drops too.
func patch[T client.Object](raw []byte, original, obj T) (ops []jsonpatch.Operation, ok bool) {
	if !onlyAnnotationsNameAndSpec(original, obj) {
		return nil, false
	}
	var top struct {
		Metadata struct {
			Name        *string           `json:"name"`
			Annotations map[string]string `json:"annotations"`
			Labels      map[string]string `json:"labels"`
		} `json:"metadata"`
		Spec json.RawMessage `json:"spec"`
	}
	if decodeJSON(raw, &top) != nil {
		return nil, false
	}
	if name := obj.GetName(); name != original.GetName() {
		op := "add"
		if top.Metadata.Name != nil {
			op = "replace"
		}
		ops = append(ops, jsonpatch.NewOperation(op, "/metadata/name", name))
	}
	for _, m := range []struct {
		key           string
		was, original map[string]string
		is            map[string]string
	}{
		{"annotations", top.Metadata.Annotations, original.GetAnnotations(), obj.GetAnnotations()},
		{"labels", top.Metadata.Labels, original.GetLabels(), obj.GetLabels()},
	} {
		more, ok := mapOps("/metadata/"+m.key, m.was, m.original, m.is)
		if !ok {
			return nil, false
		}
		ops = append(ops, more...)
	}
	if a, b := specField(original), specField(obj); a.IsValid() && b.IsValid() && reflect.DeepEqual(a.Interface(), b.Interface()) {
		// The same spec: the same JSON, nothing to compare as JSON.
		return ops, true
	}
	before, errB := specJSON(original)
	after, errA := specJSON(obj)
	if errB != nil || errA != nil {
		return nil, false
	}
	if !bytes.Equal(before, after) {
		if len(top.Spec) == 0 {
			return nil, false
		}
		// controller-runtime's diff, on the spec alone.
		changes, err := jsonpatch.CreatePatch(top.Spec, after)
		if err != nil {
			return nil, false
		}
		decoding, err := jsonpatch.CreatePatch(top.Spec, before)
		if err != nil {
			return nil, false
		}
		for _, op := range changes {
			if op.Operation == "remove" && slices.ContainsFunc(decoding, func(d jsonpatch.Operation) bool {
				return d.Operation == "remove" && d.Path == op.Path
			}) {
				continue
			}
			op.Path = "/spec" + op.Path
			ops = append(ops, op)
		}
	}
	return ops, true
}

// mapOps are the operations that make of the map at path, was in raw (nil
// when raw has none) and original once decoded, the map is; ok false when
// is is empty where original was not (how the whole object's diff says
// that depends on how raw wrote none: left to it).
func mapOps(path string, was, original, is map[string]string) (ops []jsonpatch.Operation, ok bool) {
	switch {
	case reflect.DeepEqual(original, is):
		return nil, true
	case len(is) == 0:
		return nil, false
	case was == nil:
		return []jsonpatch.Operation{jsonpatch.NewOperation("add", path, is)}, true
	}
	for _, k := range sortedKeys(is) {
		if v, had := was[k]; !had {
			ops = append(ops, jsonpatch.NewOperation("add", path+"/"+pointerEscape(k), is[k]))
		} else if v != is[k] {
			ops = append(ops, jsonpatch.NewOperation("replace", path+"/"+pointerEscape(k), is[k]))
		}
	}
	for _, k := range sortedKeys(was) {
		if _, has := is[k]; !has {
			ops = append(ops, jsonpatch.NewOperation("remove", path+"/"+pointerEscape(k), nil))
		}
	}
	return ops, true
}

// onlyAnnotationsNameAndSpec reports whether obj differs from original in
// nothing but its annotations, its labels, its name and its spec.
func onlyAnnotationsNameAndSpec[T client.Object](original, obj T) bool {
	a, b := reflect.ValueOf(original).Elem(), reflect.ValueOf(obj).Elem()
	for i := range a.NumField() {
		if !a.Type().Field(i).IsExported() {
			return false
		}
		switch a.Type().Field(i).Name {
		case "Spec":
		case "ObjectMeta":
			am, bm := a.Field(i).Interface().(metav1.ObjectMeta), b.Field(i).Interface().(metav1.ObjectMeta)
			am.Annotations, bm.Annotations, am.Labels, bm.Labels, am.Name, bm.Name = nil, nil, nil, nil, "", ""
			if !reflect.DeepEqual(am, bm) {
				return false
			}
		default:
			if !reflect.DeepEqual(a.Field(i).Interface(), b.Field(i).Interface()) {
				return false
			}
		}
	}
	return true
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// pointerEscape escapes a key for a JSON pointer (RFC 6901).
func pointerEscape(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

// review serves a webhook as controller-runtime's admission.Webhook does,
// decoding the AdmissionReview in one pass: controller-runtime's decoder
// first reads the whole review once to learn its kind, then again. A
// review of another version than admission.k8s.io/v1 (the only one the
// webhook configurations offer) goes to controller-runtime's.
type review struct{ wh *admission.Webhook }

// lazyRequestLog is the webhooks' LogConstructor: controller-runtime's
// (the request's object, namespace, name, resource, user and UID on every
// line), with the values handed to the logger only when a line is written.
// controller-runtime makes that logger for every request, and a zap
// logger encodes the values as it is made: a cost on every create and
// spec change for lines the webhooks rarely write.
func lazyRequestLog(base logr.Logger, req *admission.Request) logr.Logger {
	if sink := base.GetSink(); sink != nil {
		if cd, ok := sink.(logr.CallDepthLogSink); ok {
			// lazyValues is one more frame between the line and its caller.
			sink = cd.WithCallDepth(1)
		}
		base = logr.New(lazyValues{sink: sink})
	}
	return admission.DefaultLogConstructor(base, req)
}

// lazyValues is a logr.LogSink that keeps what WithValues gives and passes
// it to the sink it wraps with each line written.
type lazyValues struct {
	sink logr.LogSink
	kv   []any
}

func (l lazyValues) Init(logr.RuntimeInfo)  {}
func (l lazyValues) Enabled(level int) bool { return l.sink.Enabled(level) }

func (l lazyValues) Info(level int, msg string, kv ...any) {
	l.sink.WithValues(l.kv...).Info(level, msg, kv...)
}

func (l lazyValues) Error(err error, msg string, kv ...any) {
	l.sink.WithValues(l.kv...).Error(err, msg, kv...)
}

func (l lazyValues) WithValues(kv ...any) logr.LogSink {
	return lazyValues{sink: l.sink, kv: append(slices.Clip(l.kv), kv...)}
}

func (l lazyValues) WithName(name string) logr.LogSink {
	return lazyValues{sink: l.sink.WithName(name), kv: l.kv}
}

func (l lazyValues) WithCallDepth(depth int) logr.LogSink {
	if cd, ok := l.sink.(logr.CallDepthLogSink); ok {
		return lazyValues{sink: cd.WithCallDepth(depth), kv: l.kv}
	}
	return l
}

// maxReviewSize is controller-runtime's limit on a review's size.
const maxReviewSize = 7 * 1024 * 1024

func (rv review) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Body == nil || r.Body == http.NoBody || r.Header.Get("Content-Type") != "application/json" {
		rv.wh.ServeHTTP(w, r)
		return
	}
	defer r.Body.Close()
	limited := &io.LimitedReader{R: r.Body, N: maxReviewSize}
	body, err := readBody(limited, r.ContentLength)
	if err != nil || limited.N <= 0 {
		// controller-runtime's answer, from what was read.
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
		rv.wh.ServeHTTP(w, r)
		return
	}
	var req admission.Request
	in := struct {
		APIVersion string                        `json:"apiVersion"`
		Kind       string                        `json:"kind"`
		Request    *admissionv1.AdmissionRequest `json:"request"`
	}{}
	if decodeJSON(body, &in) != nil || in.APIVersion != admissionv1.SchemeGroupVersion.String() || in.Kind != "AdmissionReview" || in.Request == nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
		rv.wh.ServeHTTP(w, r)
		return
	}
	req.AdmissionRequest = *in.Request
	resp := rv.wh.Handle(r.Context(), req)
	out := admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: in.APIVersion, Kind: in.Kind}, Response: &resp.AdmissionResponse}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(out); err != nil {
		ctrl.Log.WithName("admission").Error(err, "unable to write the admission response", "uid", req.UID)
	}
}

// decodeJSON decodes raw into v, a pointer to a zero value, as the API
// server decodes objects (sigs.k8s.io/json: names matched exactly, unknown
// names left out), at a fraction of its cost: go-json-experiment's decoder
// (what becomes encoding/json/v2) reads the document in one pass where
// sigs.k8s.io/json scans it, then scans and decodes it again. Where that
// decoder refuses the document — a name given twice, invalid UTF-8 — v
// is decoded again by sigs.k8s.io/json, from zero. On what it takes the
// two agree for the types decoded here, because they hold none of what
// the two read differently: no interface{} (numbers as float64), no type
// that reads JSON only as text, no `,string` option, no named inline
// field, no byte slice or array; a JSON null gives the zero value either
// way into a zero value, and each UnmarshalJSON method is given the same
// bytes. TestTheDecodedTypesHoldNothingTheDecodersReadDifferently holds
// the types to that as fields are added, and
// TestDecodeJSONDecodesAsTheAPIServer compares the two on every kind.
func decodeJSON(raw []byte, v any, opts ...jsonv2.Options) error {
	if jsonv2.Unmarshal(raw, v, opts...) == nil {
		return nil
	}
	reflect.ValueOf(v).Elem().SetZero()
	return sigsjson.UnmarshalCaseSensitivePreserveInts(raw, v)
}

// skipManagedFields reads past the top object's metadata.managedFields
// (two levels down: in the object, in its metadata) without decoding
// them; any other, such as a Pod template's, is decoded as before.
var skipManagedFields = jsonv2.WithUnmarshalers(jsonv2.UnmarshalFromFunc(func(dec *jsontext.Decoder, _ *[]metav1.ManagedFieldsEntry) error {
	if dec.StackDepth() != 2 {
		return jsonv2.SkipFunc
	}
	return dec.SkipValue()
}))

// decodeObject is decodeJSON for an object of a request (the new one, the
// stored one), with its managed fields left out: nothing the webhooks
// decide or sign reads them, the patch is written relative to the
// request's bytes, and they are often the largest part of the object (each
// manager's fields again, as JSON). They are skipped as JSON all the same,
// so a document decodeJSON refuses is refused here too; the API server,
// which wrote them, has checked their form.
func decodeObject(raw []byte, obj client.Object) error {
	if err := decodeJSON(raw, obj, skipManagedFields); err != nil {
		return err
	}
	// The fallback decoder decodes them: left out either way.
	obj.SetManagedFields(nil)
	return nil
}

// readBody reads a request's body whole into one buffer of the size its
// Content-Length gives, where io.ReadAll grows one step by step.
func readBody(r io.Reader, size int64) ([]byte, error) {
	if size <= 0 || size > maxReviewSize {
		return io.ReadAll(r)
	}
	// One byte more than announced, so that reading to the end fits.
	b := make([]byte, 0, size+1)
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) {
			// More than announced: grow as io.ReadAll does.
			b = append(b, 0)[:len(b)]
		}
	}
}
