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

package kubernetescluster

import (
	"cmp"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/conditions"
	"github.com/kubeforge/kubeforge/internal/engine"
	"github.com/kubeforge/kubeforge/internal/validation"
)

// Reasons specific to KubernetesClusters.
const (
	ReasonInstalled        = "Installed"
	ReasonNotInstalled     = "NotInstalled"
	ReasonOperationRunning = "OperationRunning"
	ReasonOperationPending = "OperationPending"
	ReasonOperationFailed  = "OperationFailed"
	// ReasonJobLost: the operation's Job was deleted while it ran, and its
	// callback Secret too (or one under its name is someone else's).
	ReasonJobLost        = "JobLost"
	ReasonIdle           = "Idle"
	ReasonPaused         = "Paused"
	ReasonSSHSecret      = "SSHSecretInvalid"
	ReasonJobNotFinished = "JobRunning"
)

// runningPhase is the phase while an operation of type t runs.
func runningPhase(t clusterv1alpha1.OperationType) clusterv1alpha1.ClusterPhase {
	switch t {
	case clusterv1alpha1.OpPrecheck:
		return clusterv1alpha1.PhasePrechecking
	case clusterv1alpha1.OpCreate:
		return clusterv1alpha1.PhaseCreating
	case clusterv1alpha1.OpScaleUp:
		return clusterv1alpha1.PhaseScalingUp
	case clusterv1alpha1.OpScaleDown:
		return clusterv1alpha1.PhaseScalingDown
	case clusterv1alpha1.OpUpgrade:
		return clusterv1alpha1.PhaseUpgrading
	default:
		return clusterv1alpha1.PhaseTerminating
	}
}

// failureOutput is the installer's last output, from the termination
// message of the Job's pod (FallbackToLogsOnError puts the log tail there).
func failureOutput(pods []corev1.Pod) string {
	for _, p := range pods {
		for _, cs := range p.Status.ContainerStatuses {
			if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
				if t.Message != "" {
					return t.Message
				}
				return fmt.Sprintf("%s exited with code %d (%s)", cs.Name, t.ExitCode, t.Reason)
			}
		}
	}
	return ""
}

// finish records the end of an operation and what it changed.
func finish(kc *clusterv1alpha1.KubernetesCluster, op *clusterv1alpha1.Operation, succeeded bool, reason, message string, now *metav1.Time) {
	op.CompletionTime = now
	if !succeeded {
		op.Result, op.Reason, op.Message = clusterv1alpha1.ResultFailed, reason, message
		kc.Status.CurrentOperation = ""
		return
	}
	op.Result = clusterv1alpha1.ResultSucceeded
	st := &kc.Status
	st.CurrentOperation = ""
	switch op.Type {
	case clusterv1alpha1.OpPrecheck:
		op.Message = "Every host is reachable over SSH, runs a supported OS, has the memory, disk and clock Kubernetes needs and its ports free"
	case clusterv1alpha1.OpCreate:
		st.Version = op.Version
		st.InstalledNodes = append([]string(nil), op.Hosts...)
		st.NodeNames = nil
		recordNames(kc, op.Hosts)
		st.MasterCount = int32(len(kc.Spec.Masters))
		st.KubeconfigSecretRef = &corev1.LocalObjectReference{Name: clusterv1alpha1.KubeconfigSecretName(kc)}
		op.Message = fmt.Sprintf("Installed Kubernetes %s on %d masters and %d nodes", op.Version, len(kc.Spec.Masters), len(op.Hosts))
	case clusterv1alpha1.OpScaleUp:
		st.InstalledNodes = append(st.InstalledNodes, op.Hosts...)
		recordNames(kc, op.Hosts)
		op.Message = fmt.Sprintf("Added %v", op.Hosts)
	case clusterv1alpha1.OpScaleDown:
		var kept []string
		for _, a := range st.InstalledNodes {
			if !slices.Contains(op.Hosts, a) {
				kept = append(kept, a)
			}
		}
		st.InstalledNodes = kept
		for _, a := range op.Hosts {
			delete(st.NodeNames, a)
		}
		op.Message = fmt.Sprintf("Removed %v", op.Hosts)
	case clusterv1alpha1.OpUpgrade:
		st.Version = op.Version
		op.Message = "Upgraded to " + op.Version
	case clusterv1alpha1.OpReset:
		st.Version, st.InstalledNodes, st.NodeNames, st.MasterCount = "", nil, nil, 0
		op.Message = "Removed Kubernetes from every host"
	}
	st.NodeCount = int32(len(st.InstalledNodes))
}

// recordNames keeps the inventory names the workers at addresses were
// installed under.
func recordNames(kc *clusterv1alpha1.KubernetesCluster, addresses []string) {
	for _, h := range kc.Spec.Nodes {
		if slices.Contains(addresses, h.Address) {
			if kc.Status.NodeNames == nil {
				kc.Status.NodeNames = map[string]string{}
			}
			kc.Status.NodeNames[h.Address] = HostName(kc, h)
		}
	}
}

// observed is what the reconciler saw and decided.
type observed struct {
	// next is the operation the spec calls for next, nil for none.
	next *Next
	// blocked says why next cannot start (its SSH Secret).
	blocked error
	// invalid is the spec's validation error.
	invalid error
	// applyErr is the error of applying the cluster's objects.
	applyErr error
}

// ConditionValuesAsText is True while the spec holds a value admission now
// refuses (a template delimiter in extraVars, an SSH user that is not a
// POSIX login name): stored before the rule, it is passed on as text.
const (
	ConditionValuesAsText = "ValuesAsText"
	ReasonTemplateInValue = "TemplateInValue"
)

// computeStatus sets phase and conditions from the status's operation
// record and what was observed. kc is defaulted.
func computeStatus(kc *clusterv1alpha1.KubernetesCluster, o observed) {
	st := &kc.Status
	st.ObservedGeneration = kc.Generation
	set := conditions.For(kc, &st.Conditions).Set
	next, blocked, invalid := o.next, o.blocked, o.invalid
	// Values stored before admission refused templates and non-POSIX users:
	// never templated (the inventory passes them as text), and said so.
	if errs := validation.KubernetesClusterTransition(nil, &clusterv1alpha1.KubernetesCluster{Spec: clusterv1alpha1.KubernetesClusterSpec{
		SSHSecretRef: kc.Spec.SSHSecretRef, Installer: clusterv1alpha1.Installer{ExtraVars: kc.Spec.Installer.ExtraVars}}}); len(errs) > 0 {
		set(ConditionValuesAsText, true, ReasonTemplateInValue, "Passed to Ansible as text, never run as a template; admission "+
			"refuses such values now, change them: "+errs.ToAggregate().Error())
	} else {
		apimeta.RemoveStatusCondition(&st.Conditions, ConditionValuesAsText)
	}
	if invalid != nil {
		msg, reason := invalid.Error(), engine.InvalidReason(invalid)
		set(conditions.Ready, st.Version != "" && st.CurrentOperation == "", reason, msg)
		set(conditions.Progressing, false, reason, msg)
		set(conditions.Degraded, true, reason, msg)
		return
	}
	last := lastOperation(kc)
	failed := st.CurrentOperation == "" && last != nil && last.Result == clusterv1alpha1.ResultFailed
	switch {
	case st.CurrentOperation != "":
		op := last
		st.Phase = runningPhase(op.Type)
		set(conditions.Progressing, true, ReasonOperationRunning, fmt.Sprintf("Operation %s runs in Job %s", op.ID, op.JobName))
	case failed:
		st.Phase = clusterv1alpha1.PhaseFailed
		set(conditions.Progressing, false, ReasonOperationFailed,
			fmt.Sprintf("Operation %s failed; set the annotation %s to a new value to retry it", last.ID, clusterv1alpha1.RetryAnnotation))
	case kc.DeletionTimestamp != nil:
		st.Phase = clusterv1alpha1.PhaseTerminating
		set(conditions.Progressing, true, ReasonOperationPending, "Deleting")
	case next != nil && kc.Spec.Paused:
		set(conditions.Progressing, false, ReasonPaused, fmt.Sprintf("Paused; the next operation would be %s", next.Type))
	case blocked != nil:
		set(conditions.Progressing, false, ReasonSSHSecret, blocked.Error())
	default:
		set(conditions.Progressing, false, ReasonIdle, "No operation runs")
	}
	if st.CurrentOperation == "" && !failed && kc.DeletionTimestamp == nil {
		if st.Version != "" {
			st.Phase = clusterv1alpha1.PhaseRunning
		} else {
			st.Phase = clusterv1alpha1.PhasePending
		}
	}

	switch {
	case o.applyErr != nil && !engine.Waiting(o.applyErr): // a wait is progress: the next pass goes on
		set(conditions.Degraded, true, engine.FailureReason(o.applyErr), o.applyErr.Error())
	case failed:
		set(conditions.Degraded, true, cmp.Or(last.Reason, ReasonOperationFailed), fmt.Sprintf("Operation %s failed: %s", last.ID, last.Message))
	case blocked != nil:
		set(conditions.Degraded, true, ReasonSSHSecret, blocked.Error())
	default:
		set(conditions.Degraded, false, conditions.ReasonAsExpected, "")
	}
	switch {
	case st.Version == "":
		set(conditions.Ready, false, ReasonNotInstalled, "Kubernetes is not installed yet")
	case st.CurrentOperation != "" || next != nil:
		set(conditions.Ready, false, ReasonOperationPending, fmt.Sprintf("Kubernetes %s is installed; the cluster is not yet what the spec asks", st.Version))
	default:
		set(conditions.Ready, true, ReasonInstalled, fmt.Sprintf("Kubernetes %s on %d masters and %d nodes", st.Version, st.MasterCount, st.NodeCount))
	}
}
