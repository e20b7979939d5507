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
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/conditions"
	"github.com/kubeforge/kubeforge/internal/engine"
	"github.com/kubeforge/kubeforge/internal/workload"
)

// Reasons specific to Platforms.
const (
	ReasonComponentFailed = "ComponentFailed"
	ReasonUpgrading       = "Upgrading"
	ReasonDeploying       = "Deploying"
	ReasonAllReady        = "AllComponentsReady"
	ReasonRolledBack      = "UpgradeRolledBack"
	ReasonUpgradePaused   = "UpgradePaused"
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
	sc := template.Spec.SecurityContext
	l.Unrestricted = sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot
	// Read with the image from one object, so they never disagree.
	l.PreviousImage = obj.GetAnnotations()[appsv1alpha1.PreviousImageAnnotation]
	l.FailedImage = obj.GetAnnotations()[appsv1alpha1.FailedImageAnnotation]
	l.Image = firstImage(template.Spec)
	r, isWorkload := workload.Of(obj)
	if !isWorkload {
		// A CronJob is a schedule: it is Ready once it exists. Its Jobs
		// run the image of the template they were created from.
		l.Ready = true
		return l
	}
	l.Replicas, l.ReadyReplicas = r.Desired, r.Ready
	l.Ready = r.Settled
	switch {
	case r.Failed:
		l.Failed, l.Message = true, r.Message
	case !r.Settled:
		l.Message = r.Progress
	}
	return l
}

func firstImage(spec corev1.PodSpec) string {
	if len(spec.Containers) == 0 {
		return ""
	}
	return spec.Containers[0].Image
}

// observed is what the reconciler saw and decided.
type observed struct {
	live    map[string]Live
	steps   []Step
	invalid error
	apply   error
	db      dbObserved
	// secrets are the generated Secrets of spec.secrets.
	secrets []client.Object
	// unsetPodSecurity are the components that run unrestricted because
	// they were made before spec.components[].podSecurity (PodSecurityOf).
	unsetPodSecurity []string
}

// ReasonPodSecurityUnset is the PodSecurity condition's reason (and the
// Warning's) while components run as they did before podSecurity.
const ReasonPodSecurityUnset = "PodSecurityUnset"

func podSecurityUnsetMessage(names []string) string {
	return fmt.Sprintf("Components %s run as their images say (as before spec.components[].podSecurity existed), not restricted; "+
		"set podSecurity to Restricted, or to Baseline to keep them as they are", strings.Join(names, ", "))
}

// podSecurityReported is true when the status already says so of these
// components: the Warning is recorded once, not on every reconcile.
func podSecurityReported(p *appsv1alpha1.Platform, names []string) bool {
	c := meta.FindStatusCondition(p.Status.Conditions, appsv1alpha1.PodSecurityConditionType)
	return c != nil && c.Status == metav1.ConditionFalse && c.Message == podSecurityUnsetMessage(names)
}

// dbFailsPrefix opens the DatabaseReady message of a failure.
const dbFailsPrefix = "The database server fails; components with a database are not started until it works, the others go on: "

// computeStatus sets p.Status from the plan and the observed workloads.
// p is defaulted.
func computeStatus(p *appsv1alpha1.Platform, o observed) {
	st := &p.Status
	conds := conditions.For(p, &st.Conditions)
	set := conds.Set
	if o.invalid != nil {
		st.ObservedGeneration = p.Generation
		st.Phase = appsv1alpha1.PlatformDegraded
		conds.Failed(engine.InvalidReason(o.invalid), o.invalid)
		return
	}
	if o.steps == nil {
		// The pass ended before its plan (a generated Secret being made
		// anew or refused; a read that failed, returned for a retry): what
		// the status says of the components — their phases, the record of
		// each bootstrap — and the version stay as they were; a wait
		// leaves observedGeneration too, so nothing claims this generation
		// rolled out. A failure is said, of this generation (not Ready).
		if reason, err, failed := engine.Failed(nil, o.apply); failed {
			st.ObservedGeneration = p.Generation
			st.Phase = appsv1alpha1.PlatformDegraded
			conds.Failed(reason, err)
		}
		return
	}
	st.ObservedGeneration = p.Generation

	st.Components = nil
	enabled, ready := 0, 0
	var failed, moving, upgradeFailed []string
	upgrading := false
	for i, s := range o.steps {
		c := &p.Spec.Components[i]
		l := o.live[c.Name]
		cs := appsv1alpha1.ComponentStatus{Name: s.Name, Phase: s.Phase, Image: s.Image, Message: s.Message,
			Replicas: l.Replicas, ReadyReplicas: l.ReadyReplicas, URL: URL(c),
			Bootstrapped:  s.Bootstrapped && c.Hooks != nil && c.Hooks.Bootstrap != nil && l.Exists,
			PreviousImage: s.PreviousImage, FailedImage: s.FailedImage}
		if s.UpgradeFailed {
			upgradeFailed = append(upgradeFailed, s.Name)
		}
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
		if !o.db.ready && !o.db.pending {
			msg = dbFailsPrefix + msg
		}
		set(appsv1alpha1.DatabaseConditionType, o.db.ready, o.db.reason, msg)
	} else {
		meta.RemoveStatusCondition(&st.Conditions, appsv1alpha1.DatabaseConditionType)
	}
	if len(o.unsetPodSecurity) > 0 {
		set(appsv1alpha1.PodSecurityConditionType, false, ReasonPodSecurityUnset, podSecurityUnsetMessage(o.unsetPodSecurity))
	} else {
		meta.RemoveStatusCondition(&st.Conditions, appsv1alpha1.PodSecurityConditionType)
	}

	degraded := true
	switch {
	case o.apply != nil && !engine.Waiting(o.apply): // a wait is progress: the next pass goes on
		st.Phase = appsv1alpha1.PlatformDegraded
		conds.Failed(engine.FailureReason(o.apply), o.apply)
		return
	case o.db.configured && !o.db.ready && !o.db.pending:
		set(conditions.Degraded, true, o.db.reason, o.db.message)
	case len(upgradeFailed) > 0 && p.Spec.UpgradePolicy.OnFailure == appsv1alpha1.UpgradeRollback:
		set(conditions.Degraded, true, ReasonRolledBack, fmt.Sprintf("Version %s failed on %v, rolled back; the others wait: %v", p.Spec.Version, upgradeFailed, failed))
	case len(upgradeFailed) > 0:
		set(conditions.Degraded, true, ReasonUpgradePaused, fmt.Sprintf("Version %s failed on %v; the upgrade is paused: %v", p.Spec.Version, upgradeFailed, failed))
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
