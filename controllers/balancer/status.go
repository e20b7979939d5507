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

package balancer

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	networkingv1alpha1 "github.com/kubeforge/kubeforge/api/networking/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/conditions"
	"github.com/kubeforge/kubeforge/internal/engine"
	"github.com/kubeforge/kubeforge/internal/workload"
)

// Reasons specific to Balancers.
const (
	ReasonNoActiveBackend   = "NoActiveBackend"
	ReasonBackendsUnready   = "BackendsWithoutEndpoints"
	ReasonProxyUnavailable  = "ProxyUnavailable"
	ReasonProxyAbsent       = "ProxyNotFound"
	ReasonRollingOut        = workload.ReasonRollingOut
	ReasonProxyScaledToZero = "ProxyScaledToZero"
)

// observed is what the reconciler saw of a Balancer's children.
type observed struct {
	// proxy is nil when the Deployment does not exist (yet).
	proxy *appsv1.Deployment
	// slices holds the EndpointSlices of each backend Service, by Service name.
	slices map[string][]discoveryv1.EndpointSlice
	// configHash is the hash of the nginx.conf that was applied.
	configHash string
	applyErr   error
	invalid    error
}

// computeStatus sets b.Status from what was observed. b is defaulted. It
// is a pure function; the reconciler patches the status only if this
// changed it.
func computeStatus(b *networkingv1alpha1.Balancer, o observed) {
	st := &b.Status
	st.ObservedGeneration = b.Generation
	st.Selector = Selector(b)
	if o.configHash != "" {
		st.ConfigHash = o.configHash
	}

	st.Backends = nil
	st.ActiveBackends, st.ObsoleteBackends = 0, 0
	var unready []string
	for _, be := range b.Spec.Backends {
		w := *be.Weight
		n := workload.ReadyEndpoints(o.slices[networkingv1alpha1.BackendServiceName(b, be)])
		st.Backends = append(st.Backends, networkingv1alpha1.BalancerBackendStatus{Name: be.Name, Weight: w, ReadyEndpoints: n})
		switch {
		case n == 0:
			st.ObsoleteBackends++
			if w > 0 {
				unready = append(unready, be.Name)
			}
		case w > 0:
			st.ActiveBackends++
		}
	}

	st.Replicas, st.ReadyReplicas = 0, 0
	d := o.proxy
	if d != nil {
		st.Replicas = d.Status.Replicas
		st.ReadyReplicas = d.Status.ReadyReplicas
	}

	conds := conditions.For(b, &st.Conditions)
	set := conds.Set
	if reason, err, failed := engine.Failed(o.invalid, o.applyErr); failed {
		conds.Failed(reason, err)
		return
	}

	if len(unready) > 0 {
		set(conditions.Degraded, true, ReasonBackendsUnready,
			fmt.Sprintf("Weighted backends without a ready endpoint: %s", strings.Join(unready, ", ")))
	} else {
		set(conditions.Degraded, false, conditions.ReasonAsExpected, "Every weighted backend has ready endpoints")
	}

	if d == nil {
		set(conditions.Progressing, true, conditions.ReasonReconciling, "Creating the proxy Deployment")
		set(conditions.Ready, false, ReasonProxyAbsent, "The proxy Deployment does not exist yet")
		return
	}
	desired := *b.Spec.Replicas
	r := workload.Deployment(d, desired)
	progressing, reason, msg := r.Progressing("proxy pods", conditions.ReasonReconciling)
	set(conditions.Progressing, progressing, reason, msg)

	switch {
	case desired == 0:
		set(conditions.Ready, false, ReasonProxyScaledToZero, "The proxy is scaled to zero pods")
	case !r.AvailableCondition || r.Available == 0:
		set(conditions.Ready, false, ReasonProxyUnavailable, fmt.Sprintf("%d of %d proxy pods available", d.Status.AvailableReplicas, desired))
	case st.ActiveBackends == 0:
		set(conditions.Ready, false, ReasonNoActiveBackend, "No backend with a weight above 0 has a ready endpoint")
	default:
		set(conditions.Ready, true, conditions.ReasonAvailable,
			fmt.Sprintf("%d of %d proxy pods available; %d of %d backends active", d.Status.AvailableReplicas, desired, st.ActiveBackends, len(b.Spec.Backends)))
	}
}
