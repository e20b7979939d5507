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
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	jsonpatchapply "github.com/evanphx/json-patch/v5"
	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/proof"
	"github.com/kubeforge/kubeforge/internal/scheme"
)

// The mutating webhook's own handler must answer as controller-runtime's
// defaulting handler would: the same object once the API server applies
// its patch (to an object in the type's own form, as these are), for
// creates and updates that stamp, default the spec, make a name, label a
// Workspace's user, replace a stamp a client wrote or take one away.
func TestTheMutatingHandlerPatchesAsControllerRuntimesWould(t *testing.T) {
	s := scheme.New()
	keys, err := proof.NewKeyring(time.Now(), bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Proof: keys, Reviews: allowingReviews(s), Reader: fake.NewClientBuilder().WithScheme(s).Build()}
	user := "tenant-1"

	stored := usersPodSet(1)
	if err := PodSet.Sign(keys, stored, user, time.Now()); err != nil {
		t.Fatal(err)
	}
	changed := usersPodSet(2)
	changed.Annotations[StampAnnotation] = stored.Annotations[StampAnnotation]
	forged := usersPodSet(3)
	forged.Annotations[StampAnnotation] = "forged"
	unnamed := usersPodSet(1)
	unnamed.Name, unnamed.GenerateName, unnamed.UID, unnamed.ResourceVersion, unnamed.ManagedFields, unnamed.Annotations = "", "u-", "", "", nil, nil
	relabelled := stored.DeepCopy()
	relabelled.Labels = map[string]string{"team": "a"}
	// The replicas alone: harmless, the stamp kept as it is.
	scaled := stored.DeepCopy()
	scaled.Spec.Replicas = new(int32(3))
	// A stamp that no longer verifies, on an object whose other
	// annotations are the records: taken away.
	stale := stored.DeepCopy()
	stale.Annotations[StampAnnotation] = "stale"
	stale.Spec.Template.Spec.Containers[0].Image = "registry.example.com/app:2"
	denied := stale.DeepCopy()
	denied.Spec.Template.Spec.Containers[0].Image = "" // breaks a rule: no stamp

	unscaled := usersPodSet(1)
	unscaled.UID, unscaled.ResourceVersion, unscaled.ManagedFields, unscaled.Annotations, unscaled.Spec.Replicas = "", "", nil, nil, nil
	// A creator record the stored object lacks, written by a client:
	// taken away, and with it every annotation.
	plain := usersPodSet(1)
	plain.Annotations = nil
	recorded := plain.DeepCopy()
	recorded.Annotations = map[string]string{proof.CreatedByAnnotation: "mallory"}
	ws := &idev1alpha1.Workspace{TypeMeta: metav1.TypeMeta{APIVersion: "ide.kubeforge.io/v1alpha1", Kind: "Workspace"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "users", Name: "ide"},
		Spec:       idev1alpha1.WorkspaceSpec{User: "tenant-1", Started: new(false), Storage: idev1alpha1.WorkspaceStorage{Size: new(resource.MustParse("1Gi"))}}}

	cases := []struct {
		name string
		op   admissionv1.Operation
		old  client.Object
		obj  client.Object
		new  func() http.Handler
		cr   func() http.Handler
		// whole: controller-runtime's whole-object patch answers (a
		// change beyond the annotations, the name and the spec).
		whole bool
	}{
		{"a PodSet's spec changed", admissionv1.Update, stored, changed, mutatePodSet(s, opts, false), mutatePodSet(s, opts, true), false},
		{"a PodSet created with a stamp of its own", admissionv1.Create, nil, forged, mutatePodSet(s, opts, false), mutatePodSet(s, opts, true), false},
		{"a PodSet created with generateName", admissionv1.Create, nil, unnamed, mutatePodSet(s, opts, false), mutatePodSet(s, opts, true), false},
		{"a PodSet relabelled", admissionv1.Update, stored, relabelled, mutatePodSet(s, opts, false), mutatePodSet(s, opts, true), false},
		{"a PodSet scaled", admissionv1.Update, stored, scaled, mutatePodSet(s, opts, false), mutatePodSet(s, opts, true), false},
		{"a PodSet with a stale stamp changed", admissionv1.Update, stored, stale, mutatePodSet(s, opts, false), mutatePodSet(s, opts, true), false},
		{"a PodSet changed against a rule", admissionv1.Update, stored, denied, mutatePodSet(s, opts, false), mutatePodSet(s, opts, true), false},
		{"a creator record written on an update, taken away", admissionv1.Update, plain, recorded, mutatePodSet(s, opts, false), mutatePodSet(s, opts, true), true},
		{"a PodSet created without replicas, defaulted", admissionv1.Create, nil, unscaled, mutatePodSet(s, opts, false), mutatePodSet(s, opts, true), false},
		{"a Workspace created, its spec defaulted and its user labelled", admissionv1.Create, nil, ws, mutateWorkspace(s, opts, false), mutateWorkspace(s, opts, true), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := reviewBody(t, tc.op, tc.old, tc.obj, user)
			raw, err := json.Marshal(tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			before := wholeObjectPatches.Load()
			ours, theirs := answer(t, tc.new(), body), answer(t, tc.cr(), body)
			if whole := wholeObjectPatches.Load() > before; whole != tc.whole {
				t.Errorf("answered with controller-runtime's whole-object patch: %v, want %v", whole, tc.whole)
			}
			if ours.Allowed != theirs.Allowed || !reflect.DeepEqual(ours.Result, theirs.Result) && (ours.Result == nil || theirs.Result == nil || ours.Result.Message != theirs.Result.Message) {
				t.Fatalf("allowed %v (%v), controller-runtime's %v (%v)", ours.Allowed, ours.Result, theirs.Allowed, theirs.Result)
			}
			got, want := applied(t, raw, ours.Patch), applied(t, raw, theirs.Patch)
			// A stamp holds the second it was made, a generated name is
			// random: present in both, or in neither.
			for _, doc := range []map[string]any{got, want} {
				meta := doc["metadata"].(map[string]any)
				if prefix, ok := meta["generateName"].(string); ok {
					if name, _ := meta["name"].(string); len(name) > len(prefix) && name[:len(prefix)] == prefix {
						meta["name"] = prefix + "generated"
					}
				}
				if a, ok := meta["annotations"].(map[string]any); ok {
					if _, stamped := a[StampAnnotation]; stamped {
						a[StampAnnotation] = "stamped"
					}
				}
			}
			if !reflect.DeepEqual(got, want) {
				g, _ := json.MarshalIndent(got, "", " ")
				w, _ := json.MarshalIndent(want, "", " ")
				t.Errorf("patched:\n%s\ncontroller-runtime's:\n%s\n(our patch %s)", g, w, ours.Patch)
			}
		})
	}
}

func mutatePodSet(s *runtime.Scheme, opts Options, controllerRuntimes bool) func() http.Handler {
	return func() http.Handler { return mutateWith(s, PodSet, opts, controllerRuntimes) }
}

func mutateWorkspace(s *runtime.Scheme, opts Options, controllerRuntimes bool) func() http.Handler {
	return func() http.Handler { return mutateWith(s, Workspace, opts, controllerRuntimes) }
}

// mutateWith is the kind's mutating webhook, or the same defaulter served
// by controller-runtime's handler.
func mutateWith[T client.Object](s *runtime.Scheme, k Kind[T], opts Options, controllerRuntimes bool) http.Handler {
	mutate, _ := webhooks(s, k, opts)
	if !controllerRuntimes {
		return mutate
	}
	v := validator[T]{kind: k, gk: k.GVK.GroupKind(), reviews: opts.Reviews, cache: newReviewCache(opts.ReviewCacheTTL), reader: opts.Reader, proof: opts.Proof}
	wh := admission.WithDefaulter[T](s, defaulter[T]{k: k, keys: opts.Proof, checks: v})
	wh.Handler = guardQuantities(k.GVK.GroupKind(), wh.Handler)
	return wh
}

func answer(t *testing.T, h http.Handler, body []byte) admissionv1.AdmissionResponse {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/mutate", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(rec, req)
	var out admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || out.Response == nil {
		t.Fatalf("no admission review in the answer (%v): %s", err, rec.Body.String())
	}
	if out.APIVersion != "admission.k8s.io/v1" || out.Kind != "AdmissionReview" || out.Response.UID == "" {
		t.Fatalf("the answer is not a v1 AdmissionReview for the request: %s", rec.Body.String())
	}
	return *out.Response
}

// applied is raw with patch applied, as the API server applies it.
func applied(t *testing.T, raw, patch []byte) map[string]any {
	t.Helper()
	out := raw
	if len(patch) > 0 {
		p, err := jsonpatchapply.DecodePatch(patch)
		if err != nil {
			t.Fatalf("decoding the patch %s: %v", patch, err)
		}
		if out, err = p.Apply(raw); err != nil {
			t.Fatalf("applying the patch %s: %v", patch, err)
		}
	}
	var doc map[string]any
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// Where a client wrote a value in a form of its own (a quantity
// "1024Mi") in a spec the defaults do not change, controller-runtime's
// patch also rewrote it in the type's form ("1Gi"); the webhook's patch
// leaves it as sent (a spec the defaults change is patched by the same
// diff as controller-runtime's). Both decode to the same object, which is
// what the stamp and the reconcilers read.
func TestTheMutatingHandlerLeavesWhatTheClientWroteAsSent(t *testing.T) {
	s := scheme.New()
	keys, err := proof.NewKeyring(time.Now(), bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Proof: keys, Reviews: allowingReviews(s), Reader: fake.NewClientBuilder().WithScheme(s).Build()}
	raw := []byte(`{"apiVersion":"apps.kubeforge.io/v1alpha1","kind":"PodSet","metadata":{"name":"own-form","namespace":"users"},` +
		`"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"app","image":"nginx","resources":{"limits":{"memory":"1024Mi"}}}]}}}}`)
	body, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: "8f5e2c1a-0000-4000-8000-000000000002",
			Kind:     metav1.GroupVersionKind{Group: "apps.kubeforge.io", Version: "v1alpha1", Kind: "PodSet"},
			Resource: metav1.GroupVersionResource{Group: "apps.kubeforge.io", Version: "v1alpha1", Resource: "podsets"},
			Name:     "own-form", Namespace: "users", Operation: admissionv1.Create,
			UserInfo: authenticationv1.UserInfo{Username: "tenant-1"}, Object: runtime.RawExtension{Raw: raw}},
	})
	if err != nil {
		t.Fatal(err)
	}
	decoded := func(patch []byte) (*appsv1alpha1.PodSet, string) {
		doc := applied(t, raw, patch)
		out, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		ps := &appsv1alpha1.PodSet{}
		if err := json.Unmarshal(out, ps); err != nil {
			t.Fatal(err)
		}
		ps.Annotations[StampAnnotation] = "stamped"
		return ps, string(out)
	}
	ours, oursJSON := decoded(answer(t, mutateWith(s, PodSet, opts, false), body).Patch)
	theirs, theirsJSON := decoded(answer(t, mutateWith(s, PodSet, opts, true), body).Patch)
	if !equality.Semantic.DeepEqual(ours, theirs) {
		t.Errorf("decoded differently:\n%s\ncontroller-runtime's:\n%s", oursJSON, theirsJSON)
	}
	if !strings.Contains(oursJSON, `"1024Mi"`) || !strings.Contains(theirsJSON, `"1Gi"`) {
		t.Errorf("want the quantity as sent in ours and in the type's form in controller-runtime's:\n%s\n%s", oursJSON, theirsJSON)
	}
}

// countingSink is a logr.LogSink that counts the WithValues calls that
// reach it and keeps the lines written, with their values.
type countingSink struct {
	withValues *int
	lines      *[]string
	kv         []any
}

func (s countingSink) Init(logr.RuntimeInfo)  {}
func (s countingSink) Enabled(level int) bool { return true }
func (s countingSink) Info(_ int, msg string, kv ...any) {
	*s.lines = append(*s.lines, fmt.Sprint(msg, append(slices.Clone(s.kv), kv...)))
}
func (s countingSink) Error(err error, msg string, kv ...any) { s.Info(0, msg, kv...) }
func (s countingSink) WithName(string) logr.LogSink           { return s }
func (s countingSink) WithValues(kv ...any) logr.LogSink {
	*s.withValues++
	return countingSink{withValues: s.withValues, lines: s.lines, kv: append(slices.Clone(s.kv), kv...)}
}

// A webhook request's logger hands the request's values to the logger it
// wraps only when a line is written, and every line carries them, with the
// caller's file and line.
func TestTheRequestLogWritesTheRequestsValuesWithEachLineOnly(t *testing.T) {
	req := &admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{UID: "req-1", Namespace: "users", Name: "p",
		UserInfo: authenticationv1.UserInfo{Username: "tenant-1"}}}
	withValues, lines := 0, []string{}
	log := lazyRequestLog(logr.New(countingSink{withValues: &withValues, lines: &lines}), req)
	if withValues != 0 {
		t.Fatalf("the request's values reached the logger %d times before any line", withValues)
	}
	log.WithName("podset").Info("refused", "field", "spec")
	if len(lines) != 1 || !strings.Contains(lines[0], "tenant-1") || !strings.Contains(lines[0], "req-1") || !strings.Contains(lines[0], "field spec") {
		t.Fatalf("want one line with the request's user and UID and its own values, got %q", lines)
	}

	var out []string
	caller := lazyRequestLog(funcr.NewJSON(func(obj string) { out = append(out, obj) }, funcr.Options{LogCaller: funcr.All}), req)
	caller.Info("a line")
	if len(out) != 1 || !strings.Contains(out[0], `"file":"mutate_test.go"`) || !strings.Contains(out[0], `"user":"tenant-1"`) {
		t.Fatalf("want the line's caller in this file and the request's user, got %q", out)
	}
}

// A review's body is read whole whether its Content-Length is right,
// short, long or missing.
func TestReadBodyReadsTheWholeBodyWhateverItsLengthSays(t *testing.T) {
	body := bytes.Repeat([]byte("review "), 1000)
	for _, size := range []int64{-1, 0, 1, 100, int64(len(body)) - 1, int64(len(body)), int64(len(body)) + 1, 2 * int64(len(body))} {
		got, err := readBody(iotest.OneByteReader(bytes.NewReader(body)), size)
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("Content-Length %d: read %d bytes (%v), want %d", size, len(got), err, len(body))
		}
		got, err = readBody(bytes.NewReader(body), size)
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("Content-Length %d: read %d bytes (%v), want %d", size, len(got), err, len(body))
		}
	}
}
