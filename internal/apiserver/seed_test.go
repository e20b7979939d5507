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

package apiserver_test

import (
	"crypto/tls"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"k8s.io/apimachinery/pkg/types"

	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/apiserver/seedpb"
)

// The seed system's clients, generated from api/proto/pb/cloudide.proto
// (its proto, unchanged), with only their dial options set: TLS and a
// bearer token.
var _ = Describe("the seed cloud-IDE service (pb.CloudIdeService)", Ordered, func() {
	var dev, viewer string
	var seed seedpb.CloudIdeServiceClient
	BeforeAll(func() {
		dev = caller("ide", "seed-dev", rule("ide.kubeforge.io", "workspaces", "create", "get", "patch"))
		viewer = caller("ide", "seed-viewer", rule("ide.kubeforge.io", "workspaces", "get"))
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{
			InsecureSkipVerify: true, //nolint:gosec // the server's certificate is self-signed
		})))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(conn.Close)
		seed = seedpb.NewCloudIdeServiceClient(conn)
	})
	key := types.NamespacedName{Namespace: "ide", Name: "seedling"}
	q := &seedpb.QueryOption{Namespace: "ide", Name: "seedling"}

	It("should refuse a call without a token, and a port that is not one", func() {
		_, err := seed.GetPodSpaceStatus(ctx, q)
		Expect(code(err)).To(Equal(codes.Unauthenticated))
		c, cancel := as(dev, 10*time.Second)
		defer cancel()
		_, err = seed.CreateSpaceAndWaitForRunning(c, &seedpb.PodInfo{Namespace: "ide", Name: "seedling", Port: 70000})
		Expect(code(err)).To(Equal(codes.InvalidArgument))
		_, err = seed.CreateSpaceAndWaitForRunning(c, &seedpb.PodInfo{Namespace: "ide", Name: "seedling",
			ResourceLimit: &seedpb.ResourceLimit{Memory: "lots"}})
		Expect(code(err)).To(Equal(codes.InvalidArgument))
		Expect(err.Error()).To(ContainSubstring(`resourceLimit.Memory "lots"`))
	})

	It("should answer status 0 for a workspace that does not exist", func() {
		c, cancel := as(dev, 10*time.Second)
		defer cancel()
		st, err := seed.GetPodSpaceStatus(c, q)
		Expect(err).NotTo(HaveOccurred())
		Expect(st.GetStatus()).To(Equal(int32(0)))
	})

	It("should create with the image, port and resourceLimit given, and return the node, IP and port once Running", func() {
		done := make(chan *seedpb.PodSpaceInfo, 1)
		go func() {
			defer GinkgoRecover()
			c, cancel := as(dev, 30*time.Second)
			defer cancel()
			info, err := seed.CreateSpaceAndWaitForRunning(c, &seedpb.PodInfo{Namespace: "ide", Name: "seedling",
				Image: "example.test/ide:1", Port: 9000,
				ResourceLimit: &seedpb.ResourceLimit{Cpu: "500m", Memory: "1Gi", Storage: "2Gi"}})
			Expect(err).NotTo(HaveOccurred())
			done <- info
		}()
		ws := &idev1alpha1.Workspace{}
		Eventually(func() error { return k8sClient.Get(ctx, key, ws) }).Should(Succeed())
		Expect(ws.Spec.Image).To(Equal("example.test/ide:1"))
		Expect(ws.Spec.Port).To(Equal(int32(9000)))
		Expect(ws.Spec.Resources.Limits.Cpu().String()).To(Equal("500m"))
		Expect(ws.Spec.Resources.Requests.Memory().String()).To(Equal("1Gi"))
		Expect(ws.Spec.Storage.Size.String()).To(Equal("2Gi"))
		Consistently(done, "1s").ShouldNot(Receive(), "it waits while the workspace is not Running")
		markRunning("ide", "seedling")
		var info *seedpb.PodSpaceInfo
		Eventually(done).Should(Receive(&info))
		Expect(info.GetNodeName()).To(Equal("node-1"))
		Expect(info.GetIp()).To(Equal("10.1.2.3"))
		Expect(info.GetPort()).To(Equal(int32(9000)))

		c, cancel := as(viewer, 10*time.Second)
		defer cancel()
		st, err := seed.GetPodSpaceStatus(c, q)
		Expect(err).NotTo(HaveOccurred())
		Expect(st.GetStatus()).To(Equal(int32(1)))
		Expect(st.GetMessage()).To(Equal("Running"))
		got, err := seed.GetPodSpaceInfo(c, q)
		Expect(err).NotTo(HaveOccurred())
		Expect(got.GetIp()).To(Equal("10.1.2.3"))
		Expect(got.GetPort()).To(Equal(int32(9000)))
	})

	It("should stop the IDE and keep the workspace on deleteSpace (400 without patch), and start it again on create", func() {
		c, cancel := as(viewer, 10*time.Second)
		defer cancel()
		resp, err := seed.DeleteSpace(c, q)
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.GetStatus()).To(Equal(int32(400)))
		Expect(resp.GetMessage()).To(ContainSubstring("may not patch workspaces.ide.kubeforge.io"))

		c2, cancel2 := as(dev, 30*time.Second)
		defer cancel2()
		resp, err = seed.DeleteSpace(c2, q)
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.GetStatus()).To(Equal(int32(200)), resp.GetMessage())
		ws := &idev1alpha1.Workspace{}
		Expect(k8sClient.Get(ctx, key, ws)).To(Succeed(), "the workspace and its home volume stay")
		Expect(*ws.Spec.Started).To(BeFalse())

		done := make(chan *seedpb.PodSpaceInfo, 1)
		go func() {
			defer GinkgoRecover()
			info, err := seed.CreateSpaceAndWaitForRunning(c2, &seedpb.PodInfo{Namespace: "ide", Name: "seedling", Port: 9000})
			Expect(err).NotTo(HaveOccurred())
			done <- info
		}()
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, key, ws)).To(Succeed())
			g.Expect(*ws.Spec.Started).To(BeTrue())
		}).Should(Succeed())
		Consistently(done, "1s").ShouldNot(Receive(), "the Running status from before the stop does not count")
		markRunning("ide", "seedling")
		Eventually(done).Should(Receive())

		resp, err = seed.DeleteSpace(c2, &seedpb.QueryOption{Namespace: "ide", Name: "nobody"})
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.GetStatus()).To(Equal(int32(400)))
		Expect(resp.GetMessage()).To(ContainSubstring("not found"))
	})
})
