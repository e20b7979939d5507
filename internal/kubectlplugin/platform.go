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

package kubectlplugin

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
)

func platformCommand(newEnv func() (*env, error)) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "platform",
		Aliases: []string{"plat"},
		Short:   "A Platform's components",
	}
	graph := &cobra.Command{
		Use:     "graph NAME",
		Short:   "The components in the order they deploy and roll (dependencies first), each with its phase",
		Example: `  kubectl kubeforge platform graph shop`,
		Args:    cobra.ExactArgs(1),
		RunE: run(newEnv, func(ctx context.Context, e *env, args []string) error {
			p := &appsv1alpha1.Platform{}
			if err := e.get(ctx, "Platform", args[0], p); err != nil {
				return err
			}
			return writeGraph(e.out, p)
		}),
	}
	cmd.AddCommand(graph)
	return cmd
}

// writeGraph orders the components by the same reading of dependsOn the
// controller deploys by.
func writeGraph(w io.Writer, p *appsv1alpha1.Platform) error {
	order, cycle := appsv1alpha1.DependencyOrder(p.Spec.Components)
	if cycle != nil {
		return fmt.Errorf("platform %s/%s: dependsOn forms a cycle %s", p.Namespace, p.Name, strings.Join(cycle, " → "))
	}
	st := map[string]appsv1alpha1.ComponentStatus{}
	for _, c := range p.Status.Components {
		st[c.Name] = c
	}
	fmt.Fprintf(w, "Platform %s/%s  %s  version %s, %s components ready\n", p.Namespace, p.Name,
		printable(orNone(string(p.Status.Phase))), printable(orNone(p.Status.Version)), printable(orNone(p.Status.Ready)))
	rows := [][]string{{"#", "COMPONENT", "DEPENDS ON", "WORKLOAD", "PHASE", "READY", "IMAGE", "MESSAGE"}}
	for n, i := range order {
		c := p.Spec.Components[i]
		s := st[c.Name]
		phase := string(s.Phase)
		if phase == "" {
			phase = "-"
		}
		deps := strings.Join(c.DependsOn, ",")
		if deps == "" {
			deps = "-"
		}
		workload := string(c.Workload)
		if workload == "" {
			workload = string(appsv1alpha1.WorkloadDeployment)
		}
		ready := fmt.Sprintf("%d/%d", s.ReadyReplicas, s.Replicas)
		if c.Disable {
			ready = "-"
		}
		image := s.Image
		if image == "" {
			image = "-"
		}
		rows = append(rows, []string{fmt.Sprint(n + 1), c.Name, deps, workload, phase, ready, image, s.Message})
	}
	writeTable(w, rows)
	return nil
}
