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

package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubeforge/kubeforge/internal/engine"
	"github.com/kubeforge/kubeforge/internal/proof"
	"github.com/kubeforge/kubeforge/internal/test/testenv"
)

// Every type a kubeforge kind creates, as a user would make one: valid,
// unlabelled, owned by nobody.
func userObjects(name string) []client.Object {
	meta := metav1.ObjectMeta{Name: name, Namespace: "default"}
	labels := map[string]string{"app": name}
	pod := corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.example.com/user:1"}}, RestartPolicy: corev1.RestartPolicyNever}
	template := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod}
	always := template.DeepCopy()
	always.Spec.RestartPolicy = corev1.RestartPolicyAlways
	selector := &metav1.LabelSelector{MatchLabels: labels}
	return []client.Object{
		&corev1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"keep": "me"}},
		&corev1.Secret{ObjectMeta: meta, Data: map[string][]byte{"password": []byte("users-own")}},
		&corev1.Service{ObjectMeta: meta, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}},
		&appsv1.Deployment{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{Selector: selector, Template: *always}},
		&appsv1.StatefulSet{ObjectMeta: meta, Spec: appsv1.StatefulSetSpec{Selector: selector, ServiceName: name, Template: *always}},
		&appsv1.DaemonSet{ObjectMeta: meta, Spec: appsv1.DaemonSetSpec{Selector: selector, Template: *always}},
		&batchv1.CronJob{ObjectMeta: meta, Spec: batchv1.CronJobSpec{Schedule: "0 3 * * *",
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: template}}}},
		&corev1.PersistentVolumeClaim{ObjectMeta: meta, Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		}},
		&corev1.Pod{ObjectMeta: meta, Spec: pod},
		&batchv1.Job{ObjectMeta: meta, Spec: batchv1.JobSpec{Template: template}},
		&networkingv1.Ingress{ObjectMeta: meta, Spec: networkingv1.IngressSpec{DefaultBackend: &networkingv1.IngressBackend{
			Service: &networkingv1.IngressServiceBackend{Name: name, Port: networkingv1.ServiceBackendPort{Number: 80}}}}},
		&cmv1.Certificate{ObjectMeta: meta, Spec: cmv1.CertificateSpec{SecretName: name, DNSNames: []string{"user.example.com"},
			IssuerRef: cmmeta.IssuerReference{Name: "users-issuer"}}},
		&corev1.ServiceAccount{ObjectMeta: meta},
		&rbacv1.Role{ObjectMeta: meta, Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}}},
		&rbacv1.RoleBinding{ObjectMeta: meta, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: "default"}}},
	}
}

// snapshot is an object as the API server stores it, byte for byte.
func snapshot(obj client.Object) string {
	live := obj.DeepCopyObject().(client.Object)
	ExpectWithOffset(1, env.Client.Get(ctx, client.ObjectKeyFromObject(obj), live)).To(Succeed())
	b, err := json.Marshal(live)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return string(b)
}

var _ = Describe("Engine with the manager's cache", func() {
	var (
		cached   client.Client
		counting *testenv.CountingClient
		eng      *engine.Engine
		stop     func()
	)
	BeforeEach(func() {
		// The cache the operator runs with: owned types only when labelled
		// app.kubernetes.io/managed-by=kubeforge, so a user's object of a
		// wanted name is not in it.
		var types []client.Object
		for _, o := range userObjects("x") {
			types = append(types, o)
		}
		opts := engine.CacheOptions(engine.CacheSettings{Transform: engine.CacheTransform(env.Proof, env.Scheme, engine.Types{Owned: types})}, types...)
		opts.Scheme = env.Scheme
		uncached, err := cache.New(env.Config, opts)
		Expect(err).NotTo(HaveOccurred())
		c := engine.GuardCache(uncached)
		cctx, cancel := context.WithCancel(ctx)
		stop = cancel
		go func() { defer GinkgoRecover(); Expect(c.Start(cctx)).To(Succeed()) }()
		Expect(c.WaitForCacheSync(cctx)).To(BeTrue())
		copts := engine.ClientOptions()
		copts.Scheme, copts.Cache.Reader = env.Scheme, c
		cached, err = client.New(env.Config, copts)
		Expect(err).NotTo(HaveOccurred())
		counting = testenv.NewCountingClient(cached)
		cs, err := kubernetes.NewForConfig(env.Config)
		Expect(err).NotTo(HaveOccurred())
		broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: cs.EventsV1()})
		broadcaster.StartRecordingToSink(cctx.Done())
		eng = &engine.Engine{Client: counting, Reader: env.Client, Scheme: env.Scheme,
			Recorder: broadcaster.NewRecorder(env.Scheme, "kubeforge-test"), Proof: env.Proof}
	})
	AfterEach(func() { stop() })

	It("should leave a user's object of every type it creates exactly as it was, and say so", func() {
		for _, user := range userObjects("users") {
			kind := fmt.Sprintf("%T", user)
			By("a user's " + kind)
			Expect(env.Client.Create(ctx, user)).To(Succeed(), kind)
			before := snapshot(user)

			owner := newOwner("wants-" + strings.ToLower(strings.TrimPrefix(kind, "*")))
			desired := user.DeepCopyObject().(client.Object)
			desired.SetResourceVersion("")
			desired.SetUID("")
			desired.SetLabels(map[string]string{"from": "kubeforge"})
			counting.Reset()
			res, err := eng.Apply(ctx, owner, []client.Object{desired}, user.DeepCopyObject().(client.Object))
			Expect(engine.IsConflict(err)).To(BeTrue(), "%s: %v", kind, err)
			Expect(engine.FailureReason(err)).To(Equal("NameConflict"))
			Expect(err.Error()).To(ContainSubstring("was not created by this ConfigMap"))
			Expect(res.Created).To(BeEmpty())
			Expect(res.Updated).To(BeEmpty())
			// No write but, at most, the create of what the cache does not
			// hold, which the API server refused: it changes nothing there.
			Expect(len(counting.Writes())).To(Equal(len(counting.Refused())), kind+": no write at all but a refused create")
			for _, r := range counting.Refused() {
				Expect(r).To(MatchRegexp(`^create .* default/users: (AlreadyExists|Invalid)$`), kind)
			}
			Expect(snapshot(user)).To(Equal(before), kind+": byte-identical")

			// Again, now that every cache is warm: still left alone, and
			// the refused name is read, not met with a create again.
			counting.Reset()
			_, err = eng.Apply(ctx, owner, []client.Object{desired}, user.DeepCopyObject().(client.Object))
			Expect(engine.IsConflict(err)).To(BeTrue())
			Expect(counting.Writes()).To(BeEmpty(), kind+": no create again")

			// The owner goes; the user's object stays, as it was.
			Expect(env.Client.Delete(ctx, owner)).To(Succeed())
			Expect(snapshot(user)).To(Equal(before), kind+": still there, byte-identical")
			live := user.DeepCopyObject().(client.Object)
			Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(user), live)).To(Succeed())
			Expect(live.GetOwnerReferences()).To(BeEmpty())
		}
		Eventually(func(g Gomega) []string {
			reasons, err := testenv.WarningReasons(ctx, env.Client, "default", "wants-v1.configmap")
			g.Expect(err).NotTo(HaveOccurred())
			return reasons
		}, 10*time.Second).Should(ContainElement("NameConflict"))
	})

	It("should apply the owner's objects before a conflict, none after it (they may use it by name), and prune nothing", func() {
		owner := newOwner("partly")
		_, err := eng.Apply(ctx, owner, []client.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "partly-old"}}}, &corev1.ConfigMap{})
		Expect(err).NotTo(HaveOccurred())
		Expect(env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "partly-taken", Namespace: "default"}})).To(Succeed())
		res, err := eng.Apply(ctx, owner, []client.Object{
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "partly-before"}},
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "partly-taken"}},
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "partly-after"}},
		}, &corev1.ConfigMap{})
		Expect(engine.IsConflict(err)).To(BeTrue())
		Expect(res.Created).To(Equal([]string{"ConfigMap/partly-before"}))
		Expect(res.Pruned).To(BeEmpty())
		Expect(env.Client.Get(ctx, types.NamespacedName{Namespace: "default", Name: "partly-old"}, &corev1.ConfigMap{})).To(Succeed())
	})

	It("should find its own object that the cache has not seen yet, and not call it a conflict", func() {
		owner := newOwner("fresh")
		for i := range 5 {
			_, err := eng.Apply(ctx, owner, []client.Object{service("fresh-a", 80+int32(i), nil)}, &corev1.Service{})
			Expect(err).NotTo(HaveOccurred(), "pass %d", i)
		}
		Expect(getService("fresh-a").Spec.Ports[0].Port).To(Equal(int32(84)))
	})

	Context("When a volume was retained", func() {
		claim := func(name string) *corev1.PersistentVolumeClaim {
			pvc := userObjects(name)[7].(*corev1.PersistentVolumeClaim)
			pvc.Namespace = ""
			engine.Claim(pvc, "home")
			engine.Retain(pvc)
			return pvc
		}
		ownedBy := func(name, user string) *corev1.ConfigMap {
			o := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default",
				Annotations: map[string]string{proof.OwnerAnnotation: user}}}
			Expect(env.Client.Create(ctx, o)).To(Succeed())
			return o
		}
		It("should give it back only to an owner of the same kind, name and recorded owner", func() {
			first := ownedBy("home", "alice")
			_, err := eng.Apply(ctx, first, []client.Object{claim("home-vol")}, &corev1.PersistentVolumeClaim{})
			Expect(err).NotTo(HaveOccurred())
			vol := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "home-vol", Namespace: "default"}}
			Expect(snapshot(vol)).To(ContainSubstring(`"kubeforge.io/retained-for":"ConfigMap/home/owner=alice/home"`))
			Expect(env.Client.Delete(ctx, first)).To(Succeed())
			before := snapshot(vol)

			By("another person's owner of the same name")
			bobs := ownedBy("home", "bob")
			_, err = eng.Apply(ctx, bobs, []client.Object{claim("home-vol")}, &corev1.PersistentVolumeClaim{})
			Expect(engine.IsConflict(err)).To(BeTrue(), "%v", err)
			Expect(snapshot(vol)).To(Equal(before))
			Expect(env.Client.Delete(ctx, bobs)).To(Succeed())

			By("an owner of the same name with no recorded owner")
			nobodys := newOwner("home")
			_, err = eng.Apply(ctx, nobodys, []client.Object{claim("home-vol")}, &corev1.PersistentVolumeClaim{})
			Expect(engine.IsConflict(err)).To(BeTrue(), "%v", err)
			Expect(snapshot(vol)).To(Equal(before))
			Expect(env.Client.Delete(ctx, nobodys)).To(Succeed())

			By("the same person's owner of the same name")
			alices := ownedBy("home", "alice")
			res, err := eng.Apply(ctx, alices, []client.Object{claim("home-vol")}, &corev1.PersistentVolumeClaim{})
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Created).To(BeEmpty())
		})
	})
})
