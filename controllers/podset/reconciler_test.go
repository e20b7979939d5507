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

package podset_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/conditions"
	"github.com/kubeforge/kubeforge/internal/test/testenv"
)

func newPodSet(name string, replicas int32) *appsv1alpha1.PodSet {
	return &appsv1alpha1.PodSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: appsv1alpha1.PodSetSpec{
			Replicas: &replicas,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}},
			},
		},
	}
}

func getDeployment(name string) func(g Gomega) *appsv1.Deployment {
	return func(g Gomega) *appsv1.Deployment {
		d := &appsv1.Deployment{}
		g.Expect(suite.Client.Get(suite.Ctx, types.NamespacedName{Namespace: "default", Name: name}, d)).To(Succeed())
		return d
	}
}

func condition(name, condType string) func(g Gomega) *metav1.Condition {
	return func(g Gomega) *metav1.Condition {
		ps := &appsv1alpha1.PodSet{}
		g.Expect(suite.Client.Get(suite.Ctx, types.NamespacedName{Namespace: "default", Name: name}, ps)).To(Succeed())
		c := meta.FindStatusCondition(ps.Status.Conditions, condType)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.ObservedGeneration).To(Equal(ps.Generation))
		return c
	}
}

// settled waits until the controller has nothing left to do for the PodSet:
// its Deployment exists and its status describes the current generation.
func settled(name string) {
	Eventually(condition(name, conditions.Ready)).Should(Not(BeNil()))
	Eventually(getDeployment(name)).Should(Not(BeNil()))
	// Give the watch events of our own writes time to come back.
	Eventually(func() []string {
		before := suite.Counting.Writes()
		time.Sleep(300 * time.Millisecond)
		return suite.Counting.Writes()[len(before):]
	}).Should(BeEmpty())
}

var _ = Describe("PodSet Controller", func() {
	Context("When a PodSet is created", func() {
		It("should create a Deployment with the owner reference and the common labels", func() {
			ps := newPodSet("owned", 2)
			Expect(suite.Client.Create(suite.Ctx, ps)).To(Succeed())

			d := &appsv1.Deployment{}
			Eventually(func(g Gomega) { d = getDeployment("owned")(g) }).Should(Succeed())
			ref := metav1.GetControllerOf(d)
			Expect(ref).NotTo(BeNil())
			Expect(ref.Kind).To(Equal("PodSet"))
			Expect(ref.Name).To(Equal("owned"))
			Expect(ref.UID).To(Equal(ps.UID))
			Expect(*ref.BlockOwnerDeletion).To(BeTrue())
			Expect(d.Labels).To(HaveKeyWithValue("app.kubernetes.io/managed-by", "kubeforge"))
			Expect(d.Labels).To(HaveKeyWithValue("app.kubernetes.io/instance", "owned"))
			Expect(d.Labels).To(HaveKeyWithValue("app.kubernetes.io/component", "podset"))
			Expect(d.Spec.Template.Labels).To(HaveKeyWithValue(appsv1alpha1.PodSetNameLabel, "owned"))
			Expect(d.Spec.Template.Labels).To(HaveKeyWithValue("app", "owned"))
			Expect(*d.Spec.Replicas).To(Equal(int32(2)))

			// Server-side apply with one field owner.
			managers := map[string]bool{}
			for _, mf := range d.ManagedFields {
				managers[mf.Manager] = true
			}
			Expect(managers).To(HaveKey("kubeforge"))

			Eventually(func(g Gomega) string {
				got := &appsv1alpha1.PodSet{}
				g.Expect(suite.Client.Get(suite.Ctx, client.ObjectKeyFromObject(ps), got)).To(Succeed())
				return got.Status.Selector
			}).Should(Equal("apps.kubeforge.io/podset=owned"))
		})

		It("should make zero API writes when nothing changed", func() {
			Expect(suite.Client.Create(suite.Ctx, newPodSet("quiet", 3))).To(Succeed())
			settled("quiet")

			suite.Counting.Reset()
			req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: "quiet"}}
			for range 3 {
				res, err := suite.Reconciler.Reconcile(suite.Ctx, req)
				Expect(err).NotTo(HaveOccurred())
				Expect(res).To(Equal(ctrl.Result{}))
			}
			Expect(suite.Counting.Writes()).To(BeEmpty())
			// Nor does the running manager write anything on its own.
			Consistently(suite.Counting.Writes, "2s").Should(BeEmpty())
		})

		It("should repair a hand edit of the Deployment's replicas with one write", func() {
			Expect(suite.Client.Create(suite.Ctx, newPodSet("drift", 2))).To(Succeed())
			settled("drift")
			suite.Counting.Reset()

			d := &appsv1.Deployment{}
			Expect(suite.Client.Get(suite.Ctx, types.NamespacedName{Namespace: "default", Name: "drift"}, d)).To(Succeed())
			patch := client.MergeFrom(d.DeepCopy())
			d.Spec.Replicas = new(int32(7))
			Expect(suite.Client.Patch(suite.Ctx, d, patch)).To(Succeed())

			Eventually(func(g Gomega) int32 { return *getDeployment("drift")(g).Spec.Replicas }).Should(Equal(int32(2)))
			settled("drift")
			Expect(suite.Counting.Writes()).To(ConsistOf(ContainSubstring("apply")))
		})

		It("should recreate its Deployment when someone deletes it", func() {
			Expect(suite.Client.Create(suite.Ctx, newPodSet("recreate", 1))).To(Succeed())
			settled("recreate")
			old := getDeployment("recreate")(Default)
			Expect(suite.Client.Delete(suite.Ctx, old)).To(Succeed())
			Eventually(func(g Gomega) types.UID { return getDeployment("recreate")(g).UID }).ShouldNot(Equal(old.UID))
		})

		It("should follow the scale subresource", func() {
			ps := newPodSet("scaled", 1)
			Expect(suite.Client.Create(suite.Ctx, ps)).To(Succeed())
			settled("scaled")

			scale := &autoscalingv1.Scale{}
			Expect(suite.Client.SubResource("scale").Get(suite.Ctx, ps, scale)).To(Succeed())
			Expect(scale.Spec.Replicas).To(Equal(int32(1)))
			Expect(scale.Status.Selector).To(Equal("apps.kubeforge.io/podset=scaled"))
			scale.Spec.Replicas = 5
			Expect(suite.Client.SubResource("scale").Update(suite.Ctx, ps, client.WithSubResourceBody(scale))).To(Succeed())

			Eventually(func(g Gomega) int32 { return *getDeployment("scaled")(g).Spec.Replicas }).Should(Equal(int32(5)))
		})

		It("should report readiness and the pods of its Deployment's own ReplicaSets, not pods planted with its labels", func() {
			ps := newPodSet("observed", 2)
			Expect(suite.Client.Create(suite.Ctx, ps)).To(Succeed())
			Eventually(condition("observed", conditions.Ready)).Should(HaveField("Status", metav1.ConditionFalse))
			Expect(condition("observed", conditions.Progressing)(Default)).To(HaveField("Status", metav1.ConditionTrue))

			// Play the Deployment and ReplicaSet controllers.
			d := &appsv1.Deployment{}
			Eventually(func(g Gomega) {
				d = getDeployment("observed")(g)
				g.Expect(testenv.Sealed(d)).To(BeTrue())
			}).Should(Succeed())
			controlledBy := func(kind, name string, uid types.UID) []metav1.OwnerReference {
				return []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: name, UID: uid, Controller: new(true)}}
			}
			replicaSet := func(name string, owners []metav1.OwnerReference) *appsv1.ReplicaSet {
				rs := &appsv1.ReplicaSet{
					ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: d.Spec.Template.Labels, OwnerReferences: owners},
					Spec:       appsv1.ReplicaSetSpec{Replicas: new(int32(2)), Selector: d.Spec.Selector, Template: d.Spec.Template},
				}
				Expect(suite.Client.Create(suite.Ctx, rs)).To(Succeed())
				return rs
			}
			rs := replicaSet("observed-6d4f", controlledBy("Deployment", d.Name, d.UID))
			// Planted beside it with the PodSet's labels: a ReplicaSet
			// that claims no Deployment.
			planted := replicaSet("observed-planted", nil)
			// And one that claims the Deployment, held in deletion by a
			// finalizer: its controller no longer scales it, so the pods
			// claiming it would stay.
			held := replicaSet("observed-held", controlledBy("Deployment", d.Name, d.UID))
			held.Finalizers = []string{"example.com/hold"}
			Expect(suite.Client.Update(suite.Ctx, held)).To(Succeed())
			Expect(suite.Client.Delete(suite.Ctx, held)).To(Succeed())
			DeferCleanup(func() {
				Expect(client.IgnoreNotFound(suite.Client.Patch(suite.Ctx, held,
					client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))))).To(Succeed())
			})
			pod := func(name string, owners []metav1.OwnerReference) *corev1.Pod {
				p := &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: d.Spec.Template.Labels, OwnerReferences: owners},
					Spec:       d.Spec.Template.Spec,
				}
				Expect(suite.Client.Create(suite.Ctx, p)).To(Succeed())
				return p
			}
			for _, name := range []string{"observed-b", "observed-a"} {
				pod(name, controlledBy("ReplicaSet", rs.Name, rs.UID))
			}
			// Pods with the PodSet's labels that Kubernetes does not count
			// as its Deployment's: none of them is listed.
			pod("observed-planted-labels", nil)
			pod("observed-planted-set", controlledBy("ReplicaSet", planted.Name, planted.UID))
			pod("observed-planted-claims-the-deployment", controlledBy("Deployment", d.Name, d.UID))
			pod("observed-planted-held-set", controlledBy("ReplicaSet", held.Name, held.UID))
			// Claims the real ReplicaSet and has finished, which the
			// ReplicaSet does not count (nor remove).
			finished := pod("observed-planted-finished", controlledBy("ReplicaSet", rs.Name, rs.UID))
			finished.Status.Phase = corev1.PodSucceeded
			Expect(suite.Client.Status().Update(suite.Ctx, finished)).To(Succeed())
			d.Status = appsv1.DeploymentStatus{
				ObservedGeneration: d.Generation, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2,
			}
			Expect(suite.Client.Status().Update(suite.Ctx, d)).To(Succeed())

			Eventually(condition("observed", conditions.Ready)).Should(HaveField("Status", metav1.ConditionTrue))
			// The names are progress: written with Ready, or a second
			// after it when the Pods reached the cache later.
			Eventually(func(g Gomega) {
				got := &appsv1alpha1.PodSet{}
				g.Expect(suite.Client.Get(suite.Ctx, client.ObjectKeyFromObject(ps), got)).To(Succeed())
				g.Expect(got.Status.PodNames).To(Equal([]string{"observed-a", "observed-b"}))
				g.Expect(got.Status.ReadyReplicas).To(Equal(int32(2)))
				g.Expect(got.Status.AvailableReplicas).To(Equal(int32(2)))
				g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation))
			}).Should(Succeed())
			Expect(condition("observed", conditions.Progressing)(Default)).To(HaveField("Status", metav1.ConditionFalse))
			Expect(condition("observed", conditions.Degraded)(Default)).To(HaveField("Status", metav1.ConditionFalse))
		})

		It("should report an invalid spec in status and create nothing, when the webhook is absent", func() {
			ps := newPodSet("invalid", 1)
			ps.Spec.Template.Spec.Containers[0].Name = "Not_A_DNS_Label"
			Expect(suite.Client.Create(suite.Ctx, ps)).To(Succeed())

			Eventually(condition("invalid", conditions.Degraded)).Should(And(
				HaveField("Status", metav1.ConditionTrue),
				HaveField("Reason", conditions.ReasonInvalidSpec),
				HaveField("Message", ContainSubstring("spec.template.spec.containers[0].name")),
			))
			Expect(condition("invalid", conditions.Ready)(Default)).To(HaveField("Status", metav1.ConditionFalse))
			Eventually(func(g Gomega) []string {
				reasons, err := testenv.WarningReasons(suite.Ctx, suite.Client, "default", "invalid")
				g.Expect(err).NotTo(HaveOccurred())
				return reasons
			}).Should(ContainElement(conditions.ReasonInvalidSpec))
			err := suite.Client.Get(suite.Ctx, types.NamespacedName{Namespace: "default", Name: "invalid"}, &appsv1.Deployment{})
			Expect(apierrors.IsNotFound(err)).To(BeTrue())
		})

		It("should create nothing for a PodSet naming a Secret that no admission approved, say NotAdmitted, and act once it is stamped", func() {
			ps := newPodSet("unadmitted", 1)
			ps.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "T", ValueFrom: &corev1.EnvVarSource{
				SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "alice-token"}, Key: "t"}}}}
			// Stored as without kubeforge's webhooks: Env.Client stamps nothing.
			Expect(suite.Env.Client.Create(suite.Ctx, ps)).To(Succeed())

			Eventually(condition("unadmitted", conditions.Degraded)).Should(And(
				HaveField("Status", metav1.ConditionTrue),
				HaveField("Reason", conditions.ReasonNotAdmitted),
				HaveField("Message", ContainSubstring("kubeforge.io/readmit")),
			))
			Eventually(func(g Gomega) []string {
				reasons, err := testenv.WarningReasons(suite.Ctx, suite.Client, "default", "unadmitted")
				g.Expect(err).NotTo(HaveOccurred())
				return reasons
			}).Should(ContainElement(conditions.ReasonNotAdmitted))
			err := suite.Client.Get(suite.Ctx, types.NamespacedName{Namespace: "default", Name: "unadmitted"}, &appsv1.Deployment{})
			Expect(apierrors.IsNotFound(err)).To(BeTrue(), "a Deployment for a PodSet no admission approved")

			By("stamped, as the webhook does once the requester's checks pass")
			Expect(suite.Client.Get(suite.Ctx, client.ObjectKeyFromObject(ps), ps)).To(Succeed())
			Expect(suite.Client.Update(suite.Ctx, ps)).To(Succeed())
			Eventually(func() error {
				return suite.Client.Get(suite.Ctx, types.NamespacedName{Namespace: "default", Name: "unadmitted"}, &appsv1.Deployment{})
			}).Should(Succeed())
		})

		It("should refuse to take over a Deployment it did not make, even one labelled and controlled by another object, and say so", func() {
			replicas := int32(1)
			foreign := &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Name: "taken", Namespace: "default", Labels: map[string]string{"app.kubernetes.io/managed-by": "kubeforge"}},
				Spec: appsv1.DeploymentSpec{
					Replicas: &replicas,
					Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"x": "y"}},
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"x": "y"}},
						Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}},
					},
				},
			}
			owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "someone-else", Namespace: "default"}}
			Expect(suite.Client.Create(suite.Ctx, owner)).To(Succeed())
			Expect(ctrl.SetControllerReference(owner, foreign, suite.Env.Scheme)).To(Succeed())
			Expect(suite.Client.Create(suite.Ctx, foreign)).To(Succeed())

			Expect(suite.Client.Create(suite.Ctx, newPodSet("taken", 1))).To(Succeed())
			Eventually(condition("taken", conditions.Degraded)).Should(And(
				HaveField("Status", metav1.ConditionTrue),
				HaveField("Reason", conditions.ReasonNameConflict),
				HaveField("Message", ContainSubstring("Deployment/taken exists and was not created by this PodSet")),
			))
			Expect(*getDeployment("taken")(Default).Spec.Replicas).To(Equal(int32(1)))
			Expect(getDeployment("taken")(Default).Spec.Template.Spec.Containers[0].Image).To(Equal("i"))
		})
	})
})
