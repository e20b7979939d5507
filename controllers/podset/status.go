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
	"k8s.io/apimachinery/pkg/api/equality"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/conditions"
	"github.com/kubeforge/kubeforge/internal/engine"
	"github.com/kubeforge/kubeforge/internal/workload"
)

// Reasons specific to PodSets.
const (
	ReasonScaling          = "Scaling"
	ReasonRollingOut       = workload.ReasonRollingOut
	ReasonWaitingForPods   = "WaitingForPods"
	ReasonReplicaFailure   = workload.ReasonReplicaFailure
	ReasonDeploymentAbsent = "DeploymentNotFound"
)

// observed is what the reconciler saw of a PodSet's children.
type observed struct {
	// deployment is nil when it does not exist (yet).
	deployment *appsv1.Deployment
	pods       []corev1.Pod
	// podsUnknown: the Pods could not be listed; the names reported
	// before stay.
	podsUnknown bool
	// applyErr is the error of applying the desired objects, if any.
	applyErr error
	// invalid is the validation error of the spec, if any.
	invalid error
}

// computeStatus sets ps.Status from what was observed. ps is defaulted.
// It is a pure function: the reconciler patches the status only if this
// changed it.
func computeStatus(ps *appsv1alpha1.PodSet, o observed) {
	st := &ps.Status
	st.ObservedGeneration = ps.Generation
	st.Selector = Selector(ps)
	desired := *ps.Spec.Replicas

	if !o.podsUnknown {
		st.PodNames = nil
		for i := range o.pods {
			if o.pods[i].DeletionTimestamp == nil {
				st.PodNames = append(st.PodNames, o.pods[i].Name)
			}
		}
		sort.Strings(st.PodNames)
	}

	st.Replicas, st.ReadyReplicas, st.AvailableReplicas = 0, 0, 0
	d := o.deployment
	if d != nil {
		st.Replicas = d.Status.Replicas
		st.ReadyReplicas = d.Status.ReadyReplicas
		st.AvailableReplicas = d.Status.AvailableReplicas
	}

	conds := conditions.For(ps, &st.Conditions)
	if reason, err, failed := engine.Failed(o.invalid, o.applyErr); failed {
		conds.Failed(reason, err)
		return
	}
	switch {
	case d == nil:
		conds.Set(conditions.Ready, false, ReasonDeploymentAbsent, "The Deployment does not exist yet")
		conds.Set(conditions.Progressing, true, conditions.ReasonReconciling, "Creating the Deployment")
		conds.Set(conditions.Degraded, false, conditions.ReasonAsExpected, "")
		return
	}

	// Degraded: the Deployment controller says it cannot make progress.
	r := workload.Deployment(d, desired)
	if r.Failed {
		conds.Set(conditions.Degraded, true, r.Reason, r.Message)
	} else {
		conds.Set(conditions.Degraded, false, conditions.ReasonAsExpected, "")
	}

	progressing, reason, msg := r.Progressing("pods", ReasonScaling)
	conds.Set(conditions.Progressing, progressing, reason, msg)

	switch {
	case r.Settled && desired == 0:
		conds.Set(conditions.Ready, true, conditions.ReasonScaledToZero, "Scaled to zero pods")
	case r.Settled:
		conds.Set(conditions.Ready, true, conditions.ReasonAvailable, fmt.Sprintf("%d of %d pods available", desired, desired))
	default:
		conds.Set(conditions.Ready, false, ReasonWaitingForPods, fmt.Sprintf("%d of %d pods available", r.Available, desired))
	}
}

// progressOnly reports whether before's status and after's differ only in
// what reports the Pods' progress: their names, the replica counts and
// the conditions' messages ("12 of 50 pods available"). Everything else
// (a condition's status or reason, an observed generation, the selector)
// is written at once (engine.Pacer).
func progressOnly(before, after *appsv1alpha1.PodSet) bool {
	strip := func(ps *appsv1alpha1.PodSet) *appsv1alpha1.PodSetStatus {
		st := ps.Status.DeepCopy()
		st.PodNames = nil
		st.Replicas, st.ReadyReplicas, st.AvailableReplicas = 0, 0, 0
		for i := range st.Conditions {
			st.Conditions[i].Message = ""
		}
		return st
	}
	return equality.Semantic.DeepEqual(strip(before), strip(after))
}
