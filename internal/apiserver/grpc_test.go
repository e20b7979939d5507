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
	"context"
	"crypto/tls"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
	"github.com/kubeforge/kubeforge/controllers/workspace"
	"github.com/kubeforge/kubeforge/internal/apiserver"
	"github.com/kubeforge/kubeforge/internal/apiserver/idev1"
	"github.com/kubeforge/kubeforge/internal/proof"
)

func ideClient() (idev1.CloudIdeServiceClient, *grpc.ClientConn) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{
		InsecureSkipVerify: true, //nolint:gosec // the server's certificate is self-signed
	})))
	Expect(err).NotTo(HaveOccurred())
	return idev1.NewCloudIdeServiceClient(conn), conn
}

func as(token string, timeout time.Duration) (context.Context, context.CancelFunc) {
	c := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
	return context.WithTimeout(c, timeout)
}

func code(err error) codes.Code { return status.Code(err) }

// markRunning plays the Workspace controller: the IDE answers.
func markRunning(ns, name string) {
	Eventually(func() error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			ws := &idev1alpha1.Workspace{}
			if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, ws); err != nil {
				return err
			}
			ws.Status.Phase, ws.Status.NodeName, ws.Status.PodIP = idev1alpha1.PhaseRunning, "node-1", "10.1.2.3"
			ws.Status.ObservedGeneration = ws.Generation
			ws.Status.URL = fmt.Sprintf("http://%s.%s.svc:8080", name, ns)
			return k8sClient.Status().Update(ctx, ws)
		})
	}).Should(Succeed())
}

var _ = Describe("gRPC API for Workspaces", Ordered, func() {
	var dev, viewer string
	var ide idev1.CloudIdeServiceClient
	BeforeAll(func() {
		dev = caller("ide", "dev", rule("ide.kubeforge.io", "workspaces", "create", "get", "patch", "delete"))
		viewer = caller("ide", "viewer", rule("ide.kubeforge.io", "workspaces", "get"))
		var conn *grpc.ClientConn
		ide, conn = ideClient()
		DeferCleanup(conn.Close)
	})

	It("should refuse calls without a token (UNAUTHENTICATED) and beyond RBAC (PERMISSION_DENIED)", func() {
		_, err := ide.GetPodSpaceStatus(ctx, &idev1.QueryOption{Namespace: "ide", Name: "x"})
		Expect(code(err)).To(Equal(codes.Unauthenticated))
		c, cancel := as("garbage", 10*time.Second)
		defer cancel()
		_, err = ide.GetPodSpaceStatus(c, &idev1.QueryOption{Namespace: "ide", Name: "x"})
		Expect(code(err)).To(Equal(codes.Unauthenticated))
		c2, cancel2 := as(viewer, 10*time.Second)
		defer cancel2()
		_, err = ide.DeleteSpace(c2, &idev1.QueryOption{Namespace: "ide", Name: "x"})
		Expect(code(err)).To(Equal(codes.PermissionDenied))
		Expect(err.Error()).To(ContainSubstring("may not delete workspaces.ide.kubeforge.io"))
		_, err = ide.GetPodSpaceStatus(c2, &idev1.QueryOption{Namespace: "other", Name: "x"})
		Expect(code(err)).To(Equal(codes.PermissionDenied), "allowed in ide, not in other")
	})

	It("should create a workspace and return when it is Running, then start, stop, describe and delete it", func() {
		done := make(chan *idev1.PodSpaceInfo, 1)
		go func() {
			defer GinkgoRecover()
			c, cancel := as(dev, 30*time.Second)
			defer cancel()
			info, err := ide.CreateSpaceAndWaitForRunning(c, &idev1.PodInfo{Namespace: "ide", Name: "alice", User: "alice",
				Cpu: "1", Memory: "2Gi", Storage: "5Gi", Env: map[string]string{"THEME": "dark"}})
			Expect(err).NotTo(HaveOccurred())
			done <- info
		}()
		ws := &idev1alpha1.Workspace{}
		Eventually(func() error { return k8sClient.Get(ctx, types.NamespacedName{Namespace: "ide", Name: "alice"}, ws) }).Should(Succeed())
		Expect(ws.Spec.Image).To(Equal(idev1alpha1.WorkspaceDefaultImage), "the webhook defaulted it")
		Expect(ws.Spec.Storage.Size.String()).To(Equal("5Gi"))
		Expect(ws.Spec.Resources.Limits.Memory().String()).To(Equal("2Gi"))
		Consistently(done, "1s").ShouldNot(Receive(), "it waits while the workspace is not Running")
		markRunning("ide", "alice")
		var info *idev1.PodSpaceInfo
		Eventually(done).Should(Receive(&info))
		Expect(info.GetPhase()).To(Equal("Running"))
		Expect(info.GetNodeName()).To(Equal("node-1"))
		Expect(info.GetPodIp()).To(Equal("10.1.2.3"))
		Expect(info.GetPort()).To(Equal(int32(8080)))

		c, cancel := as(dev, 10*time.Second)
		defer cancel()
		start := time.Now()
		again, err := ide.CreateSpaceAndWaitForRunning(c, &idev1.PodInfo{Namespace: "ide", Name: "alice"})
		Expect(err).NotTo(HaveOccurred())
		Expect(again.GetUrl()).To(Equal("http://alice.ide.svc:8080"))
		Expect(time.Since(start)).To(BeNumerically("<", 2*time.Second), "a Running workspace returns at once")

		st, err := ide.GetPodSpaceStatus(c, &idev1.QueryOption{Namespace: "ide", Name: "alice"})
		Expect(err).NotTo(HaveOccurred())
		Expect(st.GetPhase()).To(Equal("Running"))
		got, err := ide.GetPodSpaceInfo(c, &idev1.QueryOption{Namespace: "ide", Name: "alice"})
		Expect(err).NotTo(HaveOccurred())
		Expect(got.GetNodeName()).To(Equal("node-1"))

		_, err = ide.StopSpace(c, &idev1.QueryOption{Namespace: "ide", Name: "alice"})
		Expect(err).NotTo(HaveOccurred())
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: "ide", Name: "alice"}, ws)).To(Succeed())
		Expect(*ws.Spec.Started).To(BeFalse())
		_, err = ide.StartSpace(c, &idev1.QueryOption{Namespace: "ide", Name: "alice"})
		Expect(err).NotTo(HaveOccurred())
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: "ide", Name: "alice"}, ws)).To(Succeed())
		Expect(*ws.Spec.Started).To(BeTrue())
		_, err = ide.DeleteSpace(c, &idev1.QueryOption{Namespace: "ide", Name: "alice"})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, types.NamespacedName{Namespace: "ide", Name: "alice"}, ws))
		}).Should(BeTrue())
		_, err = ide.GetPodSpaceStatus(c, &idev1.QueryOption{Namespace: "ide", Name: "alice"})
		Expect(code(err)).To(Equal(codes.NotFound))
	})

	It("should answer Running once the Workspace's current Pod is Ready, before the controller writes the status", func() {
		done := make(chan *idev1.PodSpaceInfo, 1)
		go func() {
			defer GinkgoRecover()
			c, cancel := as(dev, 30*time.Second)
			defer cancel()
			info, err := ide.CreateSpaceAndWaitForRunning(c, &idev1.PodInfo{Namespace: "ide", Name: "quick", User: "quick"})
			Expect(err).NotTo(HaveOccurred())
			done <- info
		}()
		ws := &idev1alpha1.Workspace{}
		Eventually(func() error { return k8sClient.Get(ctx, types.NamespacedName{Namespace: "ide", Name: "quick"}, ws) }).Should(Succeed())
		// Play the controller and the kubelet: the Pod the spec asks for,
		// owned by the Workspace — first one from an older spec, Ready.
		stale := ws.DeepCopy()
		stale.Spec.Image = "registry.example.com/old-ide:1"
		pod := workspace.Pod(stale)
		pod.Spec.NodeName = "node-2"
		Expect(controllerutil.SetControllerReference(ws, pod, k8sClient.Scheme())).To(Succeed())
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		sealAs(ws, pod)
		ready := func(p *corev1.Pod) {
			p.Status.PodIP = "10.9.8.7"
			p.Status.Phase = corev1.PodRunning
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
			Expect(k8sClient.Status().Update(ctx, p)).To(Succeed())
		}
		ready(pod)
		Consistently(done, "1s").ShouldNot(Receive(), "a Ready Pod from an older spec is not the Workspace running")

		Expect(k8sClient.Delete(ctx, pod, client.GracePeriodSeconds(0))).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{}))
		}).Should(BeTrue())
		current := ws.DeepCopy()
		idev1alpha1.DefaultWorkspace(current)
		pod = workspace.Pod(current)
		pod.Spec.NodeName = "node-2"
		Expect(controllerutil.SetControllerReference(ws, pod, k8sClient.Scheme())).To(Succeed())
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		sealAs(ws, pod)
		Consistently(done, "1s").ShouldNot(Receive(), "not Ready yet")
		ready(pod)
		var info *idev1.PodSpaceInfo
		Eventually(done).Should(Receive(&info))
		Expect(info.GetPhase()).To(Equal("Running"))
		Expect(info.GetPodIp()).To(Equal("10.9.8.7"))
		Expect(info.GetNodeName()).To(Equal("node-2"))
		Expect(info.GetUrl()).To(Equal("http://quick.ide.svc:8080"))
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: "ide", Name: "quick"}, ws)).To(Succeed())
		Expect(ws.Status.Phase).To(BeEmpty(), "nothing wrote the status: the answer came from the Pod")

		// The reads right after it agree, though the stored status is still
		// empty: a caller never sees Running and then an older phase.
		c, cancel := as(dev, 10*time.Second)
		defer cancel()
		st, err := ide.GetPodSpaceStatus(c, &idev1.QueryOption{Namespace: "ide", Name: "quick"})
		Expect(err).NotTo(HaveOccurred())
		Expect(st.GetPhase()).To(Equal("Running"))
		again, err := ide.GetPodSpaceInfo(c, &idev1.QueryOption{Namespace: "ide", Name: "quick"})
		Expect(err).NotTo(HaveOccurred())
		Expect(again.GetPhase()).To(Equal("Running"))
		Expect(again.GetPodIp()).To(Equal("10.9.8.7"))
	})

	It("should end a wait at the caller's deadline with DEADLINE_EXCEEDED and the phase reached", func() {
		c, cancel := as(dev, 2*time.Second)
		defer cancel()
		_, err := ide.CreateSpaceAndWaitForRunning(c, &idev1.PodInfo{Namespace: "ide", Name: "slow"})
		Expect(code(err)).To(Equal(codes.DeadlineExceeded))
		Expect(status.Convert(err).Message()).To(ContainSubstring("phase reached"))
	})

	It("should refuse a bad spec with INVALID_ARGUMENT", func() {
		c, cancel := as(dev, 10*time.Second)
		defer cancel()
		_, err := ide.CreateSpaceAndWaitForRunning(c, &idev1.PodInfo{Namespace: "ide", Name: "bad", Memory: "lots"})
		Expect(code(err)).To(Equal(codes.InvalidArgument))
		_, err = ide.CreateSpaceAndWaitForRunning(c, &idev1.PodInfo{Namespace: "ide", Name: "bad", Env: map[string]string{"PORT": "1"}})
		Expect(code(err)).To(Equal(codes.InvalidArgument), "the webhook's field error")
		Expect(err.Error()).To(ContainSubstring("spec.env"))
	})

	It("should refuse a message larger than 1 MiB, as REST refuses such a body (RESOURCE_EXHAUSTED)", func() {
		c, cancel := as(dev, 10*time.Second)
		defer cancel()
		_, err := ide.CreateSpaceAndWaitForRunning(c, &idev1.PodInfo{Namespace: "ide", Name: "huge",
			Env: map[string]string{"BIG": strings.Repeat("x", apiserver.MaxBodyBytes+1)}})
		Expect(code(err)).To(Equal(codes.ResourceExhausted))
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, types.NamespacedName{Namespace: "ide", Name: "huge"}, &idev1alpha1.Workspace{}))).To(BeTrue())
	})

	It("should hold at most the per-caller number of waits open for one caller (RESOURCE_EXHAUSTED past it), and name the caller as the workspace's creator", func() {
		greedy := caller("ide", "greedy", rule("ide.kubeforge.io", "workspaces", "create", "get"))
		held, release := context.WithCancel(ctx)
		var wg sync.WaitGroup
		returned := make(chan codes.Code, maxWaits)
		for range maxWaits {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := metadata.AppendToOutgoingContext(held, "authorization", "Bearer "+greedy)
				_, err := ide.CreateSpaceAndWaitForRunning(c, &idev1.PodInfo{Namespace: "ide", Name: "held"})
				returned <- code(err)
			}()
		}
		// All of them wait (none came back): each holds a slot.
		Consistently(returned, "3s").ShouldNot(Receive())
		c, cancel := as(greedy, 5*time.Second)
		defer cancel()
		_, err := ide.CreateSpaceAndWaitForRunning(c, &idev1.PodInfo{Namespace: "ide", Name: "held"})
		Expect(code(err)).To(Equal(codes.ResourceExhausted))
		Expect(status.Convert(err).Message()).To(ContainSubstring(fmt.Sprintf("has %d create-and-wait calls open", maxWaits)))

		other, cancelOther := as(dev, 2*time.Second)
		defer cancelOther()
		_, err = ide.CreateSpaceAndWaitForRunning(other, &idev1.PodInfo{Namespace: "ide", Name: "held"})
		Expect(code(err)).To(Equal(codes.DeadlineExceeded), "another caller still waits")

		release()
		wg.Wait()
		close(returned)
		for c := range returned {
			Expect(c).To(Equal(codes.Canceled), "a held wait ended when its caller went away")
		}
		Eventually(func() codes.Code {
			c, cancel := as(greedy, time.Second)
			defer cancel()
			_, err := ide.CreateSpaceAndWaitForRunning(c, &idev1.PodInfo{Namespace: "ide", Name: "held"})
			return code(err)
		}).Should(Equal(codes.DeadlineExceeded), "the slots are free again once the waits ended")

		ws := &idev1alpha1.Workspace{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: "ide", Name: "held"}, ws)).To(Succeed())
		Expect(ws.Annotations).To(HaveKeyWithValue(proof.CreatedByAnnotation, "system:serviceaccount:ide:greedy"))
	})

	It("should serve 200 concurrent waits and leave no goroutine behind, returned or abandoned", func() {
		// Ten callers: twenty waits and five abandoned ones each, within the
		// per-caller cap.
		callers := make([]string, 10)
		for i := range callers {
			callers[i] = caller("ide", fmt.Sprintf("many-%d", i), rule("ide.kubeforge.io", "workspaces", "create", "get"))
		}
		runtime.GC()
		before := runtime.NumGoroutine()
		names := make([]string, 10)
		for i := range names {
			names[i] = fmt.Sprintf("many-%d", i)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 200)
		for i := range 200 {
			wg.Add(1)
			go func(name, token string) {
				defer wg.Done()
				c, cancel := as(token, 60*time.Second)
				defer cancel()
				_, err := ide.CreateSpaceAndWaitForRunning(c, &idev1.PodInfo{Namespace: "ide", Name: name})
				errs <- err
			}(names[i%len(names)], callers[i/20])
		}
		// And 50 callers that go away before their workspace runs.
		abandon, stop := context.WithCancel(ctx)
		for i := range 50 {
			wg.Add(1)
			go func(token string) {
				defer wg.Done()
				c := metadata.AppendToOutgoingContext(abandon, "authorization", "Bearer "+token)
				_, err := ide.CreateSpaceAndWaitForRunning(c, &idev1.PodInfo{Namespace: "ide", Name: "never"})
				Expect(code(err)).To(Equal(codes.Canceled))
			}(callers[i/5])
		}
		for _, n := range names {
			Eventually(func() error {
				return k8sClient.Get(ctx, types.NamespacedName{Namespace: "ide", Name: n}, &idev1alpha1.Workspace{})
			}).Should(Succeed())
		}
		time.Sleep(time.Second)
		stop()
		for _, n := range names {
			markRunning("ide", n)
		}
		wg.Wait()
		close(errs)
		n := 0
		for err := range errs {
			Expect(err).NotTo(HaveOccurred())
			n++
		}
		Expect(n).To(Equal(200))
		// The informer handlers and the server's stream goroutines are gone:
		// back to where we started (the client connection's few aside).
		Eventually(func() int { runtime.GC(); return runtime.NumGoroutine() }, "10s", "200ms").Should(BeNumerically("<=", before+10))
	})
})
