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
	"encoding/json"
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/proof"
)

// A hand-back gives an object that a kubeforge version without ownership
// proofs retained (a Workspace's home, a Platform's volume or generated
// Secret) back to an owner: the one explicit act that does, since the
// marks such an object carries could have been written by anyone who may
// write it (docs/security.md, "Hand-back"). The caller must be allowed to
// read what the object holds themselves — get the Secret; for a claim,
// create pods in the namespace (which may mount any claim) — and to update
// the owner. kubeforge then seals the object for that owner, and its next
// reconcile takes it back.

// HandBackRequest is the body of POST /api/v1/namespaces/{ns}/handbacks.
type HandBackRequest struct {
	// Kind is PersistentVolumeClaim or Secret; Name the retained object.
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Owner is the Workspace or Platform to give it to.
	Owner HandBackOwner `json:"owner"`
}

// HandBackOwner names a Workspace or Platform in the same namespace.
type HandBackOwner struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
}

// HandedBackAnnotation on an owner names the last object handed back to
// it; writing it brings the owner's reconcile, which takes the object.
const HandedBackAnnotation = "kubeforge.io/handed-back"

var handBackOwners = map[string]struct {
	gvr  schema.GroupVersionResource
	make func() client.Object
}{
	"Workspace": {idev1alpha1.GroupVersion.WithResource("workspaces"), func() client.Object { return &idev1alpha1.Workspace{} }},
	"Platform":  {appsv1alpha1.GroupVersion.WithResource("platforms"), func() client.Object { return &appsv1alpha1.Platform{} }},
}

func (s *Server) handBack(w http.ResponseWriter, r *http.Request) {
	ns := r.PathValue("ns")
	token, ok := BearerToken(r.Header.Get("Authorization"))
	if !ok {
		writeError(w, ErrUnauthenticated)
		return
	}
	u, err := s.Auth.Authenticate(r.Context(), token, hostOf(r.RemoteAddr))
	if err != nil {
		writeError(w, err)
		return
	}
	var req HandBackRequest
	if err := decode(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	owner, ok := handBackOwners[req.Owner.Kind]
	if !ok || req.Owner.Name == "" || req.Name == "" || (req.Kind != "PersistentVolumeClaim" && req.Kind != "Secret") {
		writeError(w, newError(http.StatusUnprocessableEntity, "Invalid",
			"kind must be PersistentVolumeClaim or Secret, name set, owner.kind Workspace or Platform and owner.name set"))
		return
	}
	// What admission asks of a spec that names the object: get a Secret;
	// get a claim and create pods (mounting it is reading its data).
	read := []Attributes{{Verb: "get", Resource: "persistentvolumeclaims", Namespace: ns, Name: req.Name}, {Verb: "create", Resource: "pods", Namespace: ns}}
	if req.Kind == "Secret" {
		read = []Attributes{{Verb: "get", Resource: "secrets", Namespace: ns, Name: req.Name}}
	}
	for _, attrs := range append(read, Attributes{Verb: "update", Group: owner.gvr.Group, Resource: owner.gvr.Resource, Namespace: ns, Name: req.Owner.Name}) {
		if err := s.Auth.Authorize(r.Context(), u, attrs); err != nil {
			writeError(w, err)
			return
		}
	}

	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(req.Kind))
	if err := s.APIReader.Get(r.Context(), types.NamespacedName{Namespace: ns, Name: req.Name}, obj); err != nil {
		writeError(w, notFoundOr(err, "%s %s", req.Kind, req.Name))
		return
	}
	gk := obj.GroupVersionKind().GroupKind()
	_, verdict := s.Proof.Check(proof.Object{GroupKind: gk, Namespace: ns, Name: req.Name, UID: string(obj.UID)}, obj.Annotations[proof.Annotation])
	if obj.Annotations["kubeforge.io/retain-on-delete"] != "true" || verdict != proof.None || !obj.CreationTimestamp.Time.Before(s.Proof.Since) {
		writeError(w, newError(http.StatusConflict, "Conflict",
			"%s %s is not an object retained by a kubeforge version before ownership proofs; nothing to hand back", req.Kind, req.Name))
		return
	}
	to := owner.make()
	if err := s.APIReader.Get(r.Context(), types.NamespacedName{Namespace: ns, Name: req.Owner.Name}, to); err != nil {
		writeError(w, notFoundOr(err, "%s %s", req.Owner.Kind, req.Owner.Name))
		return
	}

	seal := s.Proof.Seal(proof.Object{GroupKind: gk, Namespace: ns, Name: req.Name, UID: string(obj.UID)}, proof.HandBack(string(to.GetUID())))
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"uid": obj.UID, "resourceVersion": obj.ResourceVersion, "annotations": map[string]string{proof.Annotation: seal},
	}})
	logf.FromContext(r.Context()).Info("Handing back a retained object", "object", req.Kind+"/"+req.Name,
		"owner", req.Owner.Kind+"/"+req.Owner.Name, "caller", u.Name)
	if err := s.Client.Patch(r.Context(), obj, client.RawPatch(types.MergePatchType, patch), client.FieldOwner("kubeforge-proof")); err != nil {
		writeError(w, fmt.Errorf("sealing %s %s: %w", req.Kind, req.Name, err))
		return
	}
	touch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{HandedBackAnnotation: req.Kind + "/" + req.Name}}})
	if err := s.Client.Patch(r.Context(), to, client.RawPatch(types.MergePatchType, touch)); err != nil {
		writeError(w, fmt.Errorf("telling %s %s: %w", req.Owner.Kind, req.Owner.Name, err))
		return
	}
	if s.Recorder != nil {
		s.Recorder.Eventf(to, obj, corev1.EventTypeNormal, "HandedBack", "HandBack", "%s %s handed back by %s", req.Kind, req.Name, u.Name)
	}
	writeJSON(w, http.StatusOK, map[string]string{"handedBack": req.Kind + "/" + req.Name, "owner": req.Owner.Kind + "/" + req.Owner.Name})
}

func notFoundOr(err error, format string, args ...any) error {
	if apierrors.IsNotFound(err) {
		return newError(http.StatusNotFound, "NotFound", format+" does not exist", args...)
	}
	return err
}
