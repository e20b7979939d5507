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

package e2e

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
)

const workspaceNS = "e2e-workspace"

func alice(g Gomega) *idev1alpha1.Workspace {
	ws := &idev1alpha1.Workspace{}
	g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: workspaceNS, Name: "alice"}, ws)).To(Succeed())
	g.Expect(ws.Status.ObservedGeneration).To(Equal(ws.Generation))
	return ws
}

func home(g Gomega) *corev1.PersistentVolumeClaim {
	pvc := &corev1.PersistentVolumeClaim{}
	g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: workspaceNS, Name: "alice-home"}, pvc)).To(Succeed())
	return pvc
}

func idePod(g Gomega) *corev1.Pod {
	pod := &corev1.Pod{}
	g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: workspaceNS, Name: "alice"}, pod)).To(Succeed())
	return pod
}

var _ = Describe("Workspace", Ordered, Label("workspace"), func() {
	var volume string

	BeforeAll(func() {
		kubectlEventually("create", "namespace", workspaceNS)
	})

	It("should turn Running when its Pod is Ready, with its startup time", func() {
		_, err := kubectl("apply", "-n", workspaceNS, "-f", "config/samples/ide_v1alpha1_workspace.yaml")
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			ws := alice(g)
			g.Expect(ws.Status.Phase).To(Equal(idev1alpha1.PhaseRunning))
			g.Expect(ws.Status.LastStartupSeconds).NotTo(BeNil())
			g.Expect(ws.Status.NodeName).NotTo(BeEmpty())
			g.Expect(ws.Status.URL).To(Equal("http://alice." + workspaceNS + ".svc:8080"))
		}).Should(Succeed())
		pvc := home(Default)
		Expect(pvc.Status.Phase).To(Equal(corev1.ClaimBound))
		volume = pvc.Spec.VolumeName
		GinkgoWriter.Printf("lastStartupSeconds=%d volume=%s\n", *alice(Default).Status.LastStartupSeconds, volume)

		out, err := kubectl("get", "ws", "-n", workspaceNS, "-l", "ide.kubeforge.io/user=alice", "--no-headers")
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(MatchRegexp(`^alice\s+Running\s+http://alice\.` + workspaceNS + `\.svc:8080\s+alice\s+`))
	})

	It("should stop, keeping the home volume", func() {
		_, err := kubectl("patch", "-n", workspaceNS, "ws/alice", "--type", "merge", "-p", `{"spec":{"started":false}}`)
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) idev1alpha1.WorkspacePhase { return alice(g).Status.Phase }).Should(Equal(idev1alpha1.PhaseStopped))
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, types.NamespacedName{Namespace: workspaceNS, Name: "alice"}, &corev1.Pod{}))
		}).Should(BeTrue())
		pvc := home(Default)
		Expect(pvc.DeletionTimestamp).To(BeNil())
		Expect(pvc.Spec.VolumeName).To(Equal(volume))
	})

	It("should start again on the same home volume", func() {
		_, err := kubectl("patch", "-n", workspaceNS, "ws/alice", "--type", "merge", "-p", `{"spec":{"started":true}}`)
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) idev1alpha1.WorkspacePhase { return alice(g).Status.Phase }).Should(Equal(idev1alpha1.PhaseRunning))
		Expect(idePod(Default).Spec.Volumes[0].PersistentVolumeClaim.ClaimName).To(Equal("alice-home"))
		Expect(home(Default).Spec.VolumeName).To(Equal(volume))
	})

	It("should delete the Pod, Service and home volume with the Workspace", func() {
		_, err := kubectl("delete", "-n", workspaceNS, "ws/alice", "--wait=true")
		Expect(err).NotTo(HaveOccurred())
		for name, obj := range map[string]client.Object{
			"alice": &corev1.Pod{}, "alice ": &corev1.Service{}, "alice-home": &corev1.PersistentVolumeClaim{},
		} {
			key := types.NamespacedName{Namespace: workspaceNS, Name: strings.TrimSpace(name)}
			Eventually(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, key, obj)) }).Should(BeTrue(), "%T %s", obj, key.Name)
		}
	})
})
