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
	"errors"
	"fmt"
	"sort"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/apiserver/idev1"
	"github.com/kubeforge/kubeforge/internal/apiserver/seedpb"
)

const ideGroup = "ide.kubeforge.io"

// waitingMethods have their own bound (Server.WaitTimeout), not
// HandlerTimeout.
var waitingMethods = map[string]bool{
	idev1.CloudIdeService_CreateSpaceAndWaitForRunning_FullMethodName:  true,
	seedpb.CloudIdeService_CreateSpaceAndWaitForRunning_FullMethodName: true,
}

// unaryAuth authenticates every call from its "authorization" metadata
// and bounds calls without a deadline (but create-and-wait, which has its
// own bound).
func (s *Server) unaryAuth(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	var header string
	if v := md.Get("authorization"); len(v) > 0 {
		header = v[0]
	}
	token, ok := BearerToken(header)
	if !ok {
		return nil, status.Error(codes.Unauthenticated, "a valid bearer token is required in the authorization metadata")
	}
	from := ""
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		from = hostOf(p.Addr.String())
	}
	u, err := s.Auth.Authenticate(ctx, token, from)
	if err != nil {
		return nil, grpcError(err)
	}
	ctx = context.WithValue(ctx, userKey{}, u)
	if _, has := ctx.Deadline(); !has && !waitingMethods[info.FullMethod] {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.HandlerTimeout)
		defer cancel()
	}
	return handler(ctx, req)
}

func (s *Server) authorize(ctx context.Context, verb, ns, name string) error {
	u, _ := ctx.Value(userKey{}).(*User)
	if u == nil {
		return ErrUnauthenticated
	}
	if ns == "" || name == "" {
		return newError(400, "BadRequest", "namespace and name are required")
	}
	return s.Auth.Authorize(ctx, u, Attributes{Verb: verb, Group: ideGroup, Resource: "workspaces", Namespace: ns, Name: name})
}

type ideService struct {
	idev1.UnimplementedCloudIdeServiceServer
	s *Server
}

// workspaceOf builds the Workspace a PodInfo asks for; the webhook fills
// in the rest.
func workspaceOf(in *idev1.PodInfo) (*idev1alpha1.Workspace, error) {
	ws := &idev1alpha1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Namespace: in.GetNamespace(), Name: in.GetName()},
		Spec:       idev1alpha1.WorkspaceSpec{Image: in.GetImage(), User: in.GetUser()},
	}
	if err := setSizes(ws, sized{"cpu", in.GetCpu()}, sized{"memory", in.GetMemory()}, sized{"storage", in.GetStorage()}); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(in.GetEnv()))
	for k := range in.GetEnv() {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		ws.Spec.Env = append(ws.Spec.Env, corev1.EnvVar{Name: k, Value: in.GetEnv()[k]})
	}
	return ws, nil
}

// sized is a quantity a caller sent, and the field it came in.
type sized struct{ field, value string }

// setSizes sets the IDE container's requests and limits (cpu, memory) and
// the home volume's size (storage) from what a caller sent; empty ones are
// left to the defaults, and one that is no quantity is INVALID_ARGUMENT
// naming its field. Both gRPC services build Workspaces with it.
func setSizes(ws *idev1alpha1.Workspace, cpu, memory, storage sized) error {
	parse := func(s sized) (*resource.Quantity, error) {
		if s.value == "" {
			return nil, nil
		}
		q, err := resource.ParseQuantity(s.value)
		if err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "%s %q is not a quantity: %v", s.field, s.value, err)
		}
		return &q, nil
	}
	list := corev1.ResourceList{}
	for name, s := range map[corev1.ResourceName]sized{corev1.ResourceCPU: cpu, corev1.ResourceMemory: memory} {
		q, err := parse(s)
		if err != nil {
			return err
		}
		if q != nil {
			list[name] = *q
		}
	}
	if len(list) > 0 {
		ws.Spec.Resources = &corev1.ResourceRequirements{Requests: list, Limits: list.DeepCopy()}
	}
	size, err := parse(storage)
	if err != nil {
		return err
	}
	ws.Spec.Storage.Size = size
	return nil
}

func info(ws *idev1alpha1.Workspace) *idev1.PodSpaceInfo {
	ws = ws.DeepCopy()
	idev1alpha1.DefaultWorkspace(ws) // one stored without the webhook
	port := ws.Spec.Port
	return &idev1.PodSpaceInfo{
		Namespace: ws.Namespace, Name: ws.Name, Phase: string(ws.Status.Phase),
		NodeName: ws.Status.NodeName, PodIp: ws.Status.PodIP, Port: port, Url: ws.Status.URL,
		CredentialsSecret: idev1alpha1.WorkspaceCredentialsSecret(ws),
	}
}

// CreateSpaceAndWaitForRunning creates the Workspace (an existing one is
// waited for as it is) and waits until it is Running.
func (i *ideService) CreateSpaceAndWaitForRunning(ctx context.Context, in *idev1.PodInfo) (*idev1.PodSpaceInfo, error) {
	ws, err := workspaceOf(in)
	if err != nil {
		return nil, err
	}
	running, err := i.s.createAndWait(ctx, ws, false)
	if err != nil {
		return nil, err
	}
	return info(running), nil
}

// createAndWait creates ws as the caller and waits until it is Running.
// An existing Workspace is waited for as it is, or, with start, started
// first (which needs patch). It listens to the manager's shared Workspace
// informer — one handler per call, removed when the call ends — so waiting
// calls open no watch of their own.
func (s *Server) createAndWait(ctx context.Context, ws *idev1alpha1.Workspace, start bool) (*idev1alpha1.Workspace, error) {
	ns, name := ws.Namespace, ws.Name
	// The reviews at once: each is a round trip to the API server.
	verbs := []string{"create", "get"}
	if start {
		verbs = append(verbs, "patch")
	}
	allowed := make(chan error, len(verbs))
	for _, verb := range verbs {
		go func() { allowed <- s.authorize(ctx, verb, ns, name) }()
	}
	for range verbs {
		if err := <-allowed; err != nil {
			return nil, grpcError(err)
		}
	}
	u, _ := ctx.Value(userKey{}).(*User)
	release, err := s.waits.acquire(u, cmp.Or(s.MaxWaitsPerCaller, DefaultMaxWaitsPerCaller), cmp.Or(s.MaxWaits, DefaultMaxWaits), "create-and-wait calls")
	if err != nil {
		return nil, grpcError(err)
	}
	defer release()
	if deadline, has := ctx.Deadline(); has {
		// Give up a little before the caller does, so that the answer — the
		// phase reached — arrives before the caller's own deadline error.
		margin := min(500*time.Millisecond, time.Until(deadline)/10)
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline.Add(-margin))
		defer cancel()
	} else {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.WaitTimeout)
		defer cancel()
	}
	c, err := s.asCaller(ctx)
	if err != nil {
		return nil, grpcError(err)
	}
	err = c.Create(ctx, ws)
	switch {
	case apierrors.IsAlreadyExists(err) && start:
		patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"started":true}}`))
		existing := &idev1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		if err := c.Patch(ctx, existing, patch); err != nil {
			return nil, grpcError(asCallerErr(err))
		}
	case err != nil && !apierrors.IsAlreadyExists(err):
		return nil, grpcError(asCallerErr(err))
	}
	return s.waitRunning(ctx, types.NamespacedName{Namespace: ns, Name: name})
}

func (s *Server) waitRunning(ctx context.Context, key types.NamespacedName) (*idev1alpha1.Workspace, error) {
	changed := make(chan struct{}, 1)
	notify := func(obj any) {
		o, ok := obj.(client.Object)
		if tomb, isTomb := obj.(toolscache.DeletedFinalStateUnknown); isTomb {
			o, ok = tomb.Obj.(client.Object)
		}
		if !ok || o.GetNamespace() != key.Namespace {
			return
		}
		// The Workspace, or its Pod (named like it).
		if o.GetName() == key.Name {
			select {
			case changed <- struct{}{}:
			default:
			}
		}
	}
	// Both shared informers: the Workspace's status, and its Pod, whose
	// Ready is what Running means — answering from it saves waiting for
	// the controller's status write and its watch event.
	for _, obj := range []client.Object{&idev1alpha1.Workspace{}, &corev1.Pod{}} {
		inf, err := s.Cache.GetInformer(ctx, obj)
		if err != nil {
			return nil, grpcError(fmt.Errorf("watching %T: %w", obj, err))
		}
		reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    notify,
			UpdateFunc: func(_, obj any) { notify(obj) },
			DeleteFunc: notify,
		})
		if err != nil {
			return nil, grpcError(err)
		}
		defer func() { _ = inf.RemoveEventHandler(reg) }()
	}

	phase := idev1alpha1.WorkspacePhase("")
	reason := ""
	for {
		ws := &idev1alpha1.Workspace{}
		err := s.Cache.Get(ctx, key, ws)
		switch {
		case apierrors.IsNotFound(err):
			// Not in this replica's cache yet, or deleted meanwhile.
		case err != nil && ctx.Err() == nil:
			return nil, grpcError(err)
		case err == nil:
			phase, reason = ws.Status.Phase, ws.Status.Reason
			if s.running(ctx, ws) {
				return ws, nil
			}
			if phase == idev1alpha1.PhaseFailed {
				return nil, status.Errorf(codes.FailedPrecondition, "workspace %s failed: %s: %s", key.Name, ws.Status.Reason, ws.Status.Message)
			}
		}
		select {
		case <-changed:
		case <-ctx.Done():
			reached := string(phase)
			if reached == "" {
				reached = "none yet"
			}
			if reason != "" {
				reached += " (" + reason + ")"
			}
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil, status.Errorf(codes.DeadlineExceeded, "workspace %s is not Running by the deadline; phase reached: %s", key.Name, reached)
			}
			return nil, status.Errorf(codes.Canceled, "the caller went away; phase reached: %s", reached)
		}
	}
}

func (i *ideService) setStarted(ctx context.Context, q *idev1.QueryOption, started bool) (*idev1.Response, error) {
	s := i.s
	if err := s.authorize(ctx, "patch", q.GetNamespace(), q.GetName()); err != nil {
		return nil, grpcError(err)
	}
	ws := &idev1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Namespace: q.GetNamespace(), Name: q.GetName()}}
	patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"spec":{"started":%t}}`, started))
	c, err := s.asCaller(ctx)
	if err != nil {
		return nil, grpcError(err)
	}
	if err := c.Patch(ctx, ws, patch); err != nil {
		return nil, grpcError(asCallerErr(err))
	}
	verb := "stopping"
	if started {
		verb = "starting"
	}
	return &idev1.Response{Ok: true, Message: fmt.Sprintf("workspace %s is %s", q.GetName(), verb)}, nil
}

// StartSpace sets spec.started to true.
func (i *ideService) StartSpace(ctx context.Context, q *idev1.QueryOption) (*idev1.Response, error) {
	return i.setStarted(ctx, q, true)
}

// StopSpace sets spec.started to false.
func (i *ideService) StopSpace(ctx context.Context, q *idev1.QueryOption) (*idev1.Response, error) {
	return i.setStarted(ctx, q, false)
}

// DeleteSpace deletes the Workspace.
func (i *ideService) DeleteSpace(ctx context.Context, q *idev1.QueryOption) (*idev1.Response, error) {
	s := i.s
	if err := s.authorize(ctx, "delete", q.GetNamespace(), q.GetName()); err != nil {
		return nil, grpcError(err)
	}
	ws := &idev1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Namespace: q.GetNamespace(), Name: q.GetName()}}
	c, err := s.asCaller(ctx)
	if err != nil {
		return nil, grpcError(err)
	}
	if err := c.Delete(ctx, ws); err != nil {
		return nil, grpcError(asCallerErr(err))
	}
	return &idev1.Response{Ok: true, Message: fmt.Sprintf("workspace %s is being deleted", q.GetName())}, nil
}

// getWorkspace reads a Workspace for a caller who may get it.
func (s *Server) getWorkspace(ctx context.Context, ns, name string) (*idev1alpha1.Workspace, error) {
	if err := s.authorize(ctx, "get", ns, name); err != nil {
		return nil, err
	}
	ws := &idev1alpha1.Workspace{}
	if err := s.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, ws); err != nil {
		return nil, err
	}
	// What create-and-wait answered, a read right after it answers too.
	s.running(ctx, ws)
	return ws, nil
}

// running reports whether ws is Running, and when its Pod is Ready before
// the controller has written so, gives ws the status that write will
// report (s.WorkspaceStatus). Create-and-wait answers from it, and so do
// the reads after it, so that a caller never sees Running and then an
// older Starting. A Running status of an older generation may be the one
// before a stop: the start just asked for has not been seen yet.
func (s *Server) running(ctx context.Context, ws *idev1alpha1.Workspace) bool {
	if ws.Status.Phase == idev1alpha1.PhaseRunning && ws.Status.ObservedGeneration == ws.Generation {
		return true
	}
	if s.WorkspaceStatus == nil {
		return false
	}
	pod := &corev1.Pod{}
	if err := s.Cache.Get(ctx, client.ObjectKeyFromObject(ws), pod); err != nil {
		return false
	}
	if st, current := s.WorkspaceStatus(ws, pod); current && st.Phase == idev1alpha1.PhaseRunning {
		ws.Status = st
		return true
	}
	return false
}

func (i *ideService) get(ctx context.Context, q *idev1.QueryOption) (*idev1alpha1.Workspace, error) {
	ws, err := i.s.getWorkspace(ctx, q.GetNamespace(), q.GetName())
	if err != nil {
		return nil, grpcError(err)
	}
	return ws, nil
}

// GetPodSpaceStatus reports the phase and why.
func (i *ideService) GetPodSpaceStatus(ctx context.Context, q *idev1.QueryOption) (*idev1.PodStatus, error) {
	ws, err := i.get(ctx, q)
	if err != nil {
		return nil, err
	}
	return &idev1.PodStatus{Phase: string(ws.Status.Phase), Reason: ws.Status.Reason, Message: ws.Status.Message}, nil
}

// GetPodSpaceInfo reports where the IDE runs.
func (i *ideService) GetPodSpaceInfo(ctx context.Context, q *idev1.QueryOption) (*idev1.PodSpaceInfo, error) {
	ws, err := i.get(ctx, q)
	if err != nil {
		return nil, err
	}
	return info(ws), nil
}
