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

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/kubeforge/kubeforge/api/networking/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/workload"
)

func balancerCommand(newEnv func() (*env, error)) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "balancer",
		Aliases: []string{"bal"},
		Short:   "A Balancer's traffic split",
	}
	split := &cobra.Command{
		Use:   "split NAME",
		Short: "Each backend's configured weight against its ready endpoints, and the share of new connections it gets now",
		Long: `split shows, per backend, the weight in the spec and the share of new
connections it asks for, the ready endpoints of the backend's Service (read
live from its EndpointSlices), and the share it gets now: a backend without
a ready endpoint gets none, and the others divide its share by their weights.`,
		Example: `  kubectl kubeforge balancer split web`,
		Args:    cobra.ExactArgs(1),
		RunE: run(newEnv, func(ctx context.Context, e *env, args []string) error {
			b := &networkingv1alpha1.Balancer{}
			if err := e.get(ctx, "Balancer", args[0], b); err != nil {
				return err
			}
			rows, live, err := e.splitRows(ctx, b)
			if err != nil {
				return err
			}
			writeSplit(e.out, b, rows, live)
			return nil
		}),
	}
	cmd.AddCommand(split)
	return cmd
}

type splitRow struct {
	name    string
	service string
	weight  int32
	ready   int32
}

// splitRows reads each backend's ready endpoints from its Service's
// EndpointSlices; where the user may not list them, from the Balancer's
// status (live is then false).
func (e *env) splitRows(ctx context.Context, b *networkingv1alpha1.Balancer) ([]splitRow, bool, error) {
	live := true
	fromStatus := map[string]int32{}
	for _, s := range b.Status.Backends {
		fromStatus[s.Name] = s.ReadyEndpoints
	}
	var rows []splitRow
	for _, be := range b.Spec.Backends {
		r := splitRow{name: be.Name, service: networkingv1alpha1.BackendServiceName(b, be), weight: networkingv1alpha1.BalancerDefaultWeight}
		if be.Weight != nil {
			r.weight = *be.Weight
		}
		if live {
			// The Service's own slices (workload.ServiceSlices: labels are
			// anyone's to put on a slice), of the Service the Balancer
			// controls: one made first under its name is not its backend.
			svc := &corev1.Service{}
			slices := &discoveryv1.EndpointSliceList{}
			err := e.c.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: r.service}, svc)
			if err == nil {
				err = e.c.List(ctx, slices, client.InNamespace(b.Namespace), client.MatchingLabels{discoveryv1.LabelServiceName: r.service})
			}
			switch {
			case apierrors.IsForbidden(err):
				live = false
			case apierrors.IsNotFound(err), err == nil && !metav1.IsControlledBy(svc, b):
				r.ready = 0
			case err != nil:
				return nil, false, fmt.Errorf("reading the EndpointSlices of Service %s: %w", r.service, err)
			default:
				r.ready = workload.ReadyEndpoints(workload.ServiceSlices(slices.Items, svc))
			}
		}
		if !live {
			r.ready = fromStatus[be.Name]
		}
		rows = append(rows, r)
	}
	if !live {
		for i := range rows {
			rows[i].ready = fromStatus[rows[i].name]
		}
	}
	return rows, live, nil
}

// writeSplit prints the split table: configured share is weight over all
// weights; the share now is weight over the weights of backends with a
// ready endpoint.
func writeSplit(w io.Writer, b *networkingv1alpha1.Balancer, rows []splitRow, live bool) {
	var all, serving int32
	for _, r := range rows {
		all += r.weight
		if r.ready > 0 {
			serving += r.weight
		}
	}
	share := func(wt, of int32) string {
		if of == 0 || wt == 0 {
			return "0%"
		}
		return fmt.Sprintf("%.0f%%", 100*float64(wt)/float64(of))
	}
	fmt.Fprintf(w, "Balancer %s/%s: proxy %d/%d ready\n", b.Namespace, b.Name, b.Status.ReadyReplicas, b.Status.Replicas)
	table := [][]string{{"BACKEND", "SERVICE", "WEIGHT", "CONFIGURED", "READY ENDPOINTS", "SHARE NOW"}}
	for _, r := range rows {
		now := share(r.weight, serving)
		if r.ready == 0 {
			now = "0%"
		}
		table = append(table, []string{r.name, r.service, fmt.Sprint(r.weight), share(r.weight, all), fmt.Sprint(r.ready), now})
	}
	writeTable(w, table)
	if !live {
		fmt.Fprintln(w, "(ready endpoints from the Balancer's status: your RBAC does not let you list EndpointSlices)")
	}
	if serving == 0 {
		fmt.Fprintln(w, "No weighted backend has a ready endpoint: new connections have nowhere to go.")
	}
}
