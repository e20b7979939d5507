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
	"cmp"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"sort"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/workload"
)

//go:embed openapi.json
var openAPI []byte

const clusterGroup = "cluster.kubeforge.io"

// restMux routes the REST API. Every route but /openapi.json and the
// installer callback authenticates the caller and authorises the call.
func (s *Server) restMux() http.Handler {
	mux := http.NewServeMux()
	const base = "/api/v1/namespaces/{ns}/kubernetesclusters"
	mux.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(openAPI)
	})
	mux.Handle("POST "+base, s.timed(s.authed("create", "", s.createCluster)))
	mux.Handle("GET "+base, s.timed(s.authed("list", "", s.listClusters)))
	mux.Handle("GET "+base+"/{name}", s.timed(s.authed("get", "", s.getCluster)))
	mux.Handle("DELETE "+base+"/{name}", s.timed(s.authed("delete", "", s.deleteCluster)))
	mux.Handle("POST "+base+"/{name}/scaleup", s.timed(s.authed("update", "", s.scale(true))))
	mux.Handle("POST "+base+"/{name}/scaledown", s.timed(s.authed("update", "", s.scale(false))))
	// Reading an installer's log is reading a pod's log.
	mux.Handle("GET "+base+"/{name}/logs", s.authed("get", "log", s.logs))
	mux.Handle("POST "+base+"/{name}/operations/{id}/callback", s.timed(http.HandlerFunc(s.callback)))
	// Authorised in the handler: what it asks depends on the body.
	mux.Handle("POST /api/v1/namespaces/{ns}/handbacks", s.timed(http.HandlerFunc(s.handBack)))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, newError(http.StatusNotFound, "NotFound", "no route %s %s; see /openapi.json", r.Method, r.URL.Path))
	})
	return mux
}

// timed bounds a handler's time.
func (s *Server) timed(h http.Handler) http.Handler {
	return http.TimeoutHandler(h, s.HandlerTimeout, `{"code":503,"reason":"Timeout","message":"the request took too long"}`)
}

type userKey struct{}

// authed authenticates the caller and authorises verb on
// kubernetesclusters (or pods/log for subresource "log") in {ns}.
func (s *Server) authed(verb, subresource string, h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
		attrs := Attributes{Verb: verb, Group: clusterGroup, Resource: "kubernetesclusters", Namespace: r.PathValue("ns"), Name: r.PathValue("name")}
		if subresource == "log" {
			attrs = Attributes{Verb: "get", Resource: "pods", Subresource: "log", Namespace: r.PathValue("ns")}
		}
		if err := s.Auth.Authorize(r.Context(), u, attrs); err != nil {
			writeError(w, err)
			return
		}
		h(w, r.WithContext(context.WithValue(r.Context(), userKey{}, u)))
	})
}

// decode reads a JSON body of at most MaxBodyBytes, refusing unknown fields.
func decode(w http.ResponseWriter, r *http.Request, into any) error {
	body := http.MaxBytesReader(w, r.Body, MaxBodyBytes)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return newError(http.StatusRequestEntityTooLarge, "RequestEntityTooLarge", "the body is larger than %d bytes", MaxBodyBytes)
		}
		return newError(http.StatusBadRequest, "BadRequest", "the body is not the JSON expected: %v", err)
	}
	if _, err := io.Copy(io.Discard, body); err != nil {
		return newError(http.StatusRequestEntityTooLarge, "RequestEntityTooLarge", "the body is larger than %d bytes", MaxBodyBytes)
	}
	return nil
}

// CreateClusterRequest is the body of a create.
type CreateClusterRequest struct {
	Name   string                                `json:"name"`
	Labels map[string]string                     `json:"labels,omitempty"`
	Spec   clusterv1alpha1.KubernetesClusterSpec `json:"spec"`
}

func (s *Server) createCluster(w http.ResponseWriter, r *http.Request) {
	var req CreateClusterRequest
	if err := decode(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	if req.Name == "" {
		writeError(w, &Error{Code: http.StatusUnprocessableEntity, Reason: "Invalid", Message: "name is required",
			Fields: []FieldError{{Field: "name", Type: "FieldValueRequired", Message: "Required value"}}})
		return
	}
	kc := &clusterv1alpha1.KubernetesCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: r.PathValue("ns"), Name: req.Name, Labels: req.Labels},
		Spec:       req.Spec,
	}
	c, err := s.asCaller(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	if err := c.Create(r.Context(), kc); err != nil {
		writeError(w, asCallerErr(err))
		return
	}
	writeJSON(w, http.StatusCreated, kc)
}

func (s *Server) getCluster(w http.ResponseWriter, r *http.Request) {
	kc := &clusterv1alpha1.KubernetesCluster{}
	if err := s.Client.Get(r.Context(), types.NamespacedName{Namespace: r.PathValue("ns"), Name: r.PathValue("name")}, kc); err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, kc)
}

func (s *Server) listClusters(w http.ResponseWriter, r *http.Request) {
	list := &clusterv1alpha1.KubernetesClusterList{}
	if err := s.Client.List(r.Context(), list, client.InNamespace(r.PathValue("ns"))); err != nil {
		writeError(w, err)
		return
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	writeJSON(w, http.StatusOK, list)
}

func (s *Server) deleteCluster(w http.ResponseWriter, r *http.Request) {
	kc := &clusterv1alpha1.KubernetesCluster{ObjectMeta: metav1.ObjectMeta{Namespace: r.PathValue("ns"), Name: r.PathValue("name")}}
	c, err := s.asCaller(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	if err := c.Delete(r.Context(), kc, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		writeError(w, asCallerErr(err))
		return
	}
	// Accepted: the cluster is reset (when resetOnDelete) before it goes.
	writeJSON(w, http.StatusAccepted, map[string]string{"status": "Deleting", "name": kc.Name})
}

// ScaleRequest is the body of a scale up (hosts to add) or down (hosts,
// by name or address, to remove).
type ScaleRequest struct {
	Nodes []clusterv1alpha1.Host `json:"nodes"`
}

func (s *Server) scale(up bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req ScaleRequest
		if err := decode(w, r, &req); err != nil {
			writeError(w, err)
			return
		}
		if len(req.Nodes) == 0 {
			writeError(w, &Error{Code: http.StatusUnprocessableEntity, Reason: "Invalid", Message: "nodes is empty",
				Fields: []FieldError{{Field: "nodes", Type: "FieldValueRequired", Message: "at least one host"}}})
			return
		}
		kc := &clusterv1alpha1.KubernetesCluster{}
		key := types.NamespacedName{Namespace: r.PathValue("ns"), Name: r.PathValue("name")}
		if err := s.Client.Get(r.Context(), key, kc); err != nil {
			writeError(w, err)
			return
		}
		if op := kc.Status.CurrentOperation; op != "" {
			writeError(w, newError(http.StatusConflict, "Conflict", "operation %s is running; scale once it has finished", op))
			return
		}
		if up {
			kc.Spec.Nodes = append(kc.Spec.Nodes, req.Nodes...)
		} else {
			var missing []string
			for _, n := range req.Nodes {
				i := slices.IndexFunc(kc.Spec.Nodes, func(h clusterv1alpha1.Host) bool {
					return n.Address != "" && h.Address == n.Address || n.Name != "" && h.Name == n.Name
				})
				if i < 0 {
					missing = append(missing, n.Address+n.Name)
					continue
				}
				kc.Spec.Nodes = slices.Delete(kc.Spec.Nodes, i, i+1)
			}
			if len(missing) > 0 {
				writeError(w, newError(http.StatusUnprocessableEntity, "Invalid", "not nodes of %s: %v", kc.Name, missing))
				return
			}
		}
		// kc carries the resourceVersion read: a change made meanwhile is a
		// 409, never overwritten.
		c, err := s.asCaller(r.Context())
		if err != nil {
			writeError(w, err)
			return
		}
		if err := c.Update(r.Context(), kc); err != nil {
			writeError(w, asCallerErr(err))
			return
		}
		writeJSON(w, http.StatusOK, kc)
	}
}

// logs streams the log of the current operation's installer pod, or of
// the last one's. The caller must be allowed to read pod logs (authed)
// and the cluster itself. The Pod is the one the operation's Job made:
// the Job is the one the controller names for the operation (never a name
// from status) and proven the cluster's; the Pod is controlled by that
// Job's UID — and when more than one Pod claims so (one planted beside
// the real one, which a namespace member who may create Pods can do),
// none is streamed.
func (s *Server) logs(w http.ResponseWriter, r *http.Request) {
	kc := &clusterv1alpha1.KubernetesCluster{}
	ns := r.PathValue("ns")
	u, _ := r.Context().Value(userKey{}).(*User)
	read := Attributes{Verb: "get", Group: clusterGroup, Resource: "kubernetesclusters", Namespace: ns, Name: r.PathValue("name")}
	if err := s.Auth.Authorize(r.Context(), u, read); err != nil {
		writeError(w, err)
		return
	}
	if err := s.Client.Get(r.Context(), types.NamespacedName{Namespace: ns, Name: r.PathValue("name")}, kc); err != nil {
		writeError(w, err)
		return
	}
	if len(kc.Status.Operations) == 0 {
		writeError(w, newError(http.StatusNotFound, "NotFound", "%s has run no operation yet", kc.Name))
		return
	}
	op := kc.Status.Operations[len(kc.Status.Operations)-1]
	for _, o := range kc.Status.Operations {
		if o.ID == kc.Status.CurrentOperation {
			op = o
		}
	}
	pod, err := s.installerPod(r.Context(), kc, op)
	if err != nil {
		writeError(w, err)
		return
	}
	follow := r.URL.Query().Get("follow") == "true"
	ctx := r.Context()
	if follow {
		release, err := s.streams.acquire(u, cmp.Or(s.MaxStreamsPerCaller, DefaultMaxStreamsPerCaller), cmp.Or(s.MaxStreams, DefaultMaxStreams), "log streams")
		if err != nil {
			writeError(w, err)
			return
		}
		defer release()
	} else {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.HandlerTimeout)
		defer cancel()
	}
	stream, err := s.Clientset.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{Follow: follow}).Stream(ctx)
	if err != nil {
		writeError(w, err)
		return
	}
	defer func() { _ = stream.Close() }()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Kubeforge-Operation", op.ID)
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	buf := make([]byte, 32*1024)
	for {
		n, err := stream.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
		if err != nil {
			return
		}
	}
}

// installerPod is the name of the Pod that op's Job made (logs).
func (s *Server) installerPod(ctx context.Context, kc *clusterv1alpha1.KubernetesCluster, op clusterv1alpha1.Operation) (string, error) {
	job := &batchv1.Job{}
	name := clusterv1alpha1.JobName(kc, op.ID)
	if err := s.Client.Get(ctx, types.NamespacedName{Namespace: kc.Namespace, Name: name}, job); err != nil {
		if apierrors.IsNotFound(err) {
			return "", newError(http.StatusNotFound, "NotFound", "operation %s has no Job (yet, or any more)", op.ID)
		}
		return "", err
	}
	if s.Owns == nil || !s.Owns(kc, job) {
		return "", newError(http.StatusNotFound, "NotFound", "the Job %s is not one kubeforge made for %s", name, kc.Name)
	}
	// The Job controller's label narrows the list; the controller
	// reference decides.
	pods, err := s.Clientset.CoreV1().Pods(kc.Namespace).List(ctx, metav1.ListOptions{LabelSelector: batchv1.ControllerUidLabel + "=" + string(job.UID)})
	if err != nil {
		return "", err
	}
	mine := workload.JobPods(pods.Items, job)
	switch len(mine) {
	case 0:
		return "", newError(http.StatusNotFound, "NotFound", "operation %s has no pod (yet)", op.ID)
	case 1:
		return mine[0].Name, nil
	}
	// backoffLimit 0: the Job makes one Pod; the others were planted.
	return "", newError(http.StatusConflict, "Conflict", "%d Pods claim to be operation %s's installer, which makes one: none is streamed", len(mine), op.ID)
}
