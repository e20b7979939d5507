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
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
)

const clusterNS = "e2e-cluster"

// failLabel makes kwok fail the container of a pod that carries it (kwok's
// chaos stage, loaded by hack/cluster.sh).
const failLabel = "pod-container-running-failed.stage.kwok.x-k8s.io"

func prod(g Gomega) *clusterv1alpha1.KubernetesCluster {
	kc := &clusterv1alpha1.KubernetesCluster{}
	g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: clusterNS, Name: "prod"}, kc)).To(Succeed())
	return kc
}

// reaches waits for a phase and returns the cluster then.
func reaches(phase clusterv1alpha1.ClusterPhase) *clusterv1alpha1.KubernetesCluster {
	var kc *clusterv1alpha1.KubernetesCluster
	Eventually(func(g Gomega) clusterv1alpha1.ClusterPhase {
		kc = prod(g)
		return kc.Status.Phase
	}, "2m").Should(Equal(phase))
	return kc
}

func kubectlPatch(jsonPatch string) {
	_, err := kubectl("patch", "-n", clusterNS, "kc/prod", "--type", "json", "-p", jsonPatch)
	Expect(err).NotTo(HaveOccurred())
}

var _ = Describe("KubernetesCluster", Ordered, Label("kubernetescluster"), func() {
	BeforeAll(func() {
		kubectlEventually("create", "namespace", clusterNS)
		kubectlEventually("create", "secret", "generic", "prod-ssh", "-n", clusterNS, "--type=kubernetes.io/ssh-auth",
			"--from-literal=ssh-privatekey=a throwaway key for kwok, which runs no installer")
	})

	It("should precheck and create the sample, and turn Running", func() {
		_, err := kubectl("apply", "-n", clusterNS, "-f", "config/samples/cluster_v1alpha1_kubernetescluster.yaml")
		Expect(err).NotTo(HaveOccurred())
		kc := reaches(clusterv1alpha1.PhaseRunning)
		Expect(kc.Status.Version).To(Equal("v1.31.4"))
		Expect(kc.Status.NodeCount).To(Equal(int32(2)))
		Expect(kc.Status.KubeconfigSecretRef).NotTo(BeNil())
		var opTypes []clusterv1alpha1.OperationType
		for _, op := range kc.Status.Operations {
			Expect(op.Result).To(Equal(clusterv1alpha1.ResultSucceeded), op.ID)
			opTypes = append(opTypes, op.Type)
		}
		Expect(opTypes).To(Equal([]clusterv1alpha1.OperationType{clusterv1alpha1.OpPrecheck, clusterv1alpha1.OpCreate}))
		// kwok ran the Jobs' pods to completion.
		job := &batchv1.Job{}
		Expect(k8sClient.Get(ctx, clusterKey("prod-create-2"), job)).To(Succeed())
		Expect(job.Status.Succeeded).To(Equal(int32(1)))

		out, err := kubectl("get", "kc", "-n", clusterNS, "prod", "--no-headers")
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(MatchRegexp(`^prod\s+v1\.31\.4\s+Running\s+1\s+2\s+`))
	})

	It("should scale up", func() {
		kubectlPatch(`[{"op":"add","path":"/spec/nodes/-","value":{"address":"10.0.0.23","name":"worker3"}}]`)
		Eventually(func(g Gomega) string { return prod(g).Status.CurrentOperation }).Should(HavePrefix("scale-up-"))
		kc := reaches(clusterv1alpha1.PhaseRunning)
		Expect(kc.Status.NodeCount).To(Equal(int32(3)))
		Expect(kc.Status.Operations[len(kc.Status.Operations)-1].Hosts).To(Equal([]string{"10.0.0.23"}))
	})

	It("should upgrade", func() {
		// v1.32.0 is past what the default installer image (kubespray
		// v2.27.0) installs: the upgrade names its installer image.
		kubectlPatch(`[{"op":"replace","path":"/spec/version","value":"v1.32.0"},` +
			`{"op":"replace","path":"/spec/installer/image","value":"quay.io/kubespray/kubespray:v2.28.0"}]`)
		Eventually(func(g Gomega) string { return prod(g).Status.CurrentOperation }).Should(HavePrefix("upgrade-"))
		kc := reaches(clusterv1alpha1.PhaseRunning)
		Expect(kc.Status.Version).To(Equal("v1.32.0"))
	})

	It("should end Failed when the installer fails, and succeed on a retry", func() {
		// The installer pods of the next operation fail (kwok's chaos stage).
		kubectlPatch(`[{"op":"add","path":"/spec/installer/podLabels","value":{"` + failLabel + `":"true"}},` +
			`{"op":"add","path":"/spec/nodes/-","value":{"address":"10.0.0.24","name":"worker4"}}]`)
		kc := reaches(clusterv1alpha1.PhaseFailed)
		last := kc.Status.Operations[len(kc.Status.Operations)-1]
		Expect(last.Type).To(Equal(clusterv1alpha1.OpScaleUp))
		Expect(last.Reason).To(Equal("BackoffLimitExceeded"))
		Expect(last.Message).To(ContainSubstring("container failed"), "the installer pod's termination message")
		Expect(kc.Status.NodeCount).To(Equal(int32(3)))

		// Fix the cause, then ask for a retry.
		kubectlPatch(`[{"op":"remove","path":"/spec/installer/podLabels"}]`)
		Consistently(func(g Gomega) clusterv1alpha1.ClusterPhase { return prod(g).Status.Phase }, "2s").Should(Equal(clusterv1alpha1.PhaseFailed))
		_, err := kubectl("annotate", "-n", clusterNS, "kc/prod", clusterv1alpha1.RetryAnnotation+"=1")
		Expect(err).NotTo(HaveOccurred())
		kc = reaches(clusterv1alpha1.PhaseRunning)
		Expect(kc.Status.NodeCount).To(Equal(int32(4)))
		GinkgoWriter.Printf("operations: %s\n", describeOps(kc.Status.Operations))
	})

	It("should reset the hosts on delete and then go away", func() {
		_, err := kubectl("delete", "-n", clusterNS, "kc/prod", "--wait=false")
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) string { return prod(g).Status.CurrentOperation }).Should(HavePrefix("reset-"))
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, clusterKey("prod"), &clusterv1alpha1.KubernetesCluster{}))
		}, "2m").Should(BeTrue())
		// Its Jobs, ConfigMaps, Secret and installer RBAC are garbage-collected.
		Eventually(func(g Gomega) {
			jobs := &batchv1.JobList{}
			g.Expect(k8sClient.List(ctx, jobs, client.InNamespace(clusterNS))).To(Succeed())
			g.Expect(jobs.Items).To(BeEmpty())
			g.Expect(apierrors.IsNotFound(k8sClient.Get(ctx, clusterKey("prod-kubeconfig"), &corev1.Secret{}))).To(BeTrue())
		}, "2m").Should(Succeed())
	})
})

func clusterKey(name string) types.NamespacedName {
	return types.NamespacedName{Namespace: clusterNS, Name: name}
}

func describeOps(ops []clusterv1alpha1.Operation) string {
	s := ""
	for _, op := range ops {
		d := ""
		if op.StartTime != nil && op.CompletionTime != nil {
			d = op.CompletionTime.Sub(op.StartTime.Time).String()
		}
		s += fmt.Sprintf("%s=%s(%s) ", op.ID, op.Result, d)
	}
	return s
}
