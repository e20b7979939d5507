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

package metrics

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
	networkingv1alpha1 "github.com/kubeforge/kubeforge/api/networking/v1alpha1"
)

var (
	resourceReady = prometheus.NewDesc("kubeforge_resource_ready",
		"1 when the object's Ready condition is True, else 0.", []string{"kind", "namespace", "name"}, nil)
	resourceDegraded = prometheus.NewDesc("kubeforge_resource_degraded",
		"1 when the object's Degraded condition is True, else 0.", []string{"kind", "namespace", "name"}, nil)
	backendReadyEndpoints = prometheus.NewDesc("kubeforge_balancer_backend_ready_endpoints",
		"Ready endpoints of a Balancer backend's pods.", []string{"namespace", "name", "backend"}, nil)
	backendWeight = prometheus.NewDesc("kubeforge_balancer_backend_weight",
		"Weight of a Balancer backend (0 drains it).", []string{"namespace", "name", "backend"}, nil)
	componentReady = prometheus.NewDesc("kubeforge_platform_component_ready",
		"1 when a Platform component is Ready, else 0; disabled components are left out.", []string{"namespace", "name", "component"}, nil)
	podSetReplicas = prometheus.NewDesc("kubeforge_podset_replicas",
		"Pods of a PodSet by state: desired (spec), current, ready, available.", []string{"namespace", "name", "state"}, nil)
)

// StateCollector reports the state of every kubeforge object from a
// cache at scrape time.
type StateCollector struct {
	reader  client.Reader
	timeout time.Duration
}

// NewStateCollector reads from reader, which should be the manager's cache.
func NewStateCollector(reader client.Reader) *StateCollector {
	return &StateCollector{reader: reader, timeout: 5 * time.Second}
}

// Describe sends the descriptors of every metric it reports.
func (c *StateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{resourceReady, resourceDegraded, backendReadyEndpoints, backendWeight, componentReady, podSetReplicas} {
		ch <- d
	}
}

// Collect lists the objects and sends their metrics. A kind that cannot
// be listed (its cache not synced yet) is left out of this scrape.
func (c *StateCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	list := func(l client.ObjectList) bool {
		if err := c.reader.List(ctx, l); err != nil {
			logf.Log.WithName("metrics").Info("Leaving a kind out of this scrape", "list", fmt.Sprintf("%T", l), "error", err.Error())
			return false
		}
		return true
	}
	ready := func(kind string, obj metav1.Object, conds []metav1.Condition) {
		ch <- gauge(resourceReady, bool01(meta.IsStatusConditionTrue(conds, "Ready")), kind, obj.GetNamespace(), obj.GetName())
		ch <- gauge(resourceDegraded, bool01(meta.IsStatusConditionTrue(conds, "Degraded")), kind, obj.GetNamespace(), obj.GetName())
	}

	podSets := &appsv1alpha1.PodSetList{}
	if list(podSets) {
		for i := range podSets.Items {
			ps := &podSets.Items[i]
			ready("PodSet", ps, ps.Status.Conditions)
			desired := int32(1)
			if ps.Spec.Replicas != nil {
				desired = *ps.Spec.Replicas
			}
			for state, v := range map[string]int32{"desired": desired, "current": ps.Status.Replicas, "ready": ps.Status.ReadyReplicas, "available": ps.Status.AvailableReplicas} {
				ch <- gauge(podSetReplicas, float64(v), ps.Namespace, ps.Name, state)
			}
		}
	}
	balancers := &networkingv1alpha1.BalancerList{}
	if list(balancers) {
		for i := range balancers.Items {
			b := &balancers.Items[i]
			ready("Balancer", b, b.Status.Conditions)
			for _, bs := range b.Status.Backends {
				ch <- gauge(backendReadyEndpoints, float64(bs.ReadyEndpoints), b.Namespace, b.Name, bs.Name)
				ch <- gauge(backendWeight, float64(bs.Weight), b.Namespace, b.Name, bs.Name)
			}
		}
	}
	platforms := &appsv1alpha1.PlatformList{}
	if list(platforms) {
		for i := range platforms.Items {
			p := &platforms.Items[i]
			ready("Platform", p, p.Status.Conditions)
			for _, cs := range p.Status.Components {
				if cs.Phase == appsv1alpha1.ComponentDisabled {
					continue
				}
				ch <- gauge(componentReady, bool01(cs.Phase == appsv1alpha1.ComponentReady), p.Namespace, p.Name, cs.Name)
			}
		}
	}
	workspaces := &idev1alpha1.WorkspaceList{}
	if list(workspaces) {
		for i := range workspaces.Items {
			ready("Workspace", &workspaces.Items[i], workspaces.Items[i].Status.Conditions)
		}
	}
	clusters := &clusterv1alpha1.KubernetesClusterList{}
	if list(clusters) {
		for i := range clusters.Items {
			ready("KubernetesCluster", &clusters.Items[i], clusters.Items[i].Status.Conditions)
		}
	}
}

func gauge(d *prometheus.Desc, v float64, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

func bool01(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
