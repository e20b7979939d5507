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

package workspace

import (
	"cmp"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/admit"
	"github.com/kubeforge/kubeforge/internal/conditions"
	"github.com/kubeforge/kubeforge/internal/engine"
)

// Reasons specific to Workspaces.
const (
	ReasonStopped           = "Stopped"
	ReasonStopping          = "Stopping"
	ReasonCreatingPod       = "CreatingPod"
	ReasonPodDeleting       = "PodDeleting"
	ReasonUnscheduled       = "WaitingForNode"
	ReasonUnschedulable     = "Unschedulable"
	ReasonContainerCreating = "ContainerCreating"
	ReasonNotAnswering      = "IDENotAnswering"
	ReasonIDEAnswering      = "IDEAnswering"
	ReasonPodFailed         = "PodFailed"
	ReasonPodSucceeded      = "PodExited"
	ReasonCertManager       = "CertManagerNotInstalled"
	ReasonMaxRunDuration    = "MaxRunDurationExceeded"
)

// failingWaitReasons are container waiting reasons that do not heal by
// themselves: the workspace is Failed until someone acts.
var failingWaitReasons = map[string]bool{
	"ImagePullBackOff": true, "ErrImagePull": true, "InvalidImageName": true, "ErrImageNeverPull": true,
	"CrashLoopBackOff": true, "CreateContainerError": true, "RunContainerError": true,
}

// ReasonCreateContainerConfigError is the kubelet's waiting reason when it
// cannot yet read what the container's environment names (the Workspace's
// password Secret). It is not a failure: the kubelet retries, and it heals
// by itself — the Secret made a moment before, or the node's permission to
// read it, arrives (seen on the real node: "failed to sync secret cache"
// for the Secret the operator had just made). The Workspace stays
// Starting with the kubelet's message, so a create-and-wait that times out
// says why.
const ReasonCreateContainerConfigError = "CreateContainerConfigError"

// Phase is the phase of a Workspace given whether it should run and its
// Pod (nil when there is none): a pure function, table-tested.
func Phase(started bool, pod *corev1.Pod) (phase idev1alpha1.WorkspacePhase, reason, message string) {
	if !started {
		if pod != nil {
			return idev1alpha1.PhaseStopping, ReasonStopping, "Deleting the IDE's Pod; the home volume stays"
		}
		return idev1alpha1.PhaseStopped, ReasonStopped, "Stopped; the home volume is kept"
	}
	if pod == nil {
		return idev1alpha1.PhasePending, ReasonCreatingPod, "Creating the IDE's Pod"
	}
	if pod.DeletionTimestamp != nil {
		return idev1alpha1.PhasePending, ReasonPodDeleting, "Waiting for the old Pod to go before starting a new one"
	}
	switch pod.Status.Phase {
	case corev1.PodFailed:
		r := pod.Status.Reason
		if r == "" {
			r = ReasonPodFailed
		}
		return idev1alpha1.PhaseFailed, r, cmp.Or(pod.Status.Message, "The IDE's Pod failed")
	case corev1.PodSucceeded:
		return idev1alpha1.PhaseFailed, ReasonPodSucceeded, "The IDE exited"
	}
	for _, cs := range append(append([]corev1.ContainerStatus{}, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...) {
		if w := cs.State.Waiting; w != nil && failingWaitReasons[w.Reason] {
			return idev1alpha1.PhaseFailed, w.Reason, cmp.Or(w.Message, fmt.Sprintf("Container %s: %s", cs.Name, w.Reason))
		}
		if w := cs.State.Waiting; w != nil && w.Reason == ReasonCreateContainerConfigError {
			return idev1alpha1.PhaseStarting, w.Reason, fmt.Sprintf("Container %s cannot start yet, the kubelet retries: %s", cs.Name, cmp.Or(w.Message, w.Reason))
		}
	}
	scheduled := podCondition(pod, corev1.PodScheduled)
	if pod.Spec.NodeName == "" {
		// Not placed yet is Pending, not Failed: it often resolves by
		// itself — a volume still binding, a node being added, other
		// pods going — and the scheduler keeps trying.
		if scheduled != nil && scheduled.Status == corev1.ConditionFalse && scheduled.Reason == corev1.PodReasonUnschedulable {
			return idev1alpha1.PhasePending, ReasonUnschedulable, scheduled.Message
		}
		return idev1alpha1.PhasePending, ReasonUnscheduled, "Waiting for the Pod to be scheduled"
	}
	if ready := podCondition(pod, corev1.PodReady); ready != nil && ready.Status == corev1.ConditionTrue {
		return idev1alpha1.PhaseRunning, ReasonIDEAnswering, "The IDE answers its readiness probe"
	}
	if pod.Status.Phase == corev1.PodRunning {
		return idev1alpha1.PhaseStarting, ReasonNotAnswering, "The IDE runs but does not answer its readiness probe yet"
	}
	return idev1alpha1.PhaseStarting, ReasonContainerCreating, "Pulling the image and starting the IDE"
}

// StatusWith returns the status the controller's next write reports when
// pod is the Workspace's Pod, and whether pod is the Pod its current spec
// asks for (proven the Workspace's by owns, not going away, the spec's
// hash). The API's create-and-wait answers from it as soon as the Pod is
// Ready, without waiting for that write; the phase is decided here, by
// Phase, alone.
func StatusWith(owns func(owner, obj client.Object) bool) func(*idev1alpha1.Workspace, *corev1.Pod) (idev1alpha1.WorkspaceStatus, bool) {
	return func(ws *idev1alpha1.Workspace, pod *corev1.Pod) (idev1alpha1.WorkspaceStatus, bool) {
		// No keyring: the Pod, proven the Workspace's, is what the
		// reconciler made once admission had approved the spec.
		ws, invalid := admit.Prepare(admit.Workspace, nil, ws)
		if invalid != nil || !Started(ws) || pod == nil || pod.DeletionTimestamp != nil || !owns(ws, pod) ||
			pod.Annotations[PodHashAnnotation] != Pod(ws).Annotations[PodHashAnnotation] {
			return idev1alpha1.WorkspaceStatus{}, false
		}
		computeStatus(ws, observed{pod: pod, startedAt: ws.Status.StartedAt})
		return ws.Status, true
	}
}

func podCondition(pod *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == t {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// startupSeconds is how long a Ready Pod took from creation to Ready.
func startupSeconds(pod *corev1.Pod) *int64 {
	ready := podCondition(pod, corev1.PodReady)
	if ready == nil || ready.Status != corev1.ConditionTrue || ready.LastTransitionTime.IsZero() {
		return nil
	}
	s := int64(ready.LastTransitionTime.Sub(pod.CreationTimestamp.Time).Round(time.Second) / time.Second)
	if s < 0 {
		s = 0
	}
	return &s
}

// observed is what the reconciler saw and did.
type observed struct {
	pod        *corev1.Pod
	startedAt  *metav1.Time
	invalid    error
	applyErr   error
	missingTLS bool
}

// computeStatus sets ws.Status from what was observed. ws is defaulted;
// the reconciler patches the status only if this changed it.
func computeStatus(ws *idev1alpha1.Workspace, o observed) {
	st := &ws.Status
	st.ObservedGeneration = ws.Generation
	st.URL = idev1alpha1.WorkspaceURL(ws)
	st.CredentialsSecret = idev1alpha1.WorkspaceCredentialsSecret(ws)
	st.StartedAt = o.startedAt
	conds := conditions.For(ws, &st.Conditions)
	set := conds.Set

	if reason, err, failed := engine.Failed(o.invalid, o.applyErr); failed {
		st.Phase, st.Reason, st.Message = idev1alpha1.PhaseFailed, reason, err.Error()
		conds.Failed(reason, err)
		return
	}

	st.Phase, st.Reason, st.Message = Phase(Started(ws), o.pod)
	st.PodIP, st.NodeName = "", ""
	if o.pod != nil && o.pod.DeletionTimestamp == nil {
		st.PodIP, st.NodeName = o.pod.Status.PodIP, o.pod.Spec.NodeName
		if st.Phase == idev1alpha1.PhaseRunning {
			if s := startupSeconds(o.pod); s != nil {
				st.LastStartupSeconds = s
			}
		}
	}

	switch st.Phase {
	case idev1alpha1.PhaseRunning:
		set(conditions.Ready, true, st.Reason, st.Message)
		set(conditions.Progressing, false, st.Reason, st.Message)
	case idev1alpha1.PhaseStopped:
		set(conditions.Ready, false, st.Reason, st.Message)
		set(conditions.Progressing, false, st.Reason, st.Message)
	case idev1alpha1.PhaseFailed:
		set(conditions.Ready, false, st.Reason, st.Message)
		set(conditions.Progressing, false, st.Reason, st.Message)
	default:
		set(conditions.Ready, false, st.Reason, st.Message)
		set(conditions.Progressing, true, st.Reason, st.Message)
	}
	switch {
	case st.Phase == idev1alpha1.PhaseFailed:
		set(conditions.Degraded, true, st.Reason, st.Message)
	case o.missingTLS:
		set(conditions.Degraded, true, ReasonCertManager,
			"spec.ingress.tls asks for a cert-manager Certificate, but cert-manager's CRDs are not installed; the Ingress is served without a certificate")
	default:
		set(conditions.Degraded, false, conditions.ReasonAsExpected, "")
	}
}
