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
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/proof"
	"github.com/kubeforge/kubeforge/internal/scheme"
)

// usersFields are the fields of usersPodSet its tenant manages, as the API
// server records them: every field, every list item by its key.
const usersFields = `{"f:metadata":{"f:annotations":{".":{},"f:kubeforge.io/admitted":{},"f:kubeforge.io/admitted-over":{},` +
	`"f:kubeforge.io/created-by":{},"f:kubeforge.io/owner":{}}},"f:spec":{".":{},"f:replicas":{},"f:template":{".":{},"f:spec":{".":{},` +
	`"f:containers":{".":{},"k:{\"name\":\"app\"}":{".":{},"f:env":{".":{},"k:{\"name\":\"SEQ\"}":{".":{},"f:name":{},"f:value":{}},` +
	`"k:{\"name\":\"TOKEN\"}":{".":{},"f:name":{},"f:valueFrom":{".":{},"f:secretKeyRef":{".":{},"f:key":{},"f:name":{}}}}},"f:image":{},` +
	`"f:name":{},"f:securityContext":{".":{},"f:allowPrivilegeEscalation":{},"f:capabilities":{".":{},"f:drop":{}}},` +
	`"f:volumeMounts":{".":{},"k:{\"mountPath\":\"/etc/app\"}":{".":{},"f:mountPath":{},"f:name":{}},` +
	`"k:{\"mountPath\":\"/var/run/token\"}":{".":{},"f:mountPath":{},"f:name":{}}}}},"f:securityContext":{".":{},"f:runAsNonRoot":{},` +
	`"f:seccompProfile":{".":{},"f:type":{}}},"f:serviceAccountName":{},"f:volumes":{".":{},"k:{\"name\":\"config\"}":{".":{},` +
	`"f:configMap":{".":{},"f:name":{}},"f:name":{}},"k:{\"name\":\"token\"}":{".":{},"f:name":{},"f:secret":{".":{},"f:secretName":{}}}}}}}}`

// usersPodSet is a PodSet as the performance harness's users' load sends
// it (tests/perf: a Secret, a ConfigMap, a ServiceAccount and volumes),
// stored as the API server hands it to a webhook: with its managed fields.
func usersPodSet(seq int) *appsv1alpha1.PodSet {
	zero, yes, no := int32(0), true, false
	return &appsv1alpha1.PodSet{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps.kubeforge.io/v1alpha1", Kind: "PodSet"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "users", Name: "u1-0", UID: types.UID("0b8f3c8e-7f6a-4f43-9d2c-3f1e2a4b5c6d"),
			ResourceVersion: "12345", Generation: int64(seq + 1), CreationTimestamp: metav1.Unix(1_800_000_000, 0),
			Annotations: map[string]string{proof.CreatedByAnnotation: "tenant-1", proof.OwnerAnnotation: "tenant-1"},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "perf.test", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apps.kubeforge.io/v1alpha1",
					Time: &metav1.Time{Time: time.Unix(1_800_000_000, 0)}, FieldsType: "FieldsV1",
					FieldsV1: &metav1.FieldsV1{Raw: []byte(usersFields)}},
				{Manager: "manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apps.kubeforge.io/v1alpha1",
					Time: &metav1.Time{Time: time.Unix(1_800_000_000, 0)}, FieldsType: "FieldsV1", Subresource: "status",
					FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{".":{},"f:conditions":{},"f:observedGeneration":{},"f:replicas":{}}}`)}},
			}},
		Spec: appsv1alpha1.PodSetSpec{Replicas: &zero, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			ServiceAccountName: "app",
			SecurityContext:    &corev1.PodSecurityContext{RunAsNonRoot: &yes, SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Containers: []corev1.Container{{Name: "app", Image: "registry.example.com/app:1",
				SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: &no, Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
				Env: []corev1.EnvVar{{Name: "SEQ", Value: fmt.Sprint(seq)}, {Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{
					SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "app-token"}, Key: "token"}}}},
				VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/etc/app"}, {Name: "token", MountPath: "/var/run/token"}}}},
			Volumes: []corev1.Volume{
				{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app-config"}}}},
				{Name: "token", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "app-token"}}},
			},
		}}},
	}
}

// allowingReviews answers every SubjectAccessReview allowed, as the API
// server would for the users' load.
func allowingReviews(s *runtime.Scheme) client.Client {
	return fake.NewClientBuilder().WithScheme(s).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if sar, ok := obj.(*authorizationv1.SubjectAccessReview); ok {
				sar.Status.Allowed = true
				return nil
			}
			return c.Create(ctx, obj, opts...)
		}}).Build()
}

// reviewBody is the AdmissionReview the API server posts for an update of
// old to obj by user.
func reviewBody(b testing.TB, op admissionv1.Operation, old, obj runtime.Object, user string) []byte {
	raw := func(o runtime.Object) runtime.RawExtension {
		if o == nil {
			return runtime.RawExtension{}
		}
		j, err := json.Marshal(o)
		if err != nil {
			b.Fatal(err)
		}
		return runtime.RawExtension{Raw: j}
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	body, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: "8f5e2c1a-0000-4000-8000-000000000001",
			Kind:     metav1.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind},
			Resource: metav1.GroupVersionResource{Group: gvk.Group, Version: gvk.Version, Resource: strings.ToLower(gvk.Kind) + "s"},
			Name:     "u1-0", Namespace: "users", Operation: op,
			UserInfo: authenticationv1.UserInfo{Username: user, Groups: []string{"perf:tenants", "system:authenticated"}},
			Object:   raw(obj), OldObject: raw(old)},
	})
	if err != nil {
		b.Fatal(err)
	}
	return body
}

// BenchmarkMutatingWebhookSpecUpdate is the manager's side of one request
// of the users' load: the mutating webhook's answer to a PodSet's spec
// update (decoding, defaults, rules, the access checks from the review
// cache, the stamp, the patch), without TLS; and the same defaulter served
// by controller-runtime's handler (admission.WithDefaulter), which
// decodes the review twice and diffs the whole object for its patch. Each
// reports the CPU time and memory a call takes.
func BenchmarkMutatingWebhookSpecUpdate(b *testing.B) {
	// The manager's logger (cmd/manager), its lines discarded: each
	// request's logger is made from it.
	logf.SetLogger(zap.New(zap.UseFlagOptions(&zap.Options{Development: false}), zap.WriteTo(io.Discard)))
	s := scheme.New()
	keys, err := proof.NewKeyring(time.Now(), bytes.Repeat([]byte{7}, 32))
	if err != nil {
		b.Fatal(err)
	}
	opts := Options{Proof: keys, Reviews: allowingReviews(s), Reader: fake.NewClientBuilder().WithScheme(s).Build(),
		ReviewCacheTTL: DefaultReviewCacheTTL}
	old := usersPodSet(1)
	if err := PodSet.Sign(keys, old, "tenant-1", time.Now()); err != nil {
		b.Fatal(err)
	}
	next := usersPodSet(2)
	next.Annotations[StampAnnotation] = old.Annotations[StampAnnotation]
	body := reviewBody(b, admissionv1.Update, old, next, "tenant-1")
	for _, h := range []struct {
		name    string
		handler http.Handler
	}{{"kubeforge", mutateWith(s, PodSet, opts, false)}, {"controller-runtime", mutateWith(s, PodSet, opts, true)}} {
		b.Run(h.name, func(b *testing.B) {
			call := func() admissionv1.AdmissionResponse {
				rec := httptest.NewRecorder()
				req := httptest.NewRequest(http.MethodPost, MutatePath(PodSet.GVK), bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				h.handler.ServeHTTP(rec, req)
				var out admissionv1.AdmissionReview
				if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || out.Response == nil {
					b.Fatalf("no admission review in the answer (%v): %s", err, rec.Body.String())
				}
				return *out.Response
			}
			// The answer is a stamp for the new spec: the patch carries it.
			resp := call()
			if !resp.Allowed || !bytes.Contains(resp.Patch, []byte(StampAnnotation[len("kubeforge.io/"):])) {
				b.Fatalf("want the update admitted with a new stamp, got allowed=%v patch=%s result=%v", resp.Allowed, resp.Patch, resp.Result)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				call()
			}
		})
	}
}
