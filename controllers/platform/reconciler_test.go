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

package platform_test

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	"github.com/kubeforge/kubeforge/controllers/platform"
	"github.com/kubeforge/kubeforge/internal/conditions"
	"github.com/kubeforge/kubeforge/internal/engine"
	"github.com/kubeforge/kubeforge/internal/test/testenv"
)

func key(name string) types.NamespacedName {
	return types.NamespacedName{Namespace: "default", Name: name}
}

func newPlatform(name, version string, comps ...appsv1alpha1.PlatformComponent) *appsv1alpha1.Platform {
	return &appsv1alpha1.Platform{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       appsv1alpha1.PlatformSpec{ImageRepository: "reg.example.com/acme", Version: version, Components: comps},
	}
}

func getPlatform(name string) func(g Gomega) *appsv1alpha1.Platform {
	return func(g Gomega) *appsv1alpha1.Platform {
		p := &appsv1alpha1.Platform{}
		g.Expect(suite.Client.Get(suite.Ctx, key(name), p)).To(Succeed())
		return p
	}
}

func exists(obj client.Object, name string) func() error {
	return func() error { return suite.Client.Get(suite.Ctx, key(name), obj) }
}

func gone(obj client.Object, name string) func() bool {
	return func() bool { return apierrors.IsNotFound(suite.Client.Get(suite.Ctx, key(name), obj)) }
}

func image(name string) func(g Gomega) string {
	return func(g Gomega) string {
		d := &appsv1.Deployment{}
		g.Expect(suite.Client.Get(suite.Ctx, key(name), d)).To(Succeed())
		return d.Spec.Template.Spec.Containers[0].Image
	}
}

// makeReady plays the Deployment controller: the current template is
// rolled out and available.
func makeReady(name string) {
	Eventually(func() error {
		d := &appsv1.Deployment{}
		if err := suite.Client.Get(suite.Ctx, key(name), d); err != nil {
			return err
		}
		if !testenv.Sealed(d) {
			return fmt.Errorf("%s is not sealed yet", name)
		}
		r := *d.Spec.Replicas
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: r, UpdatedReplicas: r, ReadyReplicas: r, AvailableReplicas: r}
		return suite.Client.Status().Update(suite.Ctx, d)
	}).Should(Succeed())
}

func componentPhase(platform, component string) func(g Gomega) appsv1alpha1.ComponentPhase {
	return func(g Gomega) appsv1alpha1.ComponentPhase {
		p := getPlatform(platform)(g)
		g.Expect(p.Status.ObservedGeneration).To(Equal(p.Generation))
		for _, c := range p.Status.Components {
			if c.Name == component {
				return c.Phase
			}
		}
		return ""
	}
}

// update changes a Platform's spec, retrying when the controller's status
// write got in between.
func update(name string, mutate func(*appsv1alpha1.Platform)) {
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p := &appsv1alpha1.Platform{}
		if err := suite.Client.Get(suite.Ctx, key(name), p); err != nil {
			return err
		}
		mutate(p)
		return suite.Client.Update(suite.Ctx, p)
	})).To(Succeed())
}

func settled() {
	Eventually(func() []string {
		before := suite.Counting.Writes()
		time.Sleep(300 * time.Millisecond)
		return suite.Counting.Writes()[len(before):]
	}).Should(BeEmpty())
}

var _ = Describe("Platform Controller", func() {
	It("should create each workload type with its Service, ConfigMap and volume, owned by the Platform", func() {
		p := newPlatform("kinds", "1.0.0",
			appsv1alpha1.PlatformComponent{Name: "web", Ports: []appsv1alpha1.ComponentPort{{Name: "http", Port: 8080}},
				Config:  map[string]string{"web.yaml": "a: 1"},
				Storage: &appsv1alpha1.ComponentStorage{Size: resource.MustParse("1Gi"), ReclaimPolicy: "Delete"}},
			appsv1alpha1.PlatformComponent{Name: "db", Workload: appsv1alpha1.WorkloadStatefulSet,
				Storage: &appsv1alpha1.ComponentStorage{Size: resource.MustParse("1Gi")}},
			appsv1alpha1.PlatformComponent{Name: "agent", Workload: appsv1alpha1.WorkloadDaemonSet},
			appsv1alpha1.PlatformComponent{Name: "report", Workload: appsv1alpha1.WorkloadCronJob, Schedule: "0 3 * * *"},
		)
		Expect(suite.Client.Create(suite.Ctx, p)).To(Succeed())
		for name, obj := range map[string]client.Object{
			"kinds-web": &appsv1.Deployment{}, "kinds-db": &appsv1.StatefulSet{}, "kinds-agent": &appsv1.DaemonSet{},
			"kinds-report": &batchv1.CronJob{}, "kinds-web-config": &corev1.ConfigMap{}, "kinds-web-data": &corev1.PersistentVolumeClaim{},
		} {
			Eventually(exists(obj, name)).Should(Succeed(), name)
			Expect(metav1.GetControllerOf(obj)).NotTo(BeNil(), name)
			Expect(metav1.GetControllerOf(obj).UID).To(Equal(p.UID), name)
			Expect(obj.GetLabels()).To(HaveKeyWithValue(appsv1alpha1.PlatformComponentLabel, name[len("kinds-"):len("kinds-")+len(obj.GetLabels()[appsv1alpha1.PlatformComponentLabel])]))
		}
		svc := &corev1.Service{}
		Expect(suite.Client.Get(suite.Ctx, key("kinds-web"), svc)).To(Succeed())
		Expect(svc.Spec.Ports[0].Port).To(Equal(int32(8080)))
		Expect(image("kinds-web")(Default)).To(Equal("reg.example.com/acme/web:1.0.0"))
		Expect(gone(&corev1.Service{}, "kinds-report")()).To(BeTrue(), "a CronJob gets no Service")
		Eventually(func(g Gomega) string { return getPlatform("kinds")(g).Status.Ready }).Should(Equal("1/4"))
	})

	It("should keep a component made before podSecurity as it runs, with the PodSecurity condition and one Warning, until a profile is chosen", func() {
		runAsNonRoot := func(g Gomega) *bool {
			d := &appsv1.Deployment{}
			g.Expect(suite.Client.Get(suite.Ctx, key("legacy-api"), d)).To(Succeed())
			if sc := d.Spec.Template.Spec.SecurityContext; sc != nil {
				return sc.RunAsNonRoot
			}
			return nil
		}
		// A workload as an operator older than the field made it: unrestricted.
		p := newPlatform("legacy", "1.0.0", appsv1alpha1.PlatformComponent{Name: "api", PodSecurity: appsv1alpha1.PodSecurityBaseline})
		Expect(suite.Client.Create(suite.Ctx, p)).To(Succeed())
		Eventually(exists(&appsv1.Deployment{}, "legacy-api")).Should(Succeed())
		Expect(runAsNonRoot(Default)).To(BeNil())
		// The spec as it was stored before the field (no webhook here to
		// keep it): the workload keeps running as it did.
		update("legacy", func(p *appsv1alpha1.Platform) { p.Spec.Components[0].PodSecurity = "" })
		podSecurity := func(g Gomega) *metav1.Condition {
			p := getPlatform("legacy")(g)
			g.Expect(p.Status.ObservedGeneration).To(Equal(p.Generation))
			return meta.FindStatusCondition(p.Status.Conditions, appsv1alpha1.PodSecurityConditionType)
		}
		Eventually(podSecurity).Should(And(Not(BeNil()), HaveField("Status", metav1.ConditionFalse),
			HaveField("Reason", platform.ReasonPodSecurityUnset), HaveField("Message", ContainSubstring("Components api run as their images say"))))
		Expect(runAsNonRoot(Default)).To(BeNil(), "a stored component is not restricted behind its back")
		warnings := func(g Gomega) int {
			events := &eventsv1.EventList{}
			g.Expect(suite.Client.List(suite.Ctx, events, client.InNamespace("default"))).To(Succeed())
			n := 0
			for _, e := range events.Items {
				if e.Regarding.Name == "legacy" && e.Reason == platform.ReasonPodSecurityUnset && e.Type == corev1.EventTypeWarning {
					n += 1 + int(ptr.Deref(e.Series, eventsv1.EventSeries{}).Count)
				}
			}
			return n
		}
		Eventually(warnings).Should(Equal(1))
		update("legacy", func(p *appsv1alpha1.Platform) { p.Spec.Components[0].Replicas = ptr.To[int32](2) })
		Consistently(warnings, "1s").Should(Equal(1), "the Warning is recorded once, not on every reconcile")

		update("legacy", func(p *appsv1alpha1.Platform) { p.Spec.Components[0].PodSecurity = appsv1alpha1.PodSecurityRestricted })
		Eventually(runAsNonRoot).Should(HaveValue(BeTrue()))
		Eventually(podSecurity).Should(BeNil())
	})

	It("should not create a component until what it depends on is Ready", func() {
		Expect(suite.Client.Create(suite.Ctx, newPlatform("gate", "1.0.0",
			appsv1alpha1.PlatformComponent{Name: "db"},
			appsv1alpha1.PlatformComponent{Name: "api", DependsOn: []string{"db"}},
		))).To(Succeed())
		Eventually(exists(&appsv1.Deployment{}, "gate-db")).Should(Succeed())
		Eventually(componentPhase("gate", "api")).Should(Equal(appsv1alpha1.ComponentWaiting))
		Consistently(gone(&appsv1.Deployment{}, "gate-api"), "1s").Should(BeTrue())
		Expect(getPlatform("gate")(Default).Status.Components[1].Message).To(ContainSubstring("db"))

		makeReady("gate-db")
		Eventually(exists(&appsv1.Deployment{}, "gate-api")).Should(Succeed())
		makeReady("gate-api")
		Eventually(func(g Gomega) appsv1alpha1.PlatformPhase { return getPlatform("gate")(g).Status.Phase }).Should(Equal(appsv1alpha1.PlatformRunning))
		p := getPlatform("gate")(Default)
		Expect(p.Status.Version).To(Equal("1.0.0"))
		Expect(p.Status.Ready).To(Equal("2/2"))
		Expect(meta.IsStatusConditionTrue(p.Status.Conditions, conditions.Ready)).To(BeTrue())
	})

	It("should roll a version bump in dependency order", func() {
		Expect(suite.Client.Create(suite.Ctx, newPlatform("bump", "1.0.0",
			appsv1alpha1.PlatformComponent{Name: "db"},
			appsv1alpha1.PlatformComponent{Name: "api", DependsOn: []string{"db"}},
			appsv1alpha1.PlatformComponent{Name: "web", DependsOn: []string{"api"}},
		))).To(Succeed())
		for _, c := range []string{"db", "api", "web"} {
			Eventually(exists(&appsv1.Deployment{}, "bump-"+c)).Should(Succeed())
			makeReady("bump-" + c)
		}
		Eventually(func(g Gomega) string { return getPlatform("bump")(g).Status.Version }).Should(Equal("1.0.0"))

		update("bump", func(p *appsv1alpha1.Platform) { p.Spec.Version = "2.0.0" })

		Eventually(image("bump-db")).Should(Equal("reg.example.com/acme/db:2.0.0"))
		Eventually(func(g Gomega) appsv1alpha1.PlatformPhase { return getPlatform("bump")(g).Status.Phase }).Should(Equal(appsv1alpha1.PlatformUpgrading))
		Consistently(image("bump-api"), "1s").Should(Equal("reg.example.com/acme/api:1.0.0"))
		Expect(image("bump-web")(Default)).To(Equal("reg.example.com/acme/web:1.0.0"))

		makeReady("bump-db")
		Eventually(image("bump-api")).Should(Equal("reg.example.com/acme/api:2.0.0"))
		Consistently(image("bump-web"), "1s").Should(Equal("reg.example.com/acme/web:1.0.0"))
		Expect(getPlatform("bump")(Default).Status.Version).To(Equal("1.0.0"), "not every component runs 2.0.0 yet")

		makeReady("bump-api")
		Eventually(image("bump-web")).Should(Equal("reg.example.com/acme/web:2.0.0"))
		makeReady("bump-web")
		Eventually(func(g Gomega) string { return getPlatform("bump")(g).Status.Version }).Should(Equal("2.0.0"))
		Expect(getPlatform("bump")(Default).Status.Phase).To(Equal(appsv1alpha1.PlatformRunning))
		Expect(getPlatform("bump")(Default).Spec.Components[1].Tag).To(BeEmpty(), "the resolved image is never written into the spec")
	})

	It("should delete a disabled component but keep its retained volume, and recreate it when re-enabled", func() {
		Expect(suite.Client.Create(suite.Ctx, newPlatform("toggle", "1.0.0",
			appsv1alpha1.PlatformComponent{Name: "cache", Ports: []appsv1alpha1.ComponentPort{{Name: "redis", Port: 6379}},
				Config:  map[string]string{"redis.conf": "maxmemory 64mb"},
				Storage: &appsv1alpha1.ComponentStorage{Size: resource.MustParse("1Gi")}},
		))).To(Succeed())
		Eventually(exists(&appsv1.Deployment{}, "toggle-cache")).Should(Succeed())
		Eventually(exists(&corev1.PersistentVolumeClaim{}, "toggle-cache-data")).Should(Succeed())

		update("toggle", func(p *appsv1alpha1.Platform) { p.Spec.Components[0].Disable = true })
		Eventually(gone(&appsv1.Deployment{}, "toggle-cache")).Should(BeTrue())
		Eventually(gone(&corev1.Service{}, "toggle-cache")).Should(BeTrue())
		Eventually(gone(&corev1.ConfigMap{}, "toggle-cache-config")).Should(BeTrue())
		pvc := &corev1.PersistentVolumeClaim{}
		Expect(suite.Client.Get(suite.Ctx, key("toggle-cache-data"), pvc)).To(Succeed())
		Expect(pvc.OwnerReferences).To(BeEmpty(), "a retained volume has no owner to be collected with")
		Eventually(componentPhase("toggle", "cache")).Should(Equal(appsv1alpha1.ComponentDisabled))

		update("toggle", func(p *appsv1alpha1.Platform) { p.Spec.Components[0].Disable = false })
		Eventually(exists(&appsv1.Deployment{}, "toggle-cache")).Should(Succeed())
		Eventually(exists(&corev1.Service{}, "toggle-cache")).Should(Succeed())
		Eventually(exists(&corev1.ConfigMap{}, "toggle-cache-config")).Should(Succeed())
	})

	It("should delete the volume of a disabled component whose reclaimPolicy is Delete", func() {
		Expect(suite.Client.Create(suite.Ctx, newPlatform("reclaim", "1.0.0",
			appsv1alpha1.PlatformComponent{Name: "tmp", Storage: &appsv1alpha1.ComponentStorage{Size: resource.MustParse("1Gi"), ReclaimPolicy: "Delete"}},
		))).To(Succeed())
		Eventually(exists(&corev1.PersistentVolumeClaim{}, "reclaim-tmp-data")).Should(Succeed())
		update("reclaim", func(p *appsv1alpha1.Platform) { p.Spec.Components[0].Disable = true })
		// The claim carries the pvc-protection finalizer; deleted means it has a deletion timestamp.
		Eventually(func(g Gomega) bool {
			pvc := &corev1.PersistentVolumeClaim{}
			err := suite.Client.Get(suite.Ctx, key("reclaim-tmp-data"), pvc)
			return apierrors.IsNotFound(err) || pvc.DeletionTimestamp != nil
		}).Should(BeTrue())
	})

	It("should make zero API writes when nothing changed", func() {
		Expect(suite.Client.Create(suite.Ctx, newPlatform("quiet", "1.0.0",
			appsv1alpha1.PlatformComponent{Name: "db", Workload: appsv1alpha1.WorkloadStatefulSet, Ports: []appsv1alpha1.ComponentPort{{Name: "pg", Port: 5432}},
				Storage: &appsv1alpha1.ComponentStorage{Size: resource.MustParse("1Gi")}},
			appsv1alpha1.PlatformComponent{Name: "api", Config: map[string]string{"a": "b"},
				Storage: &appsv1alpha1.ComponentStorage{Size: resource.MustParse("1Gi")}},
			appsv1alpha1.PlatformComponent{Name: "agent", Workload: appsv1alpha1.WorkloadDaemonSet},
			appsv1alpha1.PlatformComponent{Name: "report", Workload: appsv1alpha1.WorkloadCronJob, Schedule: "@daily"},
		))).To(Succeed())
		Eventually(exists(&batchv1.CronJob{}, "quiet-report")).Should(Succeed())
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

	It("should generate secrets, render config templates, expose an Ingress, run the bootstrap Job once, and then make zero writes", func() {
		p := newPlatform("full", "1.0.0",
			appsv1alpha1.PlatformComponent{Name: "db", Ports: []appsv1alpha1.ComponentPort{{Name: "pg", Port: 5432}},
				Env: []corev1.EnvVar{{Name: "ADMIN_PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "full-admin"}, Key: "password"}}}},
				Hooks: &appsv1alpha1.ComponentHooks{Bootstrap: &appsv1alpha1.HookJob{Command: []string{"/bin/create-admin"}}}},
			appsv1alpha1.PlatformComponent{Name: "api", DependsOn: []string{"db"}, Ports: []appsv1alpha1.ComponentPort{{Name: "http", Port: 8080}},
				Config:  map[string]string{"api.conf": "db={{ service \"db\" \"pg\" }}\nversion={{ .Platform.Version }}\nregion={{ .Values.region }}\n"},
				Ingress: &appsv1alpha1.ComponentIngress{Host: "api.example.com", Path: "/v1"}},
		)
		p.Spec.Values = map[string]string{"region": "eu-west"}
		p.Spec.Secrets = []appsv1alpha1.PlatformSecret{{Name: "admin", Keys: []string{"password", "token"}, Length: 24}}
		Expect(suite.Client.Create(suite.Ctx, p)).To(Succeed())

		secret := &corev1.Secret{}
		Eventually(exists(secret, "full-admin")).Should(Succeed())
		Expect(secret.Data["password"]).To(HaveLen(24))
		Expect(secret.Data["token"]).To(HaveLen(24))
		Expect(secret.Data["password"]).NotTo(Equal(secret.Data["token"]))
		Expect(secret.Annotations).To(HaveKeyWithValue("kubeforge.io/retain-on-delete", "true"))
		password := string(secret.Data["password"])

		// db is Ready: its bootstrap Job runs; api waits for it.
		Eventually(exists(&appsv1.Deployment{}, "full-db")).Should(Succeed(), func() string { return fmt.Sprintf("%+v", getPlatform("full")(Default).Status) })
		makeReady("full-db")
		job := &batchv1.Job{}
		Eventually(exists(job, "full-db-bootstrap")).Should(Succeed(), func() string { return fmt.Sprintf("%+v", getPlatform("full")(Default).Status) })
		Expect(job.Spec.Template.Spec.Containers[0].Command).To(Equal([]string{"/bin/create-admin"}))
		Expect(job.Spec.Template.Spec.Containers[0].Env).To(ContainElement(HaveField("Name", "ADMIN_PASSWORD")))
		Expect(job.Spec.Template.Labels).NotTo(HaveKey(appsv1alpha1.PlatformComponentLabel))
		Eventually(componentPhase("full", "db")).Should(Equal(appsv1alpha1.ComponentDeploying))
		Consistently(gone(&appsv1.Deployment{}, "full-api"), "1s").Should(BeTrue())

		// Play the Job controller (on the Job as it is now: the engine
		// sealed it after creating it).
		Eventually(func() error {
			if err := suite.Client.Get(suite.Ctx, client.ObjectKeyFromObject(job), job); err != nil {
				return err
			}
			job.Status.Conditions = []batchv1.JobCondition{
				{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue},
				{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
			now := metav1.Now()
			job.Status.StartTime, job.Status.CompletionTime, job.Status.Succeeded = &now, &now, 1
			return suite.Client.Status().Update(suite.Ctx, job)
		}).Should(Succeed())
		Eventually(componentPhase("full", "db")).Should(Equal(appsv1alpha1.ComponentReady))
		Eventually(exists(&appsv1.Deployment{}, "full-api")).Should(Succeed())
		makeReady("full-api")
		Eventually(componentPhase("full", "api")).Should(Equal(appsv1alpha1.ComponentReady))

		cm := &corev1.ConfigMap{}
		Expect(suite.Client.Get(suite.Ctx, key("full-api-config"), cm)).To(Succeed())
		Expect(cm.Data["api.conf"]).To(Equal("db=full-db.default.svc:5432\nversion=1.0.0\nregion=eu-west\n"))
		ing := &networkingv1.Ingress{}
		Expect(suite.Client.Get(suite.Ctx, key("full-api"), ing)).To(Succeed())
		Expect(ing.Spec.Rules[0].Host).To(Equal("api.example.com"))
		Expect(ing.Spec.Rules[0].HTTP.Paths[0].Path).To(Equal("/v1"))
		Expect(ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Port.Name).To(Equal("http"))
		st := getPlatform("full")(Default).Status
		Expect(st.Components[0].Bootstrapped).To(BeTrue())
		Expect(st.Components[1].URL).To(Equal("http://api.example.com/v1"))

		// At rest, with every feature in use: nothing is written.
		settled()
		suite.Counting.Reset()
		for range 3 {
			_, err := suite.Reconciler.Reconcile(suite.Ctx, ctrl.Request{NamespacedName: key("full")})
			Expect(err).NotTo(HaveOccurred())
		}
		Expect(suite.Counting.Writes()).To(BeEmpty())

		// A values change re-renders the config and rolls api.
		hash := func(g Gomega) string {
			d := &appsv1.Deployment{}
			g.Expect(suite.Client.Get(suite.Ctx, key("full-api"), d)).To(Succeed())
			return d.Spec.Template.Annotations[appsv1alpha1.PlatformConfigHashAnnotation]
		}
		before := hash(Default)
		update("full", func(p *appsv1alpha1.Platform) { p.Spec.Values["region"] = "us-east" })
		Eventually(hash).ShouldNot(Equal(before))

		// Rotation: new values, db rolls, the annotation goes.
		dbVersion := func(g Gomega) string {
			d := &appsv1.Deployment{}
			g.Expect(suite.Client.Get(suite.Ctx, key("full-db"), d)).To(Succeed())
			return d.Spec.Template.Annotations[appsv1alpha1.PlatformSecretsVersionAnnotation]
		}
		rolledFrom := dbVersion(Default)
		Expect(rolledFrom).NotTo(BeEmpty())
		update("full", func(p *appsv1alpha1.Platform) {
			p.Annotations = map[string]string{appsv1alpha1.RotateSecretAnnotation: "admin"}
		})
		Eventually(func(g Gomega) string {
			g.Expect(suite.Client.Get(suite.Ctx, key("full-admin"), secret)).To(Succeed())
			return string(secret.Data["password"])
		}).ShouldNot(Equal(password))
		Eventually(dbVersion).ShouldNot(Equal(rolledFrom))
		Eventually(func(g Gomega) map[string]string { return getPlatform("full")(g).Annotations }).ShouldNot(HaveKey(appsv1alpha1.RotateSecretAnnotation))
		// The bootstrap Job is never run again.
		Expect(suite.Client.Get(suite.Ctx, key("full-db-bootstrap"), job)).To(Succeed())
		Expect(job.Status.Succeeded).To(Equal(int32(1)))

		// The ingress removed: pruned.
		update("full", func(p *appsv1alpha1.Platform) { p.Spec.Components[1].Ingress = nil })
		Eventually(gone(&networkingv1.Ingress{}, "full-api")).Should(BeTrue())
	})

	It("should run the preUpgrade Job with the new image first, and hold the move and the dependents when it fails", func() {
		Expect(suite.Client.Create(suite.Ctx, newPlatform("migrate", "1.0.0",
			appsv1alpha1.PlatformComponent{Name: "db", Hooks: &appsv1alpha1.ComponentHooks{PreUpgrade: &appsv1alpha1.HookJob{Args: []string{"migrate"}}}},
			appsv1alpha1.PlatformComponent{Name: "api", DependsOn: []string{"db"}},
		))).To(Succeed())
		Eventually(exists(&appsv1.Deployment{}, "migrate-db")).Should(Succeed())
		makeReady("migrate-db")
		Eventually(exists(&appsv1.Deployment{}, "migrate-api")).Should(Succeed())
		makeReady("migrate-api")
		Eventually(componentPhase("migrate", "api")).Should(Equal(appsv1alpha1.ComponentReady))

		update("migrate", func(p *appsv1alpha1.Platform) { p.Spec.Version = "2.0.0" })
		var job *batchv1.Job
		Eventually(func(g Gomega) {
			jobs := &batchv1.JobList{}
			g.Expect(suite.Client.List(suite.Ctx, jobs, client.InNamespace("default"), client.MatchingLabels{appsv1alpha1.PlatformHookLabel: "pre-upgrade"})).To(Succeed())
			g.Expect(jobs.Items).To(HaveLen(1))
			job = &jobs.Items[0]
		}).Should(Succeed())
		Expect(job.Name).To(HavePrefix("migrate-db-pre-upgrade-"))
		Expect(job.Spec.Template.Spec.Containers[0].Image).To(Equal("reg.example.com/acme/db:2.0.0"))
		Expect(job.Spec.Template.Spec.Containers[0].Args).To(Equal([]string{"migrate"}))
		Consistently(image("migrate-db"), "1s").Should(Equal("reg.example.com/acme/db:1.0.0"))

		Eventually(func() error { // on the Job as it is now (sealed after its create)
			if err := suite.Client.Get(suite.Ctx, client.ObjectKeyFromObject(job), job); err != nil {
				return err
			}
			now := metav1.Now()
			job.Status.StartTime = &now
			job.Status.Conditions = []batchv1.JobCondition{
				{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit"},
				{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit"}}
			job.Status.Failed = 3
			return suite.Client.Status().Update(suite.Ctx, job)
		}).Should(Succeed())
		Eventually(componentPhase("migrate", "db")).Should(Equal(appsv1alpha1.ComponentFailed))
		p := getPlatform("migrate")(Default)
		Expect(p.Status.Components[0].Message).To(ContainSubstring("BackoffLimitExceeded"))
		Expect(p.Status.Version).To(Equal("1.0.0"))
		d := meta.FindStatusCondition(p.Status.Conditions, conditions.Degraded)
		Expect(d).NotTo(BeNil())
		Expect(d.Reason).To(Equal("UpgradePaused"))
		Consistently(image("migrate-db"), "1s").Should(Equal("reg.example.com/acme/db:1.0.0"))
		Expect(image("migrate-api")(Default)).To(Equal("reg.example.com/acme/api:1.0.0"))
	})

	It("should report a dependency cycle that got past admission as Degraded and create nothing", func() {
		Expect(suite.Client.Create(suite.Ctx, newPlatform("cycle", "1.0.0",
			appsv1alpha1.PlatformComponent{Name: "a", DependsOn: []string{"b"}},
			appsv1alpha1.PlatformComponent{Name: "b", DependsOn: []string{"a"}},
		))).To(Succeed())
		Eventually(func(g Gomega) *metav1.Condition {
			return meta.FindStatusCondition(getPlatform("cycle")(g).Status.Conditions, conditions.Degraded)
		}).Should(And(Not(BeNil()), HaveField("Reason", conditions.ReasonInvalidSpec), HaveField("Message", ContainSubstring("cycle"))))
		Expect(getPlatform("cycle")(Default).Status.Phase).To(Equal(appsv1alpha1.PlatformDegraded))
		Expect(gone(&appsv1.Deployment{}, "cycle-a")()).To(BeTrue())
	})

	It("should point no component at a Service someone made under another component's name: every Service proven first, no workload after a NameConflict", func() {
		planted := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "squat-api", Namespace: "default"},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}, Selector: map[string]string{"app": "theirs"}}}
		Expect(suite.Client.Create(suite.Ctx, planted)).To(Succeed())
		// web, before api and not depending on it, is configured with api's Service.
		Expect(suite.Client.Create(suite.Ctx, newPlatform("squat", "1.0.0",
			appsv1alpha1.PlatformComponent{Name: "web", Ports: []appsv1alpha1.ComponentPort{{Name: "http", Port: 8080}},
				Config: map[string]string{"upstream.conf": `api = {{ service "api" "http" }}`}},
			appsv1alpha1.PlatformComponent{Name: "api", Ports: []appsv1alpha1.ComponentPort{{Name: "http", Port: 8080}}},
		))).To(Succeed())
		Eventually(func(g Gomega) *metav1.Condition {
			return meta.FindStatusCondition(getPlatform("squat")(g).Status.Conditions, conditions.Degraded)
		}).Should(And(Not(BeNil()), HaveField("Reason", conditions.ReasonNameConflict), HaveField("Message", ContainSubstring("Service/squat-api"))))
		Consistently(func() bool {
			return gone(&appsv1.Deployment{}, "squat-web")() && gone(&corev1.ConfigMap{}, "squat-web")()
		}, "2s").Should(BeTrue(), "web is not made pointing at the planted Service")
		got := &corev1.Service{}
		Expect(suite.Client.Get(suite.Ctx, key("squat-api"), got)).To(Succeed())
		Expect(got.Spec.Selector).To(Equal(map[string]string{"app": "theirs"}), "left as it was")
	})

	It("should make a component that reads a later component's ConfigMap by name read its content from its own template, and neither mount a ConfigMap", func() {
		web := appsv1alpha1.PlatformComponent{Name: "web", Env: []corev1.EnvVar{{Name: "API_CONF", ValueFrom: &corev1.EnvVarSource{
			ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "reads-api-config"}, Key: "api.conf"}}}}}
		api := appsv1alpha1.PlatformComponent{Name: "api", Config: map[string]string{"api.conf": "port = 8080"}}
		Expect(suite.Client.Create(suite.Ctx, newPlatform("reads", "1.0.0", web, api))).To(Succeed())
		webDep, apiDep := &appsv1.Deployment{}, &appsv1.Deployment{}
		Eventually(exists(webDep, "reads-web")).Should(Succeed())
		Eventually(exists(apiDep, "reads-api")).Should(Succeed())
		Eventually(func() error { return suite.Client.Get(suite.Ctx, key("reads-api-config"), &corev1.ConfigMap{}) }).Should(Succeed())
		// A ConfigMap is anyone's to rewrite who may write ConfigMaps: what a
		// component reads of one is in its pod template instead.
		Expect(webDep.Spec.Template.Spec.Containers[0].Env).To(ContainElement(corev1.EnvVar{Name: "API_CONF", Value: "port = 8080"}))
		Expect(apiDep.Spec.Template.Spec.Volumes).To(ContainElement(And(
			HaveField("Name", "config"), HaveField("VolumeSource.ConfigMap", BeNil()), HaveField("VolumeSource.DownwardAPI", Not(BeNil())))))
		Expect(apiDep.Spec.Template.Annotations).To(ContainElement("port = 8080"))
		Consistently(func(g Gomega) *metav1.Condition {
			return meta.FindStatusCondition(getPlatform("reads")(g).Status.Conditions, conditions.Degraded)
		}, "1s").Should(Or(BeNil(), HaveField("Status", metav1.ConditionFalse)), "no apply refused")
	})

	It("should label everything with the common labels", func() {
		Expect(suite.Client.Create(suite.Ctx, newPlatform("labels", "1.0.0", appsv1alpha1.PlatformComponent{Name: "x"}))).To(Succeed())
		d := &appsv1.Deployment{}
		Eventually(exists(d, "labels-x")).Should(Succeed())
		Expect(d.Labels).To(HaveKeyWithValue(engine.LabelManagedBy, "kubeforge"))
		Expect(d.Labels).To(HaveKeyWithValue(engine.LabelInstance, "labels"))
		Expect(d.Labels).To(HaveKeyWithValue(engine.LabelComponent, "x"))
		Expect(d.Spec.Template.Labels).To(HaveKeyWithValue(appsv1alpha1.PlatformLabel, "labels"))
	})
})
