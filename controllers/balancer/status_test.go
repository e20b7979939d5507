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
	"errors"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"

	networkingv1alpha1 "github.com/kubeforge/kubeforge/api/networking/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/conditions"
	"github.com/kubeforge/kubeforge/internal/workload"
)

func slice(ready ...bool) discoveryv1.EndpointSlice {
	s := discoveryv1.EndpointSlice{AddressType: discoveryv1.AddressTypeIPv4}
	for i, r := range ready {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{
			Addresses:  []string{"10.0.0." + string(rune('1'+i))},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(r)},
		})
	}
	return s
}

func availableProxy(replicas int32) *appsv1.Deployment {
	d := &appsv1.Deployment{}
	d.Status = appsv1.DeploymentStatus{
		Replicas: replicas, UpdatedReplicas: replicas, ReadyReplicas: replicas, AvailableReplicas: replicas,
		Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue}},
	}
	return d
}

func TestReadyEndpointsCountsEachReadyAddressOnce(t *testing.T) {
	unknown := slice(true)
	unknown.Endpoints[0].Conditions.Ready = nil
	unknown.Endpoints[0].Addresses = []string{"10.0.0.9"}
	if got := workload.ReadyEndpoints([]discoveryv1.EndpointSlice{slice(true, false, true), slice(true), unknown}); got != 3 {
		t.Fatalf("ReadyEndpoints = %d, want 3 (10.0.0.1, 10.0.0.3 repeated once, 10.0.0.9 with unknown readiness)", got)
	}
}

func TestComputeStatus(t *testing.T) {
	cases := []struct {
		name                     string
		weights                  [2]int32
		slices                   map[string][]discoveryv1.EndpointSlice
		proxy                    *appsv1.Deployment
		err                      error
		active, obsolete         int32
		ready, degraded          metav1ConditionStatus
		readyReason, degradedWhy string
	}{
		{
			name: "both backends serve and the proxy is available: ready", weights: [2]int32{90, 10},
			slices: map[string][]discoveryv1.EndpointSlice{"shop-v1": {slice(true, true)}, "shop-v2": {slice(true)}},
			proxy:  availableProxy(1), active: 2, obsolete: 0,
			ready: "True", readyReason: conditions.ReasonAvailable, degraded: "False", degradedWhy: conditions.ReasonAsExpected,
		},
		{
			name: "a weighted backend without endpoints is obsolete and degrades the Balancer", weights: [2]int32{90, 10},
			slices: map[string][]discoveryv1.EndpointSlice{"shop-v1": {slice(true)}, "shop-v2": {slice(false)}},
			proxy:  availableProxy(1), active: 1, obsolete: 1,
			ready: "True", readyReason: conditions.ReasonAvailable, degraded: "True", degradedWhy: ReasonBackendsUnready,
		},
		{
			name: "a drained backend without endpoints is obsolete but does not degrade", weights: [2]int32{100, 0},
			slices: map[string][]discoveryv1.EndpointSlice{"shop-v1": {slice(true)}},
			proxy:  availableProxy(1), active: 1, obsolete: 1,
			ready: "True", readyReason: conditions.ReasonAvailable, degraded: "False", degradedWhy: conditions.ReasonAsExpected,
		},
		{
			name: "a drained backend with endpoints is neither active nor obsolete", weights: [2]int32{100, 0},
			slices: map[string][]discoveryv1.EndpointSlice{"shop-v1": {slice(true)}, "shop-v2": {slice(true)}},
			proxy:  availableProxy(1), active: 1, obsolete: 0,
			ready: "True", readyReason: conditions.ReasonAvailable, degraded: "False", degradedWhy: conditions.ReasonAsExpected,
		},
		{
			name: "no backend serves: not ready", weights: [2]int32{1, 1},
			proxy: availableProxy(1), active: 0, obsolete: 2,
			ready: "False", readyReason: ReasonNoActiveBackend, degraded: "True", degradedWhy: ReasonBackendsUnready,
		},
		{
			name: "the proxy is not available yet: not ready", weights: [2]int32{1, 1},
			slices: map[string][]discoveryv1.EndpointSlice{"shop-v1": {slice(true)}, "shop-v2": {slice(true)}},
			proxy:  &appsv1.Deployment{}, active: 2,
			ready: "False", readyReason: ReasonProxyUnavailable, degraded: "False", degradedWhy: conditions.ReasonAsExpected,
		},
		{
			name: "no proxy Deployment yet", weights: [2]int32{1, 1}, obsolete: 2,
			ready: "False", readyReason: ReasonProxyAbsent, degraded: "True", degradedWhy: ReasonBackendsUnready,
		},
		{
			name: "an apply error is reported", weights: [2]int32{1, 1}, err: errors.New("boom"), obsolete: 2,
			ready: "False", readyReason: conditions.ReasonApplyFailed, degraded: "True", degradedWhy: conditions.ReasonApplyFailed,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := balancerWith([]networkingv1alpha1.BalancerPort{tcp("http", 80, 8080)}, backend("v1", tc.weights[0]), backend("v2", tc.weights[1]))
			b.Generation = 4
			computeStatus(b, observed{proxy: tc.proxy, slices: tc.slices, applyErr: tc.err, configHash: "abc"})
			st := b.Status
			if st.ActiveBackends != tc.active || st.ObsoleteBackends != tc.obsolete {
				t.Errorf("active %d obsolete %d, want %d and %d", st.ActiveBackends, st.ObsoleteBackends, tc.active, tc.obsolete)
			}
			r := meta.FindStatusCondition(st.Conditions, conditions.Ready)
			d := meta.FindStatusCondition(st.Conditions, conditions.Degraded)
			if r == nil || string(r.Status) != string(tc.ready) || r.Reason != tc.readyReason {
				t.Errorf("Ready = %+v, want %s/%s", r, tc.ready, tc.readyReason)
			}
			if d == nil || string(d.Status) != string(tc.degraded) || d.Reason != tc.degradedWhy {
				t.Errorf("Degraded = %+v, want %s/%s", d, tc.degraded, tc.degradedWhy)
			}
			if r != nil && r.ObservedGeneration != 4 || st.ObservedGeneration != 4 {
				t.Errorf("observedGeneration not 4: %d", st.ObservedGeneration)
			}
			if len(st.Backends) != 2 || st.Backends[0].Weight != tc.weights[0] || st.Selector != Selector(b) {
				t.Errorf("backends %+v selector %q", st.Backends, st.Selector)
			}
		})
	}
}

type metav1ConditionStatus string
