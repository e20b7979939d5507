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

package podset

import (
	"fmt"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/conditions"
)

// Reasons specific to PodSets.
const (
	ReasonScaling          = "Scaling"
	ReasonRollingOut       = "RollingOut"
	ReasonWaitingForPods   = "WaitingForPods"
	ReasonReplicaFailure   = "ReplicaFailure"
	ReasonDeploymentAbsent = "DeploymentNotFound"
)

// observed is what the reconciler saw of a PodSet's children.
type observed struct {
	// deployment is nil when it does not exist (yet).
	deployment *appsv1.Deployment
	pods       []corev1.Pod
	// applyErr is the error of applying the desired objects, if any.
	applyErr error
	// invalid is the validation error of the spec, if any.
	invalid error
}

// computeStatus sets ps.Status from what was observed. It is a pure
// function: the reconciler patches the status only if this changed it.
func computeStatus(ps *appsv1alpha1.PodSet, o observed) {
	st := &ps.Status
	gen := ps.Generation
	st.ObservedGeneration = gen
	st.Selector = Selector(ps)
	desired := appsv1alpha1.PodSetDefaultReplicas
	if ps.Spec.Replicas != nil {
		desired = *ps.Spec.Replicas
	}

	st.PodNames = nil
	for i := range o.pods {
		if o.pods[i].DeletionTimestamp == nil {
			st.PodNames = append(st.PodNames, o.pods[i].Name)
		}
	}
	sort.Strings(st.PodNames)

	st.Replicas, st.ReadyReplicas, st.AvailableReplicas = 0, 0, 0
	d := o.deployment
	if d != nil {
		st.Replicas = d.Status.Replicas
		st.ReadyReplicas = d.Status.ReadyReplicas
		st.AvailableReplicas = d.Status.AvailableReplicas
	}

	set := func(t string, v bool, reason, msg string) { conditions.Set(&st.Conditions, gen, t, v, reason, msg) }
	switch {
	case o.invalid != nil:
		conditions.SetFailed(&st.Conditions, gen, conditions.ReasonInvalidSpec, o.invalid)
		return
	case o.applyErr != nil:
		conditions.SetFailed(&st.Conditions, gen, conditions.ReasonApplyFailed, o.applyErr)
		return
	case d == nil:
		set(conditions.Ready, false, ReasonDeploymentAbsent, "The Deployment does not exist yet")
		set(conditions.Progressing, true, conditions.ReasonReconciling, "Creating the Deployment")
		set(conditions.Degraded, false, conditions.ReasonAsExpected, "")
		return
	}

	// Degraded: the Deployment controller says it cannot make progress.
	degraded, degradedReason, degradedMsg := false, conditions.ReasonAsExpected, ""
	for _, c := range d.Status.Conditions {
		switch {
		case c.Type == appsv1.DeploymentReplicaFailure && c.Status == corev1.ConditionTrue:
			degraded, degradedReason, degradedMsg = true, ReasonReplicaFailure, c.Message
		case c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse && c.Reason == "ProgressDeadlineExceeded":
			degraded, degradedReason, degradedMsg = true, conditions.ReasonDeadlineInRollout, c.Message
		}
	}
	set(conditions.Degraded, degraded, degradedReason, degradedMsg)

	upToDate := d.Status.ObservedGeneration >= d.Generation && d.Status.UpdatedReplicas == desired
	settled := upToDate && d.Status.Replicas == desired && d.Status.AvailableReplicas == desired
	switch {
	case settled:
		set(conditions.Progressing, false, conditions.ReasonRolloutDone, fmt.Sprintf("%d of %d pods updated and available", desired, desired))
	case !upToDate:
		set(conditions.Progressing, true, ReasonRollingOut, fmt.Sprintf("%d of %d pods updated", d.Status.UpdatedReplicas, desired))
	default:
		set(conditions.Progressing, true, ReasonScaling, fmt.Sprintf("%d pods, %d available, %d desired", d.Status.Replicas, d.Status.AvailableReplicas, desired))
	}

	switch {
	case settled && desired == 0:
		set(conditions.Ready, true, conditions.ReasonScaledToZero, "Scaled to zero pods")
	case settled:
		set(conditions.Ready, true, conditions.ReasonAvailable, fmt.Sprintf("%d of %d pods available", desired, desired))
	default:
		set(conditions.Ready, false, ReasonWaitingForPods, fmt.Sprintf("%d of %d pods available", d.Status.AvailableReplicas, desired))
	}
}
