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

package apiserver

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
)

// Annotations the callback leaves on an operation's callback Secret: the
// token is spent, and what the installer said.
const (
	CallbackUsedAnnotation    = "cluster.kubeforge.io/callback-used"
	CallbackResultAnnotation  = "cluster.kubeforge.io/callback-result"
	CallbackMessageAnnotation = "cluster.kubeforge.io/callback-message"
)

// CallbackRequest is what an installer reports.
type CallbackRequest struct {
	Result  string `json:"result"`
	Message string `json:"message,omitempty"`
}

// callback lets an installer report early. It is authenticated by the
// operation's own token (from the Secret mounted into its Job), not by
// user RBAC; a token works once, and only while its operation is the
// cluster's current one. The report becomes an event and annotations;
// the Job's status stays what decides the operation.
//
// The token is checked against the manager's cache before anything is
// read from the API server, so a caller guessing tokens costs the cluster
// nothing; every refusal — no token, a wrong one, a spent one, an
// operation that is not running, a cluster that does not exist — is the
// same 401, so a refusal tells a guesser nothing about what exists.
func (s *Server) callback(w http.ResponseWriter, r *http.Request) {
	ns, name, id := r.PathValue("ns"), r.PathValue("name"), r.PathValue("id")
	refused := newError(http.StatusUnauthorized, "Unauthorized", "the token is not valid for this operation")
	token, ok := BearerToken(r.Header.Get("Authorization"))
	if !ok {
		writeError(w, refused)
		return
	}
	kc := &clusterv1alpha1.KubernetesCluster{}
	if err := s.Cache.Get(r.Context(), types.NamespacedName{Namespace: ns, Name: name}, kc); err != nil ||
		kc.Status.CurrentOperation != id || !slices.ContainsFunc(kc.Status.Operations, func(op clusterv1alpha1.Operation) bool { return op.ID == id }) {
		writeError(w, refused)
		return
	}
	key := types.NamespacedName{Namespace: ns, Name: clusterv1alpha1.CallbackSecretName(kc, id)}
	// Only the Secret the operator made counts (its seal): one planted
	// under the name carries a token its planter knows. The token is
	// checked first against the hash in the Secret's metadata, which the
	// cache holds, so a refusal costs the API server nothing.
	cached := &metav1.PartialObjectMetadata{}
	cached.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	if err := s.Cache.Get(r.Context(), key, cached); err != nil || !s.Owns(kc, cached) || !tokenHashMatches(cached, token) {
		writeError(w, refused)
		return
	}
	var req CallbackRequest
	if err := decode(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	if req.Result != "succeeded" && req.Result != "failed" {
		writeError(w, &Error{Code: http.StatusUnprocessableEntity, Reason: "Invalid", Message: `result must be "succeeded" or "failed"`,
			Fields: []FieldError{{Field: "result", Type: "FieldValueNotSupported", Message: `supported values: "succeeded", "failed"`}}})
		return
	}
	if len(req.Message) > 1024 {
		req.Message = req.Message[:1024]
	}
	// The token is right: read the Secret fresh (kubeforge never caches
	// Secrets' content; the cache may not have seen it spent yet), and
	// mark it spent with the version read, so that two calls with one
	// token cannot both pass.
	secret := &corev1.Secret{}
	if err := s.APIReader.Get(r.Context(), key, secret); err != nil || !s.Owns(kc, secret) || !tokenMatches(secret, token) {
		if err != nil && !apierrors.IsNotFound(err) {
			writeError(w, err)
			return
		}
		writeError(w, refused)
		return
	}
	patch := client.MergeFromWithOptions(secret.DeepCopy(), client.MergeFromWithOptimisticLock{})
	if secret.Annotations == nil {
		secret.Annotations = map[string]string{}
	}
	secret.Annotations[CallbackUsedAnnotation] = "true"
	secret.Annotations[CallbackResultAnnotation] = req.Result
	secret.Annotations[CallbackMessageAnnotation] = req.Message
	if err := s.Client.Patch(r.Context(), secret, patch); err != nil {
		if apierrors.IsConflict(err) {
			writeError(w, refused)
			return
		}
		writeError(w, err)
		return
	}
	if s.Recorder != nil {
		kind := corev1.EventTypeNormal
		if req.Result == "failed" {
			kind = corev1.EventTypeWarning
		}
		s.Recorder.Eventf(kc, nil, kind, "InstallerReported", "Callback", "Operation %s reported %s: %s", id, req.Result, req.Message)
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"operation": id, "result": req.Result})
}

// tokenMatches is whether secret holds token, unspent.
func tokenHashMatches(secret *metav1.PartialObjectMetadata, token string) bool {
	sum := sha256.Sum256([]byte(token))
	want := secret.Annotations[clusterv1alpha1.CallbackTokenHashAnnotation]
	return want != "" && subtle.ConstantTimeCompare([]byte(want), []byte(hex.EncodeToString(sum[:]))) == 1 &&
		secret.Annotations[CallbackUsedAnnotation] == ""
}

func tokenMatches(secret *corev1.Secret, token string) bool {
	want := secret.Data[clusterv1alpha1.CallbackTokenKey]
	return len(want) > 0 && subtle.ConstantTimeCompare(want, []byte(token)) == 1 && secret.Annotations[CallbackUsedAnnotation] == ""
}
