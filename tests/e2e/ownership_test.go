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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
	networkingv1alpha1 "github.com/kubeforge/kubeforge/api/networking/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/test/testenv"
)

const ownershipNS = "e2e-ownership"

// conflictOf waits for obj's Degraded condition to say NameConflict and
// returns its message.
func conflictOf(obj client.Object, conds func() []metav1.Condition) string {
	var msg string
	Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
		c := meta.FindStatusCondition(conds(), "Degraded")
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal("NameConflict"))
		msg = c.Message
	}).Should(Succeed())
	return msg
}

// settledCopy reads obj after the cluster's own controllers had a moment
// with it (a claim's binder): what it is before kubeforge comes.
func settledCopy(obj client.Object) client.Object {
	time.Sleep(2 * time.Second)
	got := obj.DeepCopyObject().(client.Object)
	Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), got)).To(Succeed())
	return got
}

// warned waits for a Warning event with reason on the object named name.
func warned(name, reason string) {
	Eventually(func(g Gomega) []string {
		reasons, err := testenv.WarningReasons(ctx, k8sClient, ownershipNS, name)
		g.Expect(err).NotTo(HaveOccurred())
		return reasons
	}).Should(ContainElement(reason))
}

// The user's objects kubeforge must never take: made before the kubeforge
// object that wants their names, they are exactly as they were after it
// came and went — with the garbage collector of a real control plane.
var _ = Describe("Ownership", Ordered, Label("ownership"), func() {
	BeforeAll(func() {
		kubectlEventually("create", "namespace", ownershipNS)
	})

	It("should leave a user's ConfigMap named like a Balancer's proxy alone, through the Balancer's life", func() {
		mine := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "lb-proxy", Namespace: ownershipNS}, Data: map[string]string{"keep": "me"}}
		Expect(k8sClient.Create(ctx, mine)).To(Succeed())
		before := settledCopy(mine)

		lb := &networkingv1alpha1.Balancer{ObjectMeta: metav1.ObjectMeta{Name: "lb", Namespace: ownershipNS},
			Spec: networkingv1alpha1.BalancerSpec{
				Selector: map[string]string{"app": "lb"},
				Backends: []networkingv1alpha1.BalancerBackend{{Name: "v1", Weight: ptr.To[int32](1)}},
				Ports:    []networkingv1alpha1.BalancerPort{{Name: "http", Port: 80}},
			}}
		Expect(k8sClient.Create(ctx, lb)).To(Succeed())
		Expect(conflictOf(lb, func() []metav1.Condition { return lb.Status.Conditions })).To(
			ContainSubstring("ConfigMap/lb-proxy exists and was not created by this Balancer"))
		warned("lb", "NameConflict")
		// What came before the ConfigMap is the Balancer's: the backend Service.
		backend := types.NamespacedName{Namespace: ownershipNS, Name: "lb-v1"}
		Expect(k8sClient.Get(ctx, backend, &corev1.Service{})).To(Succeed())

		Expect(k8sClient.Delete(ctx, lb)).To(Succeed())
		// The garbage collector takes what the Balancer owned...
		Eventually(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, backend, &corev1.Service{})) }, time.Minute).Should(BeTrue())
		// ...and not the user's ConfigMap.
		Consistently(func(g Gomega) client.Object {
			got := &corev1.ConfigMap{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(mine), got)).To(Succeed())
			return got
		}, "3s").Should(Equal(before), "byte-identical: not written at all")
	})

	It("should leave a user's volume claim named like a Workspace's home alone, and start no Pod on it", func() {
		mine := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "dev-home", Namespace: ownershipNS},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				// A class no provisioner serves: it stays Pending and takes
				// none of the cluster's volumes from the other specs.
				StorageClassName: ptr.To("users-own"),
				Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			}}
		Expect(k8sClient.Create(ctx, mine)).To(Succeed())
		before := settledCopy(mine)

		ws := &idev1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "dev", Namespace: ownershipNS}}
		ws.Spec.User = "dev"
		Expect(k8sClient.Create(ctx, ws)).To(Succeed())
		Expect(conflictOf(ws, func() []metav1.Condition { return ws.Status.Conditions })).To(
			ContainSubstring("PersistentVolumeClaim/dev-home exists and was not created by this Workspace"))
		warned("dev", "NameConflict")
		Consistently(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, types.NamespacedName{Namespace: ownershipNS, Name: "dev"}, &corev1.Pod{}))
		}, "3s").Should(BeTrue(), "no IDE Pod mounts the user's claim")

		Expect(k8sClient.Delete(ctx, ws)).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(ws), ws)) }).Should(BeTrue())
		Consistently(func(g Gomega) client.Object {
			got := &corev1.PersistentVolumeClaim{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(mine), got)).To(Succeed())
			return got
		}, "5s").Should(Equal(before), "byte-identical: not written at all")
	})
})
