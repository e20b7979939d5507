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
}

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
}

// Plan decides, for every component, whether its objects are applied and
// with which image, from the spec and what was observed:
//
//   - a component that does not exist is created only when everything it
//     depends on is Ready on its own target image;
//   - an existing component moves to its target image only when
//     everything it depends on runs its target image and is Ready; until
//     then it keeps the image it runs (and gets every other change);
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
	// onTarget: Ready and running its target image, as observed.
	onTarget := map[string]bool{}
	for i := range comps {
		c := &comps[i]
		l := live[c.Name]
		onTarget[c.Name] = l.Exists && l.Ready && l.Image == EffectiveImage(p, c)
	}

	steps := make([]Step, len(comps))
	for _, i := range order {
		c := &comps[i]
		target := EffectiveImage(p, c)
		l := live[c.Name]
		st := Step{Name: c.Name, Image: target}
		var waitingFor []string
		for _, d := range c.DependsOn {
			if !disabled[d] && !onTarget[d] && d != c.Name {
				waitingFor = append(waitingFor, d)
			}
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
		case l.Image != target && len(waitingFor) > 0:
			st.Deploy, st.Image = true, l.Image
			st.Phase = appsv1alpha1.ComponentWaiting
			st.Message = fmt.Sprintf("Runs %s; moves to %s once %s run the new version and are Ready", l.Image, target, strings.Join(waitingFor, ", "))
		case l.Image != target:
			st.Deploy, st.Upgrade = true, true
			st.Phase, st.Message = appsv1alpha1.ComponentDeploying, "Moving to "+target
		case l.Failed:
			st.Deploy, st.Phase, st.Message = true, appsv1alpha1.ComponentFailed, l.Message
		case !l.Ready:
			st.Deploy, st.Phase, st.Message = true, appsv1alpha1.ComponentDeploying, cmp.Or(l.Message, "Rolling out")
		default:
			st.Deploy, st.Phase, st.Message = true, appsv1alpha1.ComponentReady, "Ready"
		}
		if l.Failed && st.Phase != appsv1alpha1.ComponentDisabled {
			st.Phase, st.Message = appsv1alpha1.ComponentFailed, l.Message
		}
		steps[i] = st
	}
	return steps, nil
}
