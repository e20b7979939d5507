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

// Package conditions holds the condition types and reasons that every
// kubeforge kind reports, and small helpers to set them.
package conditions

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition types shared by every kind.
const (
	// Ready is true when the object does what its spec asks.
	Ready = "Ready"
	// Progressing is true while the operator or the cluster is moving the
	// object towards its spec (a rollout, a scale, an install).
	Progressing = "Progressing"
	// Degraded is true when the object cannot reach its spec without help.
	Degraded = "Degraded"
)

// Reasons shared by every kind. Kinds add their own.
const (
	ReasonInvalidSpec       = "InvalidSpec"
	ReasonApplyFailed       = "ApplyFailed"
	ReasonAsExpected        = "AsExpected"
	ReasonReconciling       = "Reconciling"
	ReasonRolloutDone       = "RolloutComplete"
	ReasonAvailable         = "Available"
	ReasonScaledToZero      = "ScaledToZero"
	ReasonDeadlineInRollout = "ProgressDeadlineExceeded"
)

// Set sets (or replaces) the condition of the given type. The transition
// time changes only when the status does, as meta.SetStatusCondition does.
func Set(conds *[]metav1.Condition, generation int64, condType string, status bool, reason, message string) {
	s := metav1.ConditionFalse
	if status {
		s = metav1.ConditionTrue
	}
	meta.SetStatusCondition(conds, metav1.Condition{
		Type:               condType,
		Status:             s,
		Reason:             reason,
		Message:            message,
		ObservedGeneration: generation,
	})
}

// IsTrue reports whether the condition of the given type is true.
func IsTrue(conds []metav1.Condition, condType string) bool {
	return meta.IsStatusConditionTrue(conds, condType)
}

// SetFailed reports that the object cannot be acted on, for reason (such
// as InvalidSpec or ApplyFailed): not Ready, not Progressing, Degraded,
// each with the error as message.
func SetFailed(conds *[]metav1.Condition, generation int64, reason string, err error) {
	msg := err.Error()
	Set(conds, generation, Ready, false, reason, msg)
	Set(conds, generation, Progressing, false, reason, msg)
	Set(conds, generation, Degraded, true, reason, msg)
}
