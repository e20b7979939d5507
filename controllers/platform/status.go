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

package platform

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/conditions"
)

// Reasons specific to Platforms.
const (
	ReasonComponentFailed = "ComponentFailed"
	ReasonUpgrading       = "Upgrading"
	ReasonDeploying       = "Deploying"
	ReasonAllReady        = "AllComponentsReady"
)

// LiveOf reads the state of a component's workload. A nil obj, or one
// being deleted, does not exist.
func LiveOf(obj client.Object) Live {
	if obj == nil || obj.GetDeletionTimestamp() != nil {
		return Live{}
	}
	l := Live{Exists: true}
	var template corev1.PodTemplateSpec
	switch w := obj.(type) {
	case *appsv1.Deployment:
		template = w.Spec.Template
	case *appsv1.StatefulSet:
		template = w.Spec.Template
	case *appsv1.DaemonSet:
		template = w.Spec.Template
	case *batchv1.CronJob:
		template = w.Spec.JobTemplate.Spec.Template
	}
	l.DatabaseVersion = template.Annotations[appsv1alpha1.DatabaseSecretVersionAnnotation]
	switch w := obj.(type) {
	case *appsv1.Deployment:
		l.Image = firstImage(w.Spec.Template.Spec)
		want := replicas(w.Spec.Replicas)
		l.Replicas, l.ReadyReplicas = want, w.Status.ReadyReplicas
		l.Ready = w.Status.ObservedGeneration >= w.Generation && w.Status.UpdatedReplicas == want &&
			w.Status.Replicas == want && w.Status.AvailableReplicas == want
		for _, c := range w.Status.Conditions {
			if c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse && c.Reason == "ProgressDeadlineExceeded" ||
				c.Type == appsv1.DeploymentReplicaFailure && c.Status == corev1.ConditionTrue {
				l.Failed, l.Message = true, c.Message
			}
		}
		if !l.Ready && !l.Failed {
			l.Message = fmt.Sprintf("%d of %d pods updated and available", w.Status.AvailableReplicas, want)
		}
	case *appsv1.StatefulSet:
		l.Image = firstImage(w.Spec.Template.Spec)
		want := replicas(w.Spec.Replicas)
		l.Replicas, l.ReadyReplicas = want, w.Status.ReadyReplicas
		l.Ready = w.Status.ObservedGeneration >= w.Generation && w.Status.UpdatedReplicas == want &&
			w.Status.ReadyReplicas == want && w.Status.AvailableReplicas == want &&
			(want == 0 || w.Status.CurrentRevision == w.Status.UpdateRevision)
		if !l.Ready {
			l.Message = fmt.Sprintf("%d of %d pods updated and ready", w.Status.UpdatedReplicas, want)
		}
	case *appsv1.DaemonSet:
		l.Image = firstImage(w.Spec.Template.Spec)
		want := w.Status.DesiredNumberScheduled
		l.Replicas, l.ReadyReplicas = want, w.Status.NumberReady
		l.Ready = w.Status.ObservedGeneration >= w.Generation && w.Status.UpdatedNumberScheduled == want &&
			w.Status.NumberAvailable == want
		if !l.Ready {
			l.Message = fmt.Sprintf("%d of %d nodes run the updated pod", w.Status.UpdatedNumberScheduled, want)
		}
	case *batchv1.CronJob:
		// A CronJob is a schedule: it is Ready once it exists. Its Jobs run
		// the image of the template they were created from.
		l.Image = firstImage(w.Spec.JobTemplate.Spec.Template.Spec)
		l.Ready = true
	}
	return l
}

func firstImage(spec corev1.PodSpec) string {
	if len(spec.Containers) == 0 {
		return ""
	}
	return spec.Containers[0].Image
}

func replicas(r *int32) int32 {
	if r == nil {
		return 1
	}
	return *r
}

// observed is what the reconciler saw and decided.
type observed struct {
	live    map[string]Live
	steps   []Step
	invalid error
	apply   error
	db      dbObserved
}

// computeStatus sets p.Status from the plan and the observed workloads.
func computeStatus(p *appsv1alpha1.Platform, o observed) {
	st := &p.Status
	gen := p.Generation
	st.ObservedGeneration = gen
	set := func(t string, v bool, reason, msg string) { conditions.Set(&st.Conditions, gen, t, v, reason, msg) }
	if o.invalid != nil {
		st.Phase = appsv1alpha1.PlatformDegraded
		conditions.SetFailed(&st.Conditions, gen, conditions.ReasonInvalidSpec, o.invalid)
		return
	}

	st.Components = nil
	enabled, ready := 0, 0
	var failed, moving []string
	upgrading := false
	for i, s := range o.steps {
		c := &p.Spec.Components[i]
		l := o.live[c.Name]
		cs := appsv1alpha1.ComponentStatus{Name: s.Name, Phase: s.Phase, Image: s.Image, Message: s.Message,
			Replicas: l.Replicas, ReadyReplicas: l.ReadyReplicas}
		if db, ok := o.db.components[c.Name]; ok {
			ready := db.ready
			cs.DatabaseReady = &ready
		}
		st.Components = append(st.Components, cs)
		if s.Phase == appsv1alpha1.ComponentDisabled {
			continue
		}
		enabled++
		switch s.Phase {
		case appsv1alpha1.ComponentReady:
			ready++
		case appsv1alpha1.ComponentFailed:
			failed = append(failed, fmt.Sprintf("%s: %s", s.Name, s.Message))
		default:
			moving = append(moving, s.Name)
		}
		if l.Exists && l.Image != EffectiveImage(p, c) {
			upgrading = true
		}
	}
	st.Ready = fmt.Sprintf("%d/%d", ready, enabled)
	if ready == enabled {
		st.Version = p.Spec.Version
	}

	if o.db.configured {
		msg := o.db.message
		if !o.db.ready {
			msg = "The database server fails; components with a database are not started until it works, the others go on: " + msg
		}
		set(appsv1alpha1.DatabaseConditionType, o.db.ready, o.db.reason, msg)
	} else {
		meta.RemoveStatusCondition(&st.Conditions, appsv1alpha1.DatabaseConditionType)
	}

	degraded := true
	switch {
	case o.apply != nil:
		st.Phase = appsv1alpha1.PlatformDegraded
		conditions.SetFailed(&st.Conditions, gen, conditions.ReasonApplyFailed, o.apply)
		return
	case o.db.configured && !o.db.ready:
		set(conditions.Degraded, true, o.db.reason, o.db.message)
	case len(failed) > 0:
		set(conditions.Degraded, true, ReasonComponentFailed, fmt.Sprint(failed))
	default:
		degraded = false
		set(conditions.Degraded, false, conditions.ReasonAsExpected, "")
	}
	// phase is the Platform's phase unless it is degraded.
	phase := func(ph appsv1alpha1.PlatformPhase) {
		st.Phase = ph
		if degraded {
			st.Phase = appsv1alpha1.PlatformDegraded
		}
	}
	switch {
	case ready == enabled:
		phase(appsv1alpha1.PlatformRunning)
		msg := fmt.Sprintf("%d of %d components Ready on version %s", ready, enabled, p.Spec.Version)
		set(conditions.Ready, true, ReasonAllReady, msg)
		set(conditions.Progressing, false, ReasonAllReady, msg)
	case upgrading:
		phase(appsv1alpha1.PlatformUpgrading)
		msg := fmt.Sprintf("Rolling version %s through the components; %d of %d Ready, in progress: %v", p.Spec.Version, ready, enabled, moving)
		set(conditions.Ready, false, ReasonUpgrading, msg)
		set(conditions.Progressing, true, ReasonUpgrading, msg)
	default:
		phase(appsv1alpha1.PlatformDeploying)
		msg := fmt.Sprintf("%d of %d components Ready; in progress: %v", ready, enabled, moving)
		set(conditions.Ready, false, ReasonDeploying, msg)
		set(conditions.Progressing, true, ReasonDeploying, msg)
	}
}
