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
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonNotAdmitted: the object names what the access checks guard and
	// carries no admission stamp that verifies (stored while kubeforge's
	// webhooks were not called); kubeforge makes nothing for it.
	ReasonNotAdmitted = "NotAdmitted"
	ReasonApplyFailed = "ApplyFailed"
	// ReasonNameConflict: an object with a name the kind wants exists and
	// is not its own; kubeforge leaves it alone.
	ReasonNameConflict      = "NameConflict"
	ReasonAsExpected        = "AsExpected"
	ReasonReconciling       = "Reconciling"
	ReasonRolloutDone       = "RolloutComplete"
	ReasonAvailable         = "Available"
	ReasonScaledToZero      = "ScaledToZero"
	ReasonDeadlineInRollout = "ProgressDeadlineExceeded"
)

// Setter sets the conditions of one object, each with the object's
// generation as its observedGeneration, so no status code has to carry
// the generation around.
type Setter struct {
	conds      *[]metav1.Condition
	generation int64
}

// For returns the Setter of obj's conditions (a pointer into its status).
func For(obj metav1.Object, conds *[]metav1.Condition) Setter {
	return Setter{conds: conds, generation: obj.GetGeneration()}
}

// Set sets (or replaces) the condition of the given type. The transition
// time changes only when the status does, as meta.SetStatusCondition does.
func (s Setter) Set(condType string, status bool, reason, message string) {
	st := metav1.ConditionFalse
	if status {
		st = metav1.ConditionTrue
	}
	meta.SetStatusCondition(s.conds, metav1.Condition{
		Type:               condType,
		Status:             st,
		Reason:             reason,
		Message:            message,
		ObservedGeneration: s.generation,
	})
}

// Failed reports that the object cannot be acted on, for reason (such
// as InvalidSpec or ApplyFailed): not Ready, not Progressing, Degraded,
// each with the error as message.
func (s Setter) Failed(reason string, err error) {
	msg := err.Error()
	s.Set(Ready, false, reason, msg)
	s.Set(Progressing, false, reason, msg)
	s.Set(Degraded, true, reason, msg)
}

// IsTrue reports whether the condition of the given type is true.
func IsTrue(conds []metav1.Condition, condType string) bool {
	return meta.IsStatusConditionTrue(conds, condType)
}
