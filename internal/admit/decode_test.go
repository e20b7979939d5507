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
	"reflect"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/randfill"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
	networkingv1alpha1 "github.com/kubeforge/kubeforge/api/networking/v1alpha1"
)

// filler fills every field of an object with random values, those with
// JSON methods of their own with values they write and read back.
func filler(seed int64) *randfill.Filler {
	return randfill.NewWithSeed(seed).NilChance(0.2).NumElements(0, 3).MaxDepth(12).Funcs(
		func(q *resource.Quantity, c randfill.Continue) {
			*q = *resource.NewMilliQuantity(c.Int63n(1<<40), []resource.Format{resource.DecimalSI, resource.BinarySI}[c.Intn(2)])
		},
		func(t *metav1.Time, c randfill.Continue) {
			*t = metav1.Unix(c.Int63n(4_000_000_000), 0).Rfc3339Copy()
		},
		func(t *metav1.MicroTime, c randfill.Continue) {
			*t = metav1.NewMicroTime(time.Unix(c.Int63n(4_000_000_000), c.Int63n(1e9)).Truncate(time.Microsecond).UTC())
		},
		func(d *metav1.Duration, c randfill.Continue) {
			d.Duration = time.Duration(c.Int63n(1 << 45))
		},
		func(v *intstr.IntOrString, c randfill.Continue) {
			if c.Bool() {
				*v = intstr.FromInt32(c.Int31())
			} else {
				*v = intstr.FromString(c.String(8))
			}
		},
		func(r *runtime.RawExtension, c randfill.Continue) {
			if c.Bool() {
				r.Raw = fmt.Appendf(nil, `{"a":%d,"b":[true,null,"%d"]}`, c.Int63(), c.Int63())
			}
		},
		func(f *metav1.FieldsV1, c randfill.Continue) {
			f.Raw = fmt.Appendf(nil, `{"f:spec":{"f:n%d":{}}}`, c.Intn(100))
		},
	)
}

// decoded is what decodeJSON and the API server's decoder make of raw into
// a new value of t's type, and whether go-json-experiment's decoder (the
// fast path) took it.
func decoded(raw []byte, t reflect.Type) (fast, api any, fastErr, apiErr error, v2 bool) {
	f, a := reflect.New(t).Interface(), reflect.New(t).Interface()
	v2 = jsonv2.Unmarshal(raw, reflect.New(t).Interface()) == nil
	return f, a, decodeJSON(raw, f), sigsjson.UnmarshalCaseSensitivePreserveInts(raw, a), v2
}

// sameObject fails unless decodeObject makes of raw what the API server's
// decoder made of it (api, apiErr) with the managed fields left out, when
// api is an object.
func sameObject(t *testing.T, seed int64, raw []byte, api any, apiErr error) {
	t.Helper()
	want, ok := api.(client.Object)
	if !ok {
		return
	}
	got := reflect.New(reflect.TypeOf(api).Elem()).Interface().(client.Object)
	err := decodeObject(raw, got)
	if (err == nil) != (apiErr == nil) {
		t.Fatalf("seed %d: decodeObject says %v, the API server's decoder %v, on\n%s", seed, err, apiErr, raw)
	}
	if err != nil {
		return
	}
	if len(want.GetManagedFields()) > 0 && bytes.Contains(raw, []byte(`"managedFields":[{`)) {
		managedSeen++
	}
	want = want.DeepCopyObject().(client.Object)
	want.SetManagedFields(nil)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("seed %d: decodeObject and the API server's decoder (managed fields left out) differ on\n%s\n%+v\n%+v", seed, raw, got, want)
	}
}

// managedSeen counts the documents sameObject compared that had managed
// fields to leave out.
var managedSeen int

// nulls is raw with, in turn, a value (below the top) replaced by null —
// what a client may send where the schema has not yet had its say —, at
// most n of them, taken evenly through the document.
func nulls(t *testing.T, raw []byte, n int) (out [][]byte) {
	var doc any
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var paths [][]any
	var walk func(v any, path []any)
	walk = func(v any, path []any) {
		if len(path) > 0 {
			paths = append(paths, append([]any(nil), path...))
		}
		switch t := v.(type) {
		case map[string]any:
			for k, c := range t {
				walk(c, append(path, k))
			}
		case []any:
			for i, c := range t {
				walk(c, append(path, i))
			}
		}
	}
	walk(doc, nil)
	for i := 0; i < len(paths); i += max(1, len(paths)/n) {
		p := paths[i]
		var d any
		_ = sigsjson.UnmarshalCaseSensitivePreserveInts(raw, &d)
		cur := d
		for i, step := range p {
			last := i == len(p)-1
			switch s := step.(type) {
			case string:
				if last {
					cur.(map[string]any)[s] = nil
				} else {
					cur = cur.(map[string]any)[s]
				}
			case int:
				if last {
					cur.([]any)[s] = nil
				} else {
					cur = cur.([]any)[s]
				}
			}
		}
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// The webhooks decode each request with go-json-experiment's decoder, and
// fall back to sigs.k8s.io/json — the API server's, and client-go's, which
// the reconcilers' caches decode with — where it refuses the document. For
// every kind, filled at random in every field, with each value in turn
// made null, and for the AdmissionReview around them, the two give the
// same object and refuse the same documents; and the fast path takes every
// document the API server would write (the filled objects as they are).
func TestDecodeJSONDecodesAsTheAPIServer(t *testing.T) {
	types := []any{
		admissionv1.AdmissionReview{},
		appsv1alpha1.PodSet{}, appsv1alpha1.Platform{}, networkingv1alpha1.Balancer{},
		idev1alpha1.Workspace{}, clusterv1alpha1.KubernetesCluster{},
	}
	for _, v := range types {
		typ := reflect.TypeOf(v)
		t.Run(typ.Name(), func(t *testing.T) {
			documents, fastTaken := 0, 0
			managedSeen = 0
			for seed := range int64(30) {
				obj := reflect.New(typ).Interface()
				filler(seed).Fill(obj)
				raw, err := json.Marshal(obj)
				if err != nil {
					t.Fatal(err)
				}
				fast, api, fastErr, apiErr, v2 := decoded(raw, typ)
				if !v2 || fastErr != nil || apiErr != nil {
					t.Fatalf("seed %d: a document as the API server writes it: fast path took it %v, decodeJSON %v, the API server's decoder %v\n%s",
						seed, v2, fastErr, apiErr, raw)
				}
				if !reflect.DeepEqual(fast, api) {
					t.Fatalf("seed %d: decodeJSON and the API server's decoder differ on\n%s\n%+v\n%+v", seed, raw, fast, api)
				}
				sameObject(t, seed, raw, api, apiErr)
				// Each value in turn null; a name written in another case
				// (which neither decoder may take for the field); the spec
				// given twice, the first empty (the API server's decoder
				// keeps the last; the fast path refuses it, and the fallback
				// decodes it as the API server does).
				variants := nulls(t, raw, 40)
				for _, name := range []string{`"spec"`, `"metadata"`, `"request"`, `"containers"`, `"name"`} {
					if i := bytes.Index(raw, []byte(name)); i >= 0 {
						b := bytes.Clone(raw)
						b[i+1] -= 'a' - 'A'
						variants = append(variants, b)
					}
				}
				variants = append(variants, append([]byte(`{"spec":{},`), raw[1:]...))
				for _, b := range variants {
					documents++
					fast, api, fastErr, apiErr, v2 := decoded(b, typ)
					if v2 {
						fastTaken++
					}
					if (fastErr == nil) != (apiErr == nil) {
						t.Fatalf("seed %d: decodeJSON says %v, the API server's decoder %v, on\n%s", seed, fastErr, apiErr, b)
					}
					if apiErr == nil && !reflect.DeepEqual(fast, api) {
						t.Fatalf("seed %d: decodeJSON and the API server's decoder differ on\n%s\n%+v\n%+v", seed, b, fast, api)
					}
					sameObject(t, seed, b, api, apiErr)
				}
			}
			t.Logf("%d documents varied, %d of them taken by the fast path; %d objects with managed fields left out", documents, fastTaken, managedSeen)
			if _, object := reflect.New(typ).Interface().(client.Object); object && managedSeen == 0 {
				t.Fatal("no document had managed fields: decodeObject left out nothing")
			}
			if fastTaken == 0 {
				t.Fatalf("the fast path took none of the %d documents varied: the comparison compared nothing", documents)
			}
		})
	}
}

// What decodeJSON decodes may hold nothing that go-json-experiment's
// decoder reads differently from sigs.k8s.io/json (decodeJSON says what):
// a new field of such a type must fail here rather than be decoded two
// ways. A type with an UnmarshalJSON method of its own is read by that
// method with the same bytes under either, so it is not looked into.
func TestTheDecodedTypesHoldNothingTheDecodersReadDifferently(t *testing.T) {
	jsonMethod := reflect.TypeFor[json.Unmarshaler]()
	textMethod := reflect.TypeFor[interface{ UnmarshalText([]byte) error }]()
	v2Method := reflect.TypeFor[jsonv2.UnmarshalerFrom]()
	seen := map[reflect.Type]bool{}
	var problems []string
	var visit func(typ reflect.Type, path string)
	visit = func(typ reflect.Type, path string) {
		if seen[typ] {
			return
		}
		seen[typ] = true
		ptr := reflect.PointerTo(typ)
		switch {
		case ptr.Implements(v2Method) || typ.Implements(v2Method):
			problems = append(problems, path+": has UnmarshalJSONFrom, which only go-json-experiment calls")
			return
		case ptr.Implements(jsonMethod) || typ.Implements(jsonMethod):
			return
		case ptr.Implements(textMethod) || typ.Implements(textMethod):
			problems = append(problems, path+": read as text only (the decoders take null differently)")
			return
		}
		switch typ.Kind() {
		case reflect.Interface:
			problems = append(problems, path+": an interface (the decoders read numbers differently)")
		case reflect.Pointer:
			visit(typ.Elem(), path)
		case reflect.Slice, reflect.Array:
			if typ.Elem().Kind() == reflect.Uint8 {
				problems = append(problems, path+": bytes (the decoders read them differently)")
				return
			}
			visit(typ.Elem(), path+"[]")
		case reflect.Map:
			visit(typ.Key(), path+"{key}")
			visit(typ.Elem(), path+"{}")
		case reflect.Struct:
			for i := range typ.NumField() {
				f := typ.Field(i)
				tag := f.Tag.Get("json")
				if tag == "-" || !f.IsExported() && !f.Anonymous {
					continue
				}
				name, options, _ := strings.Cut(tag, ",")
				for _, o := range strings.Split(options, ",") {
					if o == "string" || o == "inline" && name != "" {
						problems = append(problems, fmt.Sprintf("%s.%s: the option %q (the decoders read it differently)", path, f.Name, o))
					}
				}
				visit(f.Type, path+"."+f.Name)
			}
		}
	}
	for _, v := range []any{
		admissionv1.AdmissionRequest{}, // what review.ServeHTTP decodes of a review
		appsv1alpha1.PodSet{}, appsv1alpha1.Platform{}, networkingv1alpha1.Balancer{},
		idev1alpha1.Workspace{}, clusterv1alpha1.KubernetesCluster{},
	} {
		visit(reflect.TypeOf(v), reflect.TypeOf(v).Name())
	}
	if len(problems) > 0 {
		t.Fatalf("decodeJSON's fast path would read these otherwise than the API server:\n%s", strings.Join(problems, "\n"))
	}
	if len(seen) < 100 {
		t.Fatalf("looked at %d types only: the walk missed the objects' fields", len(seen))
	}
}
