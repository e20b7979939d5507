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

package workspace_test

import (
	"fmt"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
	"github.com/kubeforge/kubeforge/controllers/workspace"
	"github.com/kubeforge/kubeforge/internal/conditions"
	"github.com/kubeforge/kubeforge/internal/engine"
	"github.com/kubeforge/kubeforge/internal/test/testenv"
)

func newWorkspace(name string) *idev1alpha1.Workspace {
	ws := &idev1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
	ws.Spec.User = "alice"
	return ws
}

func key(name string) types.NamespacedName {
	return types.NamespacedName{Namespace: "default", Name: name}
}

func getWorkspace(name string) func(g Gomega) *idev1alpha1.Workspace {
	return func(g Gomega) *idev1alpha1.Workspace {
		ws := &idev1alpha1.Workspace{}
		g.Expect(suite.Client.Get(suite.Ctx, key(name), ws)).To(Succeed())
		return ws
	}
}

// phase is the workspace's phase once its status describes its generation.
func phase(name string) func(g Gomega) idev1alpha1.WorkspacePhase {
	return func(g Gomega) idev1alpha1.WorkspacePhase {
		ws := getWorkspace(name)(g)
		g.Expect(ws.Status.ObservedGeneration).To(Equal(ws.Generation))
		return ws.Status.Phase
	}
}

func getPod(name string) func(g Gomega) *corev1.Pod {
	return func(g Gomega) *corev1.Pod {
		p := &corev1.Pod{}
		g.Expect(suite.Client.Get(suite.Ctx, key(name), p)).To(Succeed())
		g.Expect(testenv.Sealed(p)).To(BeTrue(), "the engine is still writing it")
		return p
	}
}

func podGone(name string) func() bool {
	return func() bool { return apierrors.IsNotFound(suite.Client.Get(suite.Ctx, key(name), &corev1.Pod{})) }
}

func setStarted(name string, started bool) {
	patch := fmt.Sprintf(`{"spec":{"started":%t}}`, started)
	Expect(suite.Client.Patch(suite.Ctx, getWorkspace(name)(Default), client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
}

// settled waits until no write follows the last one.
func settled() {
	Eventually(func() []string {
		before := suite.Counting.Writes()
		time.Sleep(300 * time.Millisecond)
		return suite.Counting.Writes()[len(before):]
	}).Should(BeEmpty())
}

func warningOrEvent(name, reason string) func(g Gomega) []string {
	return func(g Gomega) []string {
		events := &eventsv1.EventList{}
		g.Expect(suite.Client.List(suite.Ctx, events, client.InNamespace("default"))).To(Succeed())
		var reasons []string
		for _, e := range events.Items {
			if e.Regarding.Name == name && e.Regarding.Kind == "Workspace" {
				reasons = append(reasons, e.Reason)
			}
		}
		return reasons
	}
}

var _ = Describe("Workspace Controller", func() {
	It("should create the home volume, Service and Pod, owned by the Workspace", func() {
		ws := newWorkspace("owned")
		Expect(suite.Client.Create(suite.Ctx, ws)).To(Succeed())
		Eventually(phase("owned")).Should(Equal(idev1alpha1.PhasePending))

		for name, obj := range map[string]client.Object{
			"owned-home": &corev1.PersistentVolumeClaim{}, "owned": &corev1.Service{},
		} {
			Expect(suite.Client.Get(suite.Ctx, key(name), obj)).To(Succeed(), name)
			Expect(metav1.GetControllerOf(obj)).NotTo(BeNil(), name)
			Expect(metav1.GetControllerOf(obj).UID).To(Equal(ws.UID), name)
			Expect(obj.GetLabels()).To(HaveKeyWithValue(engine.LabelManagedBy, "kubeforge"))
		}
		pod := getPod("owned")(Default)
		Expect(metav1.GetControllerOf(pod).UID).To(Equal(ws.UID))
		Expect(pod.Labels).To(HaveKeyWithValue(idev1alpha1.UserLabel, "alice"))
		Expect(pod.Spec.Containers[0].ImagePullPolicy).To(Equal(corev1.PullIfNotPresent))
		Expect(*pod.Spec.SecurityContext.RunAsNonRoot).To(BeTrue())
		Expect(pod.Spec.Containers[0].ReadinessProbe.HTTPGet.Port.IntVal).To(Equal(int32(8080)))
		Expect(getWorkspace("owned")(Default).Status.URL).To(Equal("http://owned.default.svc:8080"))
		Expect(getWorkspace("owned")(Default).Status.StartedAt).NotTo(BeNil())
	})

	It("should give the IDE a generated password's hash from a Secret it owns, keep the password, admit only the allowed namespaces, and drop the Secret for auth None", func() {
		ws := newWorkspace("locked")
		Expect(suite.Client.Create(suite.Ctx, ws)).To(Succeed())
		sec := &corev1.Secret{}
		Eventually(func() error { return suite.Client.Get(suite.Ctx, key("locked-auth"), sec) }).Should(Succeed())
		Expect(metav1.GetControllerOf(sec).UID).To(Equal(ws.UID))
		Expect(sec.Data["password"]).To(HaveLen(workspace.PasswordLength))
		Expect(string(sec.Data["hashedPassword"])).To(HavePrefix("$argon2id$v=19$"))
		Expect(string(sec.Data["hashedPassword"])).NotTo(ContainSubstring(string(sec.Data["password"])))
		var pod *corev1.Pod
		Eventually(func(g Gomega) { pod = getPod("locked")(g) }).Should(Succeed())
		env := map[string]corev1.EnvVar{}
		for _, e := range pod.Spec.Containers[0].Env {
			env[e.Name] = e
			Expect(e.Value).NotTo(ContainSubstring(string(sec.Data["password"])), "no password in the Pod's spec")
		}
		Expect(env["HASHED_PASSWORD"].ValueFrom.SecretKeyRef.Name).To(Equal("locked-auth"))
		Expect(env["HASHED_PASSWORD"].ValueFrom.SecretKeyRef.Key).To(Equal("hashedPassword"))
		Expect(pod.Spec.Containers[0].ReadinessProbe.HTTPGet.Path).To(Equal("/healthz"))
		Eventually(func(g Gomega) string { return getWorkspace("locked")(g).Status.CredentialsSecret }).Should(Equal("locked-auth"))

		np := &networkingv1.NetworkPolicy{}
		Expect(suite.Client.Get(suite.Ctx, key("locked"), np)).To(Succeed())
		Expect(metav1.GetControllerOf(np).UID).To(Equal(ws.UID))
		Expect(np.Spec.PodSelector.MatchLabels).To(Equal(map[string]string{idev1alpha1.WorkspaceLabel: "locked"}))
		Expect(np.Spec.Ingress).To(HaveLen(1))
		Expect(np.Spec.Ingress[0].From[0].NamespaceSelector.MatchExpressions[0].Values).To(Equal([]string{"ingress-nginx"}))

		By("a change that restarts the IDE keeps the password, and its Secret as it was")
		Expect(suite.Client.Get(suite.Ctx, key("locked-auth"), sec)).To(Succeed())
		Expect(sec.Immutable).To(Equal(ptr.To(true)), "nobody who may update Secrets can put a password of their own in")
		rv, password := sec.ResourceVersion, string(sec.Data["password"])
		patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"env":[{"name":"THEME","value":"dark"}]}}`))
		Expect(suite.Client.Patch(suite.Ctx, getWorkspace("locked")(Default), patch)).To(Succeed())
		settled()
		Expect(suite.Client.Get(suite.Ctx, key("locked-auth"), sec)).To(Succeed())
		Expect(sec.ResourceVersion).To(Equal(rv))
		Expect(string(sec.Data["password"])).To(Equal(password))

		By("auth None: no Secret, no password in the Pod")
		patch = client.RawPatch(types.MergePatchType, []byte(`{"spec":{"auth":{"mode":"None"}}}`))
		Expect(suite.Client.Patch(suite.Ctx, getWorkspace("locked")(Default), patch)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(suite.Client.Get(suite.Ctx, key("locked-auth"), &corev1.Secret{}))
		}).Should(BeTrue())
		Eventually(func(g Gomega) string { return getWorkspace("locked")(g).Status.CredentialsSecret }).Should(BeEmpty())
	})

	It("should own an Ingress and a cert-manager Certificate when an ingress with TLS is asked for", func() {
		ws := newWorkspace("tls")
		ws.Spec.Ingress = &idev1alpha1.WorkspaceIngress{
			Host: "alice.ide.example.com", ClassName: ptr.To("nginx"),
			TLS: &idev1alpha1.WorkspaceTLS{IssuerRef: idev1alpha1.IssuerReference{Name: "letsencrypt", Kind: "ClusterIssuer"}},
		}
		Expect(suite.Client.Create(suite.Ctx, ws)).To(Succeed())
		ing := &networkingv1.Ingress{}
		Eventually(func() error { return suite.Client.Get(suite.Ctx, key("tls"), ing) }).Should(Succeed())
		Expect(metav1.GetControllerOf(ing).UID).To(Equal(ws.UID))
		Expect(ing.Spec.Rules[0].Host).To(Equal("alice.ide.example.com"))
		Expect(ing.Spec.TLS[0].SecretName).To(Equal("tls-tls"))
		cert := &cmv1.Certificate{}
		Eventually(func() error { return suite.Client.Get(suite.Ctx, key("tls-tls"), cert) }).Should(Succeed())
		Expect(metav1.GetControllerOf(cert).UID).To(Equal(ws.UID))
		Expect(cert.Spec.DNSNames).To(Equal([]string{"alice.ide.example.com"}))
		Expect(cert.Spec.IssuerRef.Kind).To(Equal("ClusterIssuer"))
		Eventually(func(g Gomega) string { return getWorkspace("tls")(g).Status.URL }).Should(Equal("https://alice.ide.example.com"))

		// Dropping the ingress removes both.
		Expect(suite.Client.Patch(suite.Ctx, getWorkspace("tls")(Default), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"ingress":null}}`)))).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(suite.Client.Get(suite.Ctx, key("tls-tls"), &cmv1.Certificate{}))
		}).Should(BeTrue())
		Eventually(func() bool {
			return apierrors.IsNotFound(suite.Client.Get(suite.Ctx, key("tls"), &networkingv1.Ingress{}))
		}).Should(BeTrue())
	})

	It("should stay Starting until the Pod is Ready, then be Running with its startup time", func() {
		Expect(suite.Client.Create(suite.Ctx, newWorkspace("ready"))).To(Succeed())
		pod := &corev1.Pod{}
		Eventually(func(g Gomega) { pod = getPod("ready")(g) }).Should(Succeed())
		Expect(suite.Client.SubResource("binding").Create(suite.Ctx, pod, &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: "ready"},
			Target:     corev1.ObjectReference{Kind: "Node", Name: "node-1"},
		})).To(Succeed())
		Eventually(phase("ready")).Should(Equal(idev1alpha1.PhaseStarting))

		pod = getPod("ready")(Default)
		pod.Status.Phase = corev1.PodRunning
		pod.Status.PodIP = "10.2.0.7"
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: metav1.Now()}}
		Expect(suite.Client.Status().Update(suite.Ctx, pod)).To(Succeed())
		Consistently(phase("ready"), "1s").Should(Equal(idev1alpha1.PhaseStarting))
		Expect(getWorkspace("ready")(Default).Status.Reason).To(Equal(workspace.ReasonNotAnswering))

		pod = getPod("ready")(Default)
		readyAt := metav1.NewTime(pod.CreationTimestamp.Add(3 * time.Second))
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: readyAt}}
		Expect(suite.Client.Status().Update(suite.Ctx, pod)).To(Succeed())
		Eventually(phase("ready")).Should(Equal(idev1alpha1.PhaseRunning))
		st := getWorkspace("ready")(Default).Status
		Expect(*st.LastStartupSeconds).To(Equal(int64(3)))
		Expect(st.PodIP).To(Equal("10.2.0.7"))
		Expect(st.NodeName).To(Equal("node-1"))
		Expect(meta.IsStatusConditionTrue(st.Conditions, conditions.Ready)).To(BeTrue())
	})

	It("should delete the Pod on stop, keep the volume and Service, and recreate the Pod on start", func() {
		Expect(suite.Client.Create(suite.Ctx, newWorkspace("stopstart"))).To(Succeed())
		first := &corev1.Pod{}
		Eventually(func(g Gomega) { first = getPod("stopstart")(g) }).Should(Succeed())

		setStarted("stopstart", false)
		Eventually(podGone("stopstart")).Should(BeTrue())
		Eventually(phase("stopstart")).Should(Equal(idev1alpha1.PhaseStopped))
		Expect(suite.Client.Get(suite.Ctx, key("stopstart-home"), &corev1.PersistentVolumeClaim{})).To(Succeed())
		Expect(suite.Client.Get(suite.Ctx, key("stopstart"), &corev1.Service{})).To(Succeed())
		// A status write of the first start can land after the stop; the
		// next reconcile clears startedAt again.
		Eventually(func(g Gomega) *metav1.Time { return getWorkspace("stopstart")(g).Status.StartedAt }).Should(BeNil())

		setStarted("stopstart", true)
		Eventually(func(g Gomega) types.UID { return getPod("stopstart")(g).UID }).ShouldNot(Equal(first.UID))
		Expect(getPod("stopstart")(Default).Spec.Volumes[0].PersistentVolumeClaim.ClaimName).To(Equal("stopstart-home"))
		Eventually(phase("stopstart")).Should(Equal(idev1alpha1.PhasePending))
	})

	It("should recreate a Pod that someone else deleted", func() {
		Expect(suite.Client.Create(suite.Ctx, newWorkspace("recreate"))).To(Succeed())
		first := &corev1.Pod{}
		Eventually(func(g Gomega) { first = getPod("recreate")(g) }).Should(Succeed())
		Expect(suite.Client.Delete(suite.Ctx, first)).To(Succeed())
		Eventually(func(g Gomega) types.UID { return getPod("recreate")(g).UID }).ShouldNot(Equal(first.UID))
	})

	It("should replace the Pod when the spec changes, since a Pod cannot change in place", func() {
		Expect(suite.Client.Create(suite.Ctx, newWorkspace("replace"))).To(Succeed())
		first := &corev1.Pod{}
		Eventually(func(g Gomega) { first = getPod("replace")(g) }).Should(Succeed())
		Expect(suite.Client.Patch(suite.Ctx, getWorkspace("replace")(Default), client.RawPatch(types.MergePatchType,
			[]byte(`{"spec":{"image":"docker.io/codercom/code-server:4.97.0"}}`)))).To(Succeed())
		Eventually(func(g Gomega) string { return getPod("replace")(g).Spec.Containers[0].Image }).Should(Equal("docker.io/codercom/code-server:4.97.0"))
		Expect(getPod("replace")(Default).UID).NotTo(Equal(first.UID))
		Eventually(warningOrEvent("replace", "Restarting")).Should(ContainElement("Restarting"))
	})

	It("should stop the workspace when maxRunDuration has passed, and say so in an event", func() {
		ws := newWorkspace("timed")
		ws.Spec.MaxRunDuration = &metav1.Duration{Duration: 2 * time.Second}
		Expect(suite.Client.Create(suite.Ctx, ws)).To(Succeed())
		Eventually(func(g Gomega) { getPod("timed")(g) }).Should(Succeed())
		Eventually(func(g Gomega) bool { return *getWorkspace("timed")(g).Spec.Started }, "10s").Should(BeFalse())
		Eventually(podGone("timed")).Should(BeTrue())
		Eventually(phase("timed")).Should(Equal(idev1alpha1.PhaseStopped))
		Eventually(warningOrEvent("timed", workspace.ReasonMaxRunDuration)).Should(ContainElement(workspace.ReasonMaxRunDuration))
	})

	It("should make zero API writes when nothing changed", func() {
		Expect(suite.Client.Create(suite.Ctx, newWorkspace("quiet"))).To(Succeed())
		Eventually(phase("quiet")).Should(Equal(idev1alpha1.PhasePending))
		settled()
		suite.Counting.Reset()
		for range 3 {
			res, err := suite.Reconciler.Reconcile(suite.Ctx, ctrl.Request{NamespacedName: key("quiet")})
			Expect(err).NotTo(HaveOccurred())
			Expect(res).To(Equal(ctrl.Result{}))
		}
		Expect(suite.Counting.Writes()).To(BeEmpty())
		Consistently(suite.Counting.Writes, "2s").Should(BeEmpty())
	})

	It("should leave a retained home volume without an owner reference, so it outlives the Workspace", func() {
		ws := newWorkspace("retained")
		ws.Spec.Storage.ReclaimPolicy = idev1alpha1.ReclaimRetain
		Expect(suite.Client.Create(suite.Ctx, ws)).To(Succeed())
		pvc := &corev1.PersistentVolumeClaim{}
		Eventually(func() error { return suite.Client.Get(suite.Ctx, key("retained-home"), pvc) }).Should(Succeed())
		Expect(pvc.OwnerReferences).To(BeEmpty())
		Expect(pvc.Labels).To(HaveKeyWithValue(engine.LabelInstance, "retained"))
		// The other objects are owned as usual.
		Eventually(func(g Gomega) *metav1.OwnerReference { return metav1.GetControllerOf(getPod("retained")(g)) }).ShouldNot(BeNil())
	})

	It("should report a spec the CRD admits but the rules refuse, and create nothing", func() {
		ws := newWorkspace("invalid")
		ws.Spec.User = "alice smith"
		Expect(suite.Client.Create(suite.Ctx, ws)).To(Succeed())
		Eventually(phase("invalid")).Should(Equal(idev1alpha1.PhaseFailed))
		c := meta.FindStatusCondition(getWorkspace("invalid")(Default).Status.Conditions, conditions.Degraded)
		Expect(c.Reason).To(Equal(conditions.ReasonInvalidSpec))
		Expect(c.Message).To(ContainSubstring("spec.user"))
		Eventually(warningOrEvent("invalid", conditions.ReasonInvalidSpec)).Should(ContainElement(conditions.ReasonInvalidSpec))
		Expect(podGone("invalid")()).To(BeTrue())
	})

	It("should leave a Service the user made under the Workspace's name as it was, and report the conflict", func() {
		mine := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "taken", Namespace: "default"},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "mine", Port: 9999}}}}
		Expect(suite.Client.Create(suite.Ctx, mine)).To(Succeed())
		before := &corev1.Service{}
		Expect(suite.Client.Get(suite.Ctx, key("taken"), before)).To(Succeed())

		Expect(suite.Client.Create(suite.Ctx, newWorkspace("taken"))).To(Succeed())
		Eventually(func(g Gomega) *metav1.Condition {
			return meta.FindStatusCondition(getWorkspace("taken")(g).Status.Conditions, conditions.Degraded)
		}).Should(And(Not(BeNil()),
			HaveField("Reason", conditions.ReasonNameConflict),
			HaveField("Message", ContainSubstring("Service/taken exists and was not created by this Workspace"))))
		after := &corev1.Service{}
		Expect(suite.Client.Get(suite.Ctx, key("taken"), after)).To(Succeed())
		Expect(after).To(Equal(before), "not changed, not labelled, not owned")
	})

	It("should not give a retained home to another person's Workspace of the same name, whatever its user", func() {
		// The owner record the webhooks write (not running in this suite).
		ws := newWorkspace("home")
		ws.Annotations = map[string]string{"kubeforge.io/owner": "alice@example.com"}
		ws.Spec.Storage.ReclaimPolicy = idev1alpha1.ReclaimRetain
		Expect(suite.Client.Create(suite.Ctx, ws)).To(Succeed())
		pvc := &corev1.PersistentVolumeClaim{}
		Eventually(func() error { return suite.Client.Get(suite.Ctx, key("home-home"), pvc) }).Should(Succeed())
		Expect(pvc.Annotations).To(HaveKeyWithValue("kubeforge.io/retained-for", "Workspace/home/owner=alice@example.com/home"))
		Expect(suite.Client.Delete(suite.Ctx, getWorkspace("home")(Default))).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(suite.Client.Get(suite.Ctx, key("home"), &idev1alpha1.Workspace{}))
		}).Should(BeTrue())
		Expect(suite.Client.Get(suite.Ctx, key("home-home"), pvc)).To(Succeed())
		before := pvc.ResourceVersion
		// envtest has no garbage collector: play it for alice's Pod, and for
		// one that a reconcile still in flight (it read alice's Workspace
		// before its deletion) creates after that: gone, and gone for a
		// second.
		Eventually(func() error {
			p := &corev1.Pod{}
			if err := suite.Client.Get(suite.Ctx, key("home"), p); err == nil {
				_ = suite.Client.Delete(suite.Ctx, p, client.GracePeriodSeconds(0))
				return fmt.Errorf("Pod home (owner %v) was there", p.OwnerReferences)
			}
			for range 10 {
				time.Sleep(100 * time.Millisecond)
				if err := suite.Client.Get(suite.Ctx, key("home"), &corev1.Pod{}); !apierrors.IsNotFound(err) {
					return fmt.Errorf("Pod home is back (%v)", err)
				}
			}
			return nil
		}, "30s", "10ms").Should(Succeed())

		bobs := newWorkspace("home")
		bobs.Annotations = map[string]string{"kubeforge.io/owner": "bob@example.com"}
		bobs.Spec.User = "alice" // a display name says nothing of whose it is
		bobs.Spec.Storage.ReclaimPolicy = idev1alpha1.ReclaimRetain
		Expect(suite.Client.Create(suite.Ctx, bobs)).To(Succeed())
		Eventually(func(g Gomega) *metav1.Condition {
			return meta.FindStatusCondition(getWorkspace("home")(g).Status.Conditions, conditions.Degraded)
		}).Should(And(Not(BeNil()), HaveField("Reason", conditions.ReasonNameConflict)))
		Expect(suite.Client.Get(suite.Ctx, key("home-home"), pvc)).To(Succeed())
		Expect(pvc.ResourceVersion).To(Equal(before), "alice's home is not touched")
		Consistently(func() bool {
			return apierrors.IsNotFound(suite.Client.Get(suite.Ctx, key("home"), &corev1.Pod{}))
		}, "2s").Should(BeTrue(), "no Pod of bob's mounts alice's home")
	})
})
