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
	"cmp"
	"fmt"
	"slices"
	"strings"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
)

// Live is what was observed of one component's workload.
type Live struct {
	// Exists is true when the workload exists (and is not being deleted).
	Exists bool
	// Image is the image in the workload's pod template.
	Image string
	// Ready is true when the workload's controller has rolled out its
	// current template and every pod is available.
	Ready bool
	// Failed is true when the workload cannot make progress.
	Failed                  bool
	Message                 string
	Replicas, ReadyReplicas int32
	// DatabaseVersion is the database Secret version its pod template
	// carries: what its pods' DB_* variables were provisioned from.
	DatabaseVersion string
	// Unrestricted is true when its pods are not restricted (runAsNonRoot
	// is not set): made by an operator that predates
	// spec.components[].podSecurity, or Baseline.
	Unrestricted bool

	// Bootstrap is the component's bootstrap Job; PreUpgrade its
	// preUpgrade Job for the target image.
	Bootstrap, PreUpgrade Hook
	// Bootstrapped, PreviousImage and FailedImage are what the Platform's
	// status recorded of the component (see ComponentStatus).
	Bootstrapped               bool
	PreviousImage, FailedImage string
}

// Hook is what was observed of one hook Job.
type Hook struct {
	Exists, Done, Succeeded bool
	// Message says why it failed.
	Message string
}

// Failed is true when the hook Job ran and failed.
func (h Hook) Failed() bool { return h.Done && !h.Succeeded }

// Step is what the reconciler does with one component.
type Step struct {
	Name string
	// Deploy is true when the component's objects are applied, running Image.
	Deploy bool
	// Image the component runs, or moves to.
	Image string
	// Upgrade is true when Image is a new image for an existing workload.
	Upgrade bool
	Phase   appsv1alpha1.ComponentPhase
	Message string

	// Bootstrap and PreUpgrade are true when that hook's Job is applied
	// (created if missing, kept while it exists).
	Bootstrap, PreUpgrade bool
	// Bootstrapped is true once the bootstrap hook succeeded (or when
	// there is none to run).
	Bootstrapped bool
	// PreviousImage is the image it ran before its last move.
	PreviousImage string
	// FailedImage is the image it was rolled back from; RolledBack is true
	// in the reconcile that rolls it back.
	FailedImage string
	RolledBack  bool
	// UpgradeFailed is true when the component failed to move to its
	// target (its workload on the new image fails, its preUpgrade Job
	// failed, or it was rolled back): the upgrade pauses.
	UpgradeFailed bool
}

// Plan decides, for every component, whether its objects are applied and
// with which image, from the spec and what was observed:
//
//   - a component that does not exist is created only when everything it
//     depends on is Ready on its own target image;
//   - an existing component moves to its target image only when
//     everything it depends on runs its target image and is Ready, and its
//     preUpgrade Job (if any) succeeded with the target image; until then it
//     keeps the image it runs (and gets every other change);
//   - a component with a bootstrap hook is Ready (for its dependents too)
//     once its bootstrap Job succeeded, which runs once after it is first
//     Ready;
//   - when a component fails to move to its target, no other component
//     starts to move (upgradePolicy.onFailure Pause); with Rollback the
//     failed component also returns to the image it ran before, and stays
//     there until the target changes;
//   - a disabled component is not applied (its objects are pruned); it
//     does not hold back the components that depend on it;
//   - a component named in blocked (with the reason) is not created; one
//     that exists goes on running. Its database not being ready is the
//     case.
//
// Steps come back in spec order.
func Plan(p *appsv1alpha1.Platform, live map[string]Live, blocked map[string]string) ([]Step, error) {
	comps := p.Spec.Components
	order, cycle := appsv1alpha1.DependencyOrder(comps)
	if len(cycle) > 0 {
		return nil, fmt.Errorf("dependsOn forms a cycle: %s", strings.Join(cycle, " → "))
	}
	disabled := map[string]bool{}
	for _, c := range comps {
		disabled[c.Name] = c.Disable
	}
	// onTarget: Ready, bootstrapped and running its target image, as observed.
	onTarget := map[string]bool{}
	// failing: components that failed to move to their target.
	var failing []string
	for i := range comps {
		c := &comps[i]
		l := live[c.Name]
		target := EffectiveImage(p, c)
		onTarget[c.Name] = l.Exists && l.Ready && l.Image == target && bootstrapped(c, l)
		if !c.Disable && upgradeFailed(c, l, target) {
			failing = append(failing, c.Name)
		}
	}
	rollback := p.Spec.UpgradePolicy.OnFailure == appsv1alpha1.UpgradeRollback

	steps := make([]Step, len(comps))
	for _, i := range order {
		c := &comps[i]
		target := EffectiveImage(p, c)
		l := live[c.Name]
		st := Step{Name: c.Name, Image: target, PreviousImage: l.PreviousImage, Bootstrapped: bootstrapped(c, l)}
		if l.FailedImage == target {
			st.FailedImage = target
		}
		var waitingFor []string
		for _, d := range c.DependsOn {
			if !disabled[d] && !onTarget[d] && d != c.Name {
				waitingFor = append(waitingFor, d)
			}
		}
		othersFailed := slices.DeleteFunc(slices.Clone(failing), func(n string) bool { return n == c.Name })
		hooks := c.Hooks
		if hooks == nil {
			hooks = &appsv1alpha1.ComponentHooks{}
		}
		switch {
		case c.Disable:
			st.Image, st.Phase, st.Message = "", appsv1alpha1.ComponentDisabled, "Disabled"
		case !l.Exists && blocked[c.Name] != "":
			st.Phase, st.Message = appsv1alpha1.ComponentWaiting, blocked[c.Name]
		case !l.Exists && len(waitingFor) > 0:
			st.Phase = appsv1alpha1.ComponentWaiting
			st.Message = "Waiting for " + strings.Join(waitingFor, ", ") + " to be Ready"
		case !l.Exists:
			st.Deploy, st.Phase, st.Message = true, appsv1alpha1.ComponentDeploying, "Creating"
		case l.Image != target && st.FailedImage != "":
			// Rolled back from target: stays where it is until the target changes.
			st.Deploy, st.Image, st.UpgradeFailed = true, l.Image, true
			st.Phase = appsv1alpha1.ComponentFailed
			st.Message = fmt.Sprintf("Rolled back to %s: %s failed; set another version (or image) to try again", l.Image, target)
		case l.Image != target && len(waitingFor) > 0:
			st.Deploy, st.Image = true, l.Image
			st.Phase = appsv1alpha1.ComponentWaiting
			st.Message = fmt.Sprintf("Runs %s; moves to %s once %s run the new version and are Ready", l.Image, target, strings.Join(waitingFor, ", "))
		case l.Image != target && len(othersFailed) > 0 && !l.PreUpgrade.Exists:
			st.Deploy, st.Image = true, l.Image
			st.Phase = appsv1alpha1.ComponentWaiting
			st.Message = fmt.Sprintf("Upgrade paused: %s failed to move to the new version; runs %s", strings.Join(othersFailed, ", "), l.Image)
		case l.Image != target && hooks.PreUpgrade != nil && !l.PreUpgrade.Succeeded:
			st.Deploy, st.Image, st.PreUpgrade = true, l.Image, true
			if l.PreUpgrade.Failed() {
				st.Phase, st.UpgradeFailed = appsv1alpha1.ComponentFailed, true
				st.Message = fmt.Sprintf("The preUpgrade Job %s for %s failed, so it stays on %s: %s",
					HookJobName(p, c, HookPreUpgrade, target), target, l.Image, l.PreUpgrade.Message)
			} else {
				st.Phase = appsv1alpha1.ComponentDeploying
				st.Message = fmt.Sprintf("Running the preUpgrade Job %s with %s before moving to it", HookJobName(p, c, HookPreUpgrade, target), target)
			}
		case l.Image != target:
			st.Deploy, st.Upgrade, st.PreUpgrade = true, true, hooks.PreUpgrade != nil
			st.PreviousImage = l.Image
			st.Phase, st.Message = appsv1alpha1.ComponentDeploying, "Moving to "+target
		case l.Failed && upgradeFailed(c, l, target) && rollback:
			st.Deploy, st.Image, st.RolledBack, st.UpgradeFailed = true, l.PreviousImage, true, true
			st.FailedImage = target
			st.Phase = appsv1alpha1.ComponentFailed
			st.Message = fmt.Sprintf("Rolled back to %s: %s failed: %s", l.PreviousImage, target, l.Message)
		case l.Failed:
			st.Deploy, st.Phase, st.Message = true, appsv1alpha1.ComponentFailed, l.Message
			st.UpgradeFailed = upgradeFailed(c, l, target)
		case !l.Ready:
			st.Deploy, st.Phase, st.Message = true, appsv1alpha1.ComponentDeploying, cmp.Or(l.Message, "Rolling out")
		case hooks.Bootstrap != nil && !st.Bootstrapped:
			st.Deploy, st.Bootstrap = true, true
			if l.Bootstrap.Failed() {
				st.Phase = appsv1alpha1.ComponentFailed
				st.Message = fmt.Sprintf("The bootstrap Job %s failed: %s", HookJobName(p, c, HookBootstrap, ""), l.Bootstrap.Message)
			} else {
				st.Phase = appsv1alpha1.ComponentDeploying
				st.Message = "Running the bootstrap Job " + HookJobName(p, c, HookBootstrap, "")
			}
		default:
			st.Deploy, st.Phase, st.Message = true, appsv1alpha1.ComponentReady, "Ready"
		}
		if l.Failed && st.Phase != appsv1alpha1.ComponentDisabled && !st.RolledBack && st.FailedImage == "" {
			st.Phase, st.Message = appsv1alpha1.ComponentFailed, l.Message
		}
		// A hook Job that exists stays (it is the record of its run and holds
		// its logs) as long as the component does.
		if st.Deploy {
			st.Bootstrap = st.Bootstrap || (hooks.Bootstrap != nil && l.Bootstrap.Exists)
			st.PreUpgrade = st.PreUpgrade || (hooks.PreUpgrade != nil && l.PreUpgrade.Exists)
		}
		steps[i] = st
	}
	return steps, nil
}

// bootstrapped: the component has no bootstrap hook, or it succeeded.
func bootstrapped(c *appsv1alpha1.PlatformComponent, l Live) bool {
	return c.Hooks == nil || c.Hooks.Bootstrap == nil || l.Bootstrapped || l.Bootstrap.Succeeded
}

// upgradeFailed: the component failed to move to target — its workload
// fails on target after a move, its preUpgrade Job for target failed, or
// it was rolled back from target.
func upgradeFailed(c *appsv1alpha1.PlatformComponent, l Live, target string) bool {
	switch {
	case !l.Exists:
		return false
	case l.FailedImage == target:
		return true
	case l.Image != target:
		return c.Hooks != nil && c.Hooks.PreUpgrade != nil && l.PreUpgrade.Failed()
	default:
		return l.Failed && l.PreviousImage != "" && l.PreviousImage != target
	}
}
