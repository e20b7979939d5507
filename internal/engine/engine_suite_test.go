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
	"fmt"
	"sort"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"gomodules.xyz/jsonpatch/v2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/kubeforge/kubeforge/api/networking/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/engine"
	"github.com/kubeforge/kubeforge/internal/test/testenv"
)

var (
	env *testenv.Env
	ctx = context.Background()
)

func TestEngine(t *testing.T) {
	testenv.Run(t, testenv.Suite{
		Name: "Owned-object engine",
		// cert-manager's CRDs: the engine is tried on every type a kind creates;
		// kubeforge's: the manager's roles are held to discovery (scope_test.go).
		Options: testenv.Options{CertManagerCRDs: true, CRDs: true},
		Setup:   func(_ context.Context, e *testenv.Env) error { env = e; return nil },
	})
}

// The owner here is a ConfigMap: the engine works for any owner kind.
func newOwner(name string) *corev1.ConfigMap {
	o := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
	Expect(env.Client.Create(ctx, o)).To(Succeed())
	return o
}

// newBalancer is a Balancer of one backend, not created.
func newBalancer(name string) *networkingv1alpha1.Balancer {
	return &networkingv1alpha1.Balancer{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: networkingv1alpha1.BalancerSpec{
			Selector: map[string]string{"app": "x"},
			Ports:    []networkingv1alpha1.BalancerPort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80}},
			Backends: []networkingv1alpha1.BalancerBackend{{Name: "v1", Weight: new(int32(1)), Selector: map[string]string{"version": "v1"}}},
		},
	}
}

func service(name string, port int32, labels map[string]string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "x"},
			Ports:    []corev1.ServicePort{{Name: "p", Port: port, TargetPort: intstr.FromInt32(port)}},
		},
	}
}

func getService(name string) *corev1.Service {
	s := &corev1.Service{}
	Expect(env.Client.Get(ctx, types.NamespacedName{Namespace: "default", Name: name}, s)).To(Succeed())
	return s
}

var _ = Describe("Engine", func() {
	var (
		counting *testenv.CountingClient
		eng      *engine.Engine
	)
	BeforeEach(func() {
		counting = testenv.NewCountingClient(env.Client)
		eng = &engine.Engine{Client: counting, Scheme: env.Scheme, Proof: env.Proof}
	})

	Context("When applying desired objects", func() {
		It("should create them with the owner reference and the common labels, then write nothing", func() {
			owner := newOwner("create")
			res, err := eng.Apply(ctx, owner, []client.Object{service("create-a", 80, map[string]string{"extra": "1"})}, &corev1.Service{})
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Created).To(Equal([]string{"Service/create-a"}))

			s := getService("create-a")
			Expect(metav1.IsControlledBy(s, owner)).To(BeTrue())
			Expect(s.Labels).To(Equal(map[string]string{
				"extra": "1", engine.LabelManagedBy: "kubeforge", engine.LabelInstance: "create", engine.LabelComponent: "service",
			}))
			Expect(s.Annotations).To(HaveKey(engine.AnnotationDesiredHash))

			counting.Reset()
			res, err = eng.Apply(ctx, owner, []client.Object{service("create-a", 80, map[string]string{"extra": "1"})}, &corev1.Service{})
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Unchanged).To(Equal([]string{"Service/create-a"}))
			Expect(res.Writes()).To(BeZero())
			Expect(counting.Writes()).To(BeEmpty())
		})

		It("should record one Created event naming every object an apply created, and one Updated event for what it updated, each apply's its own", func() {
			cs, err := kubernetes.NewForConfig(env.Config)
			Expect(err).NotTo(HaveOccurred())
			broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: cs.EventsV1()})
			stop := make(chan struct{})
			DeferCleanup(func() { close(stop) })
			broadcaster.StartRecordingToSink(stop)
			eng.Recorder = broadcaster.NewRecorder(env.Scheme, "kubeforge-test")
			owner := newOwner("one-event")
			notes := func() []string {
				list := &eventsv1.EventList{}
				Expect(env.Client.List(ctx, list, client.InNamespace("default"))).To(Succeed())
				var out []string
				for _, ev := range list.Items {
					if ev.Regarding.UID == owner.UID {
						out = append(out, fmt.Sprintf("%s %s (%d)", ev.Reason, ev.Note, max(1, seriesCount(ev.Series))))
					}
				}
				sort.Strings(out)
				return out
			}
			desired := [][]client.Object{{service("one-event-a", 80, nil), service("one-event-b", 81, nil)}, {service("one-event-c", 82, nil)}}
			res, err := eng.ApplyStages(ctx, owner, desired, &corev1.Service{})
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Created).To(HaveLen(3))
			first := "Created Created " + strings.Join(res.Created, ", ") + " (1)"
			Eventually(notes).Should(Equal([]string{first}))

			By("a second apply that creates two more: an event of its own, not a repeat of the first")
			desired = append(desired, []client.Object{service("one-event-d", 83, nil), service("one-event-e", 84, nil)})
			res, err = eng.ApplyStages(ctx, owner, desired, &corev1.Service{})
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Created).To(ConsistOf("Service/one-event-d", "Service/one-event-e"))
			second := "Created Created " + strings.Join(res.Created, ", ") + " (1)"
			Eventually(notes).Should(ConsistOf(first, second))

			By("a change of one object: one Updated event naming it")
			desired[1] = []client.Object{service("one-event-c", 85, nil)}
			res, err = eng.ApplyStages(ctx, owner, desired, &corev1.Service{})
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Updated).To(Equal([]string{"Service/one-event-c"}))
			Eventually(notes).Should(ConsistOf(first, second, "Updated Updated Service/one-event-c (1)"))
		})

		It("should give back each object as the API server answered, or as cached when unchanged", func() {
			owner := newOwner("live")
			res, err := eng.Apply(ctx, owner, []client.Object{service("live-a", 80, nil)}, &corev1.Service{})
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Created).To(Equal([]string{"Service/live-a"}))
			// The server's answer: it has a UID, a resourceVersion and the
			// ClusterIP the API server allocated, none of which the desired
			// object had.
			created := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "live-a"}}
			Expect(res.LiveObject(env.Scheme, created)).To(BeTrue())
			Expect(created.UID).NotTo(BeEmpty())
			Expect(created.ResourceVersion).NotTo(BeEmpty())
			Expect(created.Spec.ClusterIP).NotTo(BeEmpty())
			Expect(metav1.IsControlledBy(created, owner)).To(BeTrue())

			Eventually(func() error { return env.Client.Get(ctx, client.ObjectKeyFromObject(created), &corev1.Service{}) }).Should(Succeed())
			res, err = eng.Apply(ctx, owner, []client.Object{service("live-a", 80, nil)}, &corev1.Service{})
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Unchanged).To(Equal([]string{"Service/live-a"}))
			unchanged := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "live-a"}}
			Expect(res.LiveObject(env.Scheme, unchanged)).To(BeTrue())
			Expect(unchanged.UID).To(Equal(created.UID))
			Expect(unchanged.Spec.ClusterIP).To(Equal(created.Spec.ClusterIP))

			// Another kind or name is not there.
			Expect(res.LiveObject(env.Scheme, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "other"}})).To(BeFalse())
			Expect(res.LiveObject(env.Scheme, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "live-a"}})).To(BeFalse())
		})

		It("should apply a retained object without an owner reference, never prune it, and move it between the two", func() {
			owner := newOwner("retain")
			// A builder claims an object that it may retain, retained or not,
			// so the owner can move it between the two.
			owned := func() *corev1.Service { s := service("retain-a", 80, nil); engine.Claim(s, ""); return s }
			kept := func() *corev1.Service { s := owned(); engine.Retain(s); return s }
			_, err := eng.Apply(ctx, owner, []client.Object{kept()}, &corev1.Service{})
			Expect(err).NotTo(HaveOccurred())
			Expect(metav1.GetControllerOf(getService("retain-a"))).To(BeNil())
			Expect(getService("retain-a").Labels).To(HaveKeyWithValue(engine.LabelInstance, "retain"))

			// Not desired any more: a retained object is not the engine's to delete.
			res, err := eng.Apply(ctx, owner, nil, &corev1.Service{})
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Pruned).To(BeEmpty())
			getService("retain-a")

			// Owned again, then retained again: the owner reference comes and goes.
			_, err = eng.Apply(ctx, owner, []client.Object{owned()}, &corev1.Service{})
			Expect(err).NotTo(HaveOccurred())
			Expect(metav1.IsControlledBy(getService("retain-a"), owner)).To(BeTrue())
			_, err = eng.Apply(ctx, owner, []client.Object{kept()}, &corev1.Service{})
			Expect(err).NotTo(HaveOccurred())
			Expect(getService("retain-a").OwnerReferences).To(BeEmpty())

			counting.Reset()
			res, err = eng.Apply(ctx, owner, []client.Object{kept()}, &corev1.Service{})
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Writes()).To(BeZero())
		})

		It("should create a create-only object once and never update it", func() {
			owner := newOwner("createonly")
			once := func(port int32) *corev1.Service {
				s := service("createonly-a", port, nil)
				engine.CreateOnly(s)
				return s
			}
			res, err := eng.Apply(ctx, owner, []client.Object{once(80)}, &corev1.Service{})
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Created).To(Equal([]string{"Service/createonly-a"}))
			Expect(metav1.IsControlledBy(getService("createonly-a"), owner)).To(BeTrue())

			counting.Reset()
			res, err = eng.Apply(ctx, owner, []client.Object{once(81)}, &corev1.Service{})
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Writes()).To(BeZero())
			Expect(counting.Writes()).To(BeEmpty())
			Expect(getService("createonly-a").Spec.Ports[0].Port).To(Equal(int32(80)))
		})

		It("should update an object when a field is removed from the desired object", func() {
			owner := newOwner("removal")
			_, err := eng.Apply(ctx, owner, []client.Object{service("removal-a", 80, map[string]string{"gone": "soon"})})
			Expect(err).NotTo(HaveOccurred())
			// Made by a create (absent from the cache, so a create that fails
			// on what exists), its fields are recorded as the engine's apply,
			// as if server-side apply had made it: else the label below
			// would stay, another writer's field.
			var managers []string
			for _, m := range getService("removal-a").ManagedFields {
				managers = append(managers, m.Manager+"/"+string(m.Operation))
			}
			Expect(managers).To(ConsistOf(engine.FieldOwner+"/Apply", engine.ProofFieldOwner+"/Update"))
			res, err := eng.Apply(ctx, owner, []client.Object{service("removal-a", 80, nil)})
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Updated).To(Equal([]string{"Service/removal-a"}))
			Expect(getService("removal-a").Labels).NotTo(HaveKey("gone"))
		})

		It("should keep what another writer wrote between its create and its seal, and still record the create as its apply", func() {
			owner := newOwner("between")
			counting.AfterCreate(func(name string) {
				if name != "Service/between-a" {
					return
				}
				// Another controller's write, before the engine's seal.
				patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"other":"x"}}}`))
				Expect(env.Client.Patch(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name[len("Service/"):], Namespace: "default"}},
					patch, client.FieldOwner("someone"))).To(Succeed())
			})
			DeferCleanup(func() { counting.AfterCreate(nil) })
			_, err := eng.Apply(ctx, owner, []client.Object{service("between-a", 80, map[string]string{"gone": "soon"})})
			Expect(err).NotTo(HaveOccurred())
			s := getService("between-a")
			Expect(eng.Owns(owner, s)).To(BeTrue())
			var managers []string
			for _, m := range s.ManagedFields {
				managers = append(managers, m.Manager+"/"+string(m.Operation))
			}
			Expect(managers).To(ConsistOf(engine.FieldOwner+"/Apply", engine.ProofFieldOwner+"/Update", "someone/Update"))
			_, err = eng.Apply(ctx, owner, []client.Object{service("between-a", 80, nil)})
			Expect(err).NotTo(HaveOccurred())
			s = getService("between-a")
			Expect(s.Labels).NotTo(HaveKey("gone"))
			Expect(s.Annotations).To(HaveKeyWithValue("other", "x"))
		})

		It("should repair drift and keep fields that others own", func() {
			owner := newOwner("drift")
			_, err := eng.Apply(ctx, owner, []client.Object{service("drift-a", 80, nil)})
			Expect(err).NotTo(HaveOccurred())

			s := getService("drift-a")
			patch := client.MergeFrom(s.DeepCopy())
			s.Spec.Ports[0].Port = 9999
			s.Annotations["someone.else/note"] = "kept"
			Expect(env.Client.Patch(ctx, s, patch)).To(Succeed())

			res, err := eng.Apply(ctx, owner, []client.Object{service("drift-a", 80, nil)})
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Updated).To(Equal([]string{"Service/drift-a"}))
			s = getService("drift-a")
			Expect(s.Spec.Ports[0].Port).To(Equal(int32(80)))
			Expect(s.Annotations).To(HaveKeyWithValue("someone.else/note", "kept"))
		})

		It("should prune objects it created earlier and no longer wants, and only those", func() {
			owner := newOwner("prune")
			other := newOwner("prune-other")
			_, err := eng.Apply(ctx, owner, []client.Object{service("prune-a", 80, nil), service("prune-b", 81, nil)}, &corev1.Service{})
			Expect(err).NotTo(HaveOccurred())
			// Same instance label, different owner: must survive.
			_, err = eng.Apply(ctx, other, []client.Object{service("prune-c", 82, map[string]string{engine.LabelInstance: "prune"})}, &corev1.Service{})
			Expect(err).NotTo(HaveOccurred())
			Expect(getService("prune-c").Labels).To(HaveKeyWithValue(engine.LabelInstance, "prune-other"))

			counting.Reset()
			res, err := eng.Apply(ctx, owner, []client.Object{service("prune-a", 80, nil)}, &corev1.Service{})
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Pruned).To(Equal([]string{"Service/prune-b"}))
			Expect(counting.Writes()).To(ConsistOf(ContainSubstring("delete")))
			Eventually(func() error {
				return env.Client.Get(ctx, types.NamespacedName{Namespace: "default", Name: "prune-b"}, &corev1.Service{})
			}).Should(MatchError(ContainSubstring("not found")))
			getService("prune-a")
			getService("prune-c")
		})

		It("should refuse an object that belongs to another owner, name that owner, and apply the objects before it only", func() {
			owner := newOwner("conflict")
			other := newOwner("conflict-other")
			_, err := eng.Apply(ctx, other, []client.Object{service("conflict-a", 80, nil)})
			Expect(err).NotTo(HaveOccurred())

			res, err := eng.Apply(ctx, owner, []client.Object{service("conflict-0", 79, nil), service("conflict-a", 80, nil),
				service("conflict-b", 81, nil)}, &corev1.Service{})
			Expect(err).To(MatchError(ContainSubstring("Service/conflict-a exists and belongs to ConfigMap conflict-other")))
			Expect(engine.FailureReason(err)).To(Equal("NameConflict"))
			Expect(res.Created).To(Equal([]string{"Service/conflict-0"}))
			Expect(metav1.IsControlledBy(getService("conflict-a"), other)).To(BeTrue())
		})
	})

	Context("When applying desired objects in stages", func() {
		It("should apply every object of a stage, also beside one that is not the owner's, and no later stage after that one", func() {
			owner := newOwner("stages")
			other := newOwner("stages-other")
			_, err := eng.Apply(ctx, other, []client.Object{service("stages-b", 80, nil)})
			Expect(err).NotTo(HaveOccurred())

			res, err := eng.ApplyStages(ctx, owner, [][]client.Object{
				{service("stages-a", 79, nil), service("stages-b", 80, nil), service("stages-c", 81, nil)},
				{service("stages-d", 82, nil)},
			}, &corev1.Service{})
			Expect(err).To(MatchError(ContainSubstring("Service/stages-b exists and belongs to ConfigMap stages-other")))
			Expect(res.Created).To(Equal([]string{"Service/stages-a", "Service/stages-c"}), "in the stage's order")
			Expect(metav1.IsControlledBy(getService("stages-b"), other)).To(BeTrue())
			Expect(apierrors.IsNotFound(env.Client.Get(ctx, types.NamespacedName{Namespace: "default", Name: "stages-d"}, &corev1.Service{}))).
				To(BeTrue(), "the stage after a conflict is not applied")

			// Once the conflict is gone, every stage converges, and a pass
			// over what is already right writes nothing.
			Expect(env.Client.Delete(ctx, getService("stages-b"))).To(Succeed())
			stages := [][]client.Object{{service("stages-a", 79, nil), service("stages-b", 80, nil), service("stages-c", 81, nil)},
				{service("stages-d", 82, nil)}}
			res, err = eng.ApplyStages(ctx, owner, stages, &corev1.Service{})
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Created).To(Equal([]string{"Service/stages-b", "Service/stages-d"}))
			counting.Reset()
			res, err = eng.ApplyStages(ctx, owner, stages, &corev1.Service{})
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Unchanged).To(HaveLen(4))
			Expect(counting.Writes()).To(BeEmpty())
		})
	})

	Context("When syncing a finalizer", func() {
		It("should add and remove it with one patch each, none when it is already right, and let a deleted object go", func() {
			const f = "kubeforge.io/test"
			o := newOwner("finalized")
			Expect(engine.SyncFinalizer(ctx, counting, o, f, true)).To(Succeed())
			Expect(engine.SyncFinalizer(ctx, counting, o, f, true)).To(Succeed())
			Expect(counting.Writes()).To(HaveLen(1))
			live := &corev1.ConfigMap{}
			Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(o), live)).To(Succeed())
			Expect(live.Finalizers).To(ConsistOf(f))

			Expect(env.Client.Delete(ctx, live)).To(Succeed())
			Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(o), live)).To(Succeed())
			Expect(live.DeletionTimestamp).NotTo(BeNil(), "the finalizer holds it")
			counting.Reset()
			Expect(engine.SyncFinalizer(ctx, counting, live, f, true)).To(Succeed())
			Expect(counting.Writes()).To(BeEmpty(), "no finalizer is added to an object being deleted")
			stale := live.DeepCopy()
			Expect(engine.SyncFinalizer(ctx, counting, live, f, false)).To(Succeed())
			Expect(counting.Writes()).To(HaveLen(1))
			Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(o), live)).To(MatchError(ContainSubstring("not found")))
			Expect(engine.SyncFinalizer(ctx, counting, stale, f, false)).To(Succeed(), "removing from an object already gone is no error")
			Expect(counting.Writes()).To(HaveLen(2))
		})

		It("should never drop a finalizer another writer added since the object was read, and wait when the list changed before its own", func() {
			const f, theirs, first = "kubeforge.io/test", "example.com/theirs", "example.com/first"
			o := newOwner("finalized-shared")
			Expect(engine.SyncFinalizer(ctx, env.Client, o, f, true)).To(Succeed())
			key := client.ObjectKeyFromObject(o)
			write := func(finalizers ...string) {
				live := &corev1.ConfigMap{}
				ExpectWithOffset(1, env.Client.Get(ctx, key, live)).To(Succeed())
				live.Finalizers = finalizers
				ExpectWithOffset(1, env.Client.Update(ctx, live)).To(Succeed())
			}
			finalizers := func() []string {
				live := &corev1.ConfigMap{}
				ExpectWithOffset(1, env.Client.Get(ctx, key, live)).To(Succeed())
				return live.Finalizers
			}

			By("removing its own from a copy read before another writer appended theirs")
			read := o.DeepCopy() // what a cache behind the other writer still holds
			write(f, theirs)
			Expect(engine.SyncFinalizer(ctx, env.Client, read, f, false)).To(Succeed())
			Expect(finalizers()).To(Equal([]string{theirs}), "theirs kept, its own gone")
			Expect(read.Finalizers).To(Equal([]string{theirs}), "the copy takes the API server's answer")

			By("adding its own to a copy read before another writer changed the list")
			read = &corev1.ConfigMap{}
			Expect(env.Client.Get(ctx, key, read)).To(Succeed())
			write(first, theirs)
			err := engine.SyncFinalizer(ctx, env.Client, read, f, true)
			Expect(engine.Waiting(err)).To(BeTrue(), "a wait for the next pass, not a failure: %v", err)
			Expect(finalizers()).To(Equal([]string{first, theirs}), "nothing written over the newer object")
			Expect(read.Finalizers).To(Equal([]string{theirs}), "the copy keeps what was read, not what was refused")
			Expect(env.Client.Get(ctx, key, read)).To(Succeed())
			Expect(engine.SyncFinalizer(ctx, env.Client, read, f, true)).To(Succeed())
			Expect(finalizers()).To(Equal([]string{first, theirs, f}))

			By("removing its own from a copy read before the list changed ahead of it")
			read = &corev1.ConfigMap{}
			Expect(env.Client.Get(ctx, key, read)).To(Succeed())
			write(theirs, f) // its own moved from index 2 to 1
			err = engine.SyncFinalizer(ctx, env.Client, read, f, false)
			Expect(engine.Waiting(err)).To(BeTrue(), "a wait for the next pass, not a failure: %v", err)
			Expect(finalizers()).To(Equal([]string{theirs, f}), "nothing written over the newer object")
			Expect(env.Client.Get(ctx, key, read)).To(Succeed())
			Expect(engine.SyncFinalizer(ctx, env.Client, read, f, false)).To(Succeed(), "the next pass, on what is there now")
			Expect(finalizers()).To(Equal([]string{theirs}))
			write()
		})

		It("should remove no finalizer from an object made anew under the name since the one it read, and wait", func() {
			const f = "kubeforge.io/test"
			o := newOwner("finalized-anew")
			Expect(engine.SyncFinalizer(ctx, env.Client, o, f, true)).To(Succeed())
			read := o.DeepCopy()
			By("the object read let go by another writer and deleted, and one made anew with the finalizer at the same index")
			o.Finalizers = nil
			Expect(env.Client.Update(ctx, o)).To(Succeed())
			Expect(env.Client.Delete(ctx, o)).To(Succeed())
			anew := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace, Finalizers: []string{f}}}
			Expect(env.Client.Create(ctx, anew)).To(Succeed())
			Expect(anew.UID).NotTo(Equal(read.UID))

			err := engine.SyncFinalizer(ctx, env.Client, read, f, false)
			Expect(engine.Waiting(err)).To(BeTrue(), "a wait for the next pass, not a failure: %v", err)
			live := &corev1.ConfigMap{}
			Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(anew), live)).To(Succeed())
			Expect(live.Finalizers).To(ConsistOf(f), "the new object's finalizer is its own")
			Expect(engine.SyncFinalizer(ctx, env.Client, live, f, false)).To(Succeed(), "the next pass, on what is there now")
		})
	})

	Context("When patching an object it read", func() {
		It("should patch the object it read, and nothing onto one made anew under the name since", func() {
			o := newOwner("patched-anew")
			read := o.DeepCopy()
			done, err := engine.PatchAsRead(ctx, env.Client, read, jsonpatch.NewOperation("add", "/data", map[string]string{"k": "first"}))
			Expect(err).NotTo(HaveOccurred())
			Expect(done).To(BeTrue())
			live := &corev1.ConfigMap{}
			Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(o), live)).To(Succeed())
			Expect(live.Data).To(Equal(map[string]string{"k": "first"}))

			By("the object read deleted and one made anew under its name")
			Expect(env.Client.Delete(ctx, live)).To(Succeed())
			anew := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace}, Data: map[string]string{"k": "theirs"}}
			Expect(env.Client.Create(ctx, anew)).To(Succeed())
			done, err = engine.PatchAsRead(ctx, env.Client, read, jsonpatch.NewOperation("add", "/data", map[string]string{"k": "stale"}))
			Expect(err).NotTo(HaveOccurred(), "nothing left to act on is no failure")
			Expect(done).To(BeFalse())
			Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(o), live)).To(Succeed())
			Expect(live.Data).To(Equal(map[string]string{"k": "theirs"}), "the new object is left as its maker wrote it")

			By("and nothing at all once it is gone")
			Expect(env.Client.Delete(ctx, live)).To(Succeed())
			done, err = engine.PatchAsRead(ctx, env.Client, read, jsonpatch.NewOperation("add", "/data", map[string]string{"k": "stale"}))
			Expect(err).NotTo(HaveOccurred())
			Expect(done).To(BeFalse())
		})
	})

	Context("When patching an object whose spec changed since it was read", func() {
		It("should not patch it from the stale read, and patch it once read again", func() {
			b := newBalancer("patched-changed")
			Expect(env.Client.Create(ctx, b)).To(Succeed())
			stale := b.DeepCopy()
			b.Spec.Backends[0].Weight = new(int32(2))
			Expect(env.Client.Update(ctx, b)).To(Succeed())
			Expect(b.Generation).To(BeNumerically(">", stale.Generation))
			done, err := engine.PatchAsRead(ctx, env.Client, stale, jsonpatch.NewOperation("replace", "/spec/backends/0/weight", 3))
			Expect(err).NotTo(HaveOccurred(), "a spec changed since is no failure")
			Expect(done).To(BeFalse())
			live := &networkingv1alpha1.Balancer{}
			Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(b), live)).To(Succeed())
			Expect(*live.Spec.Backends[0].Weight).To(Equal(int32(2)), "the change since the read is kept")

			done, err = engine.PatchAsRead(ctx, env.Client, live, jsonpatch.NewOperation("replace", "/spec/backends/0/weight", 3))
			Expect(err).NotTo(HaveOccurred())
			Expect(done).To(BeTrue())
		})
	})

	Context("When an object makes volume claims", func() {
		It("should make no claim that names no storage class while the cluster has no default StorageClass, and make it once it has one", func() {
			claim := func(name string, class *string) *corev1.PersistentVolumeClaim {
				return &corev1.PersistentVolumeClaim{
					ObjectMeta: metav1.ObjectMeta{Name: name},
					Spec: corev1.PersistentVolumeClaimSpec{
						AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
						StorageClassName: class,
						Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
					},
				}
			}
			setDefault := func(on bool) {
				sc := &storagev1.StorageClass{}
				Expect(env.Client.Get(ctx, client.ObjectKey{Name: testenv.DefaultStorageClass}, sc)).To(Succeed())
				if on {
					sc.Annotations = map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}
				} else {
					sc.Annotations = nil
				}
				Expect(env.Client.Update(ctx, sc)).To(Succeed())
			}
			setDefault(false)
			DeferCleanup(setDefault, true)
			owner := newOwner("unclassed")
			pod := func() client.Object {
				return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "unclassed-user"}, Spec: corev1.PodSpec{
					Containers: []corev1.Container{{Name: "c", Image: "nginx"}},
					Volumes: []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{
						PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "unclassed-none"}}}}}}
			}
			desired := func() []client.Object {
				return []client.Object{claim("unclassed-named", new("fast")), claim("unclassed-none", nil), pod()}
			}
			_, err := eng.Apply(ctx, owner, desired(), &corev1.PersistentVolumeClaim{}, &corev1.Pod{})
			Expect(err).To(HaveOccurred())
			Expect(engine.FailureReason(err)).To(Equal(engine.ReasonNoDefaultStorageClass))
			Expect(err.Error()).To(ContainSubstring("PersistentVolumeClaim/unclassed-none is a volume claim that names no storage class, and the cluster has no default StorageClass"))
			Expect(env.Client.Get(ctx, types.NamespacedName{Namespace: "default", Name: "unclassed-none"}, &corev1.PersistentVolumeClaim{})).
				To(Satisfy(apierrors.IsNotFound), "a claim that would bind any volume without a class is not made")
			Expect(env.Client.Get(ctx, types.NamespacedName{Namespace: "default", Name: "unclassed-named"}, &corev1.PersistentVolumeClaim{})).
				To(Succeed(), "a claim of a named class is made")
			Expect(env.Client.Get(ctx, types.NamespacedName{Namespace: "default", Name: "unclassed-user"}, &corev1.Pod{})).
				To(Satisfy(apierrors.IsNotFound), "nothing that mounts the claim by name is made: a claim someone else made under it would take its place")

			By("an administrator marks a default StorageClass")
			setDefault(true)
			res, err := eng.Apply(ctx, owner, desired(), &corev1.PersistentVolumeClaim{}, &corev1.Pod{})
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Created).To(Equal([]string{"PersistentVolumeClaim/unclassed-none", "Pod/unclassed-user"}))
		})

		It("should still update an object whose claims name no class when the update adds none, and refuse one that adds one, in a cluster without a default StorageClass", func() {
			deployment := func(replicas int32, volumes int) *appsv1.Deployment {
				d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "scaled"}, Spec: appsv1.DeploymentSpec{
					Replicas: &replicas,
					Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "scaled"}},
					Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "scaled"}},
						Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}}}
				for i := range volumes {
					d.Spec.Template.Spec.Volumes = append(d.Spec.Template.Spec.Volumes, corev1.Volume{Name: fmt.Sprintf("v%d", i),
						VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{
							Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
								Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}}}})
				}
				return d
			}
			owner := newOwner("scaled")
			_, err := eng.Apply(ctx, owner, []client.Object{deployment(1, 1)}, &appsv1.Deployment{})
			Expect(err).NotTo(HaveOccurred(), "made while the cluster has a default class")
			sc := &storagev1.StorageClass{}
			Expect(env.Client.Get(ctx, client.ObjectKey{Name: testenv.DefaultStorageClass}, sc)).To(Succeed())
			sc.Annotations = nil
			Expect(env.Client.Update(ctx, sc)).To(Succeed())
			DeferCleanup(func() {
				Expect(env.Client.Get(ctx, client.ObjectKey{Name: testenv.DefaultStorageClass}, sc)).To(Succeed())
				sc.Annotations = map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}
				Expect(env.Client.Update(ctx, sc)).To(Succeed())
			})
			res, err := eng.Apply(ctx, owner, []client.Object{deployment(0, 1)}, &appsv1.Deployment{})
			Expect(err).NotTo(HaveOccurred(), "a scale adds no claim")
			Expect(res.Updated).To(Equal([]string{"Deployment/scaled"}))
			_, err = eng.Apply(ctx, owner, []client.Object{deployment(0, 2)}, &appsv1.Deployment{})
			Expect(engine.FailureReason(err)).To(Equal(engine.ReasonNoDefaultStorageClass))
			Expect(err.Error()).To(ContainSubstring("spec.template.spec.volumes[1].ephemeral.volumeClaimTemplate"))
		})
	})

	Context("When writing status", func() {
		It("should write what it computed onto the object it read, and nothing onto one made anew under the name since", func() {
			b := newBalancer("status-anew")
			Expect(env.Client.Create(ctx, b.DeepCopy())).To(Succeed())
			read := &networkingv1alpha1.Balancer{}
			Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(b), read)).To(Succeed())
			computed := read.DeepCopy()
			computed.Status.Selector = "from the object read"
			wrote, err := engine.PatchStatus(ctx, env.Client, read, computed.DeepCopy())
			Expect(err).NotTo(HaveOccurred())
			Expect(wrote).To(BeTrue())
			live := &networkingv1alpha1.Balancer{}
			Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(b), live)).To(Succeed())
			Expect(live.Status.Selector).To(Equal("from the object read"))

			By("the object read deleted and one made anew under its name")
			Expect(env.Client.Delete(ctx, live)).To(Succeed())
			Expect(env.Client.Create(ctx, b.DeepCopy())).To(Succeed())
			computed.Status.Selector = "stale"
			wrote, err = engine.PatchStatus(ctx, env.Client, read, computed)
			Expect(err).NotTo(HaveOccurred(), "nothing left to report on is no failure")
			Expect(wrote).To(BeFalse())
			Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(b), live)).To(Succeed())
			Expect(live.UID).NotTo(Equal(read.UID))
			Expect(live.Status.Selector).To(BeEmpty(), "the new object's status is not the old one's")
		})
	})
})

func seriesCount(s *eventsv1.EventSeries) int32 {
	if s == nil {
		return 0
	}
	return s.Count
}
