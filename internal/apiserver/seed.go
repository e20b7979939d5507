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
	"context"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/apiserver/seedpb"
)

// Response statuses of the seed service.
const (
	seedOK     = 200
	seedFailed = 400
)

// seedService serves the seed cloud-IDE system's pb.CloudIdeService on
// Workspaces, with the same authentication and RBAC as kubeforge.ide.v1
// (docs/api.md, "The seed service").
type seedService struct {
	seedpb.UnimplementedCloudIdeServiceServer
	s *Server
}

// seedWorkspace builds the Workspace a seed PodInfo asks for: its image
// and port, and its resourceLimit as the IDE container's requests and
// limits (cpu, Memory) and the home volume's size (Storage).
func seedWorkspace(in *seedpb.PodInfo) (*idev1alpha1.Workspace, error) {
	ws := &idev1alpha1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Namespace: in.GetNamespace(), Name: in.GetName()},
		Spec:       idev1alpha1.WorkspaceSpec{Image: in.GetImage()},
	}
	if p := in.GetPort(); p > 65535 {
		return nil, status.Errorf(codes.InvalidArgument, "port %d is not a TCP port (1-65535)", p)
	} else if p > 0 {
		ws.Spec.Port = int32(p)
	}
	lim := in.GetResourceLimit()
	if err := setSizes(ws, sized{"resourceLimit.cpu", lim.GetCpu()}, sized{"resourceLimit.Memory", lim.GetMemory()},
		sized{"resourceLimit.Storage", lim.GetStorage()}); err != nil {
		return nil, err
	}
	return ws, nil
}

// CreateSpaceAndWaitForRunning creates the Workspace, or starts the one of
// that name (a seed client's deleteSpace only stopped it), and waits until
// the IDE answers.
func (i *seedService) CreateSpaceAndWaitForRunning(ctx context.Context, in *seedpb.PodInfo) (*seedpb.PodSpaceInfo, error) {
	ws, err := seedWorkspace(in)
	if err != nil {
		return nil, err
	}
	running, err := i.s.createAndWait(ctx, ws, true)
	if err != nil {
		return nil, err
	}
	out := info(running)
	return &seedpb.PodSpaceInfo{NodeName: out.GetNodeName(), Ip: out.GetPodIp(), Port: out.GetPort()}, nil
}

// DeleteSpace stops the IDE and keeps its files: the seed system deleted
// the Pod and kept the volume, which is a Workspace with started false.
// Failures are status 400 with the reason, as the seed answered them.
func (i *seedService) DeleteSpace(ctx context.Context, q *seedpb.QueryOption) (*seedpb.Response, error) {
	s := i.s
	fail := func(err error) (*seedpb.Response, error) {
		return &seedpb.Response{Status: seedFailed, Message: status.Convert(grpcError(err)).Message()}, nil
	}
	if err := s.authorize(ctx, "patch", q.GetNamespace(), q.GetName()); err != nil {
		return fail(err)
	}
	c, err := s.asCaller(ctx)
	if err != nil {
		return fail(err)
	}
	ws := &idev1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Namespace: q.GetNamespace(), Name: q.GetName()}}
	if err := c.Patch(ctx, ws, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"started":false}}`))); err != nil {
		return fail(asCallerErr(err))
	}
	return &seedpb.Response{Status: seedOK, Message: fmt.Sprintf("workspace %s is stopping; its files are kept", q.GetName())}, nil
}

// GetPodSpaceStatus is status 1 and the phase for a Workspace that
// exists, status 0 for one that does not.
func (i *seedService) GetPodSpaceStatus(ctx context.Context, q *seedpb.QueryOption) (*seedpb.PodStatus, error) {
	ws, err := i.s.getWorkspace(ctx, q.GetNamespace(), q.GetName())
	if apierrors.IsNotFound(err) {
		return &seedpb.PodStatus{Status: 0, Message: fmt.Sprintf("workspace %s does not exist", q.GetName())}, nil
	}
	if err != nil {
		return nil, grpcError(err)
	}
	return &seedpb.PodStatus{Status: 1, Message: string(ws.Status.Phase)}, nil
}

// GetPodSpaceInfo is where the IDE runs.
func (i *seedService) GetPodSpaceInfo(ctx context.Context, q *seedpb.QueryOption) (*seedpb.PodSpaceInfo, error) {
	ws, err := i.s.getWorkspace(ctx, q.GetNamespace(), q.GetName())
	if err != nil {
		return nil, grpcError(err)
	}
	out := info(ws)
	return &seedpb.PodSpaceInfo{NodeName: out.GetNodeName(), Ip: out.GetPodIp(), Port: out.GetPort()}, nil
}
