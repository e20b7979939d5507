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
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
	networkingv1alpha1 "github.com/kubeforge/kubeforge/api/networking/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/scheme"
)

func readyCond(v bool) []metav1.Condition {
	s := metav1.ConditionFalse
	if v {
		s = metav1.ConditionTrue
	}
	return []metav1.Condition{{Type: "Ready", Status: s, Reason: "X"}}
}

func TestStateCollector(t *testing.T) {
	three := int32(3)
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(
		&appsv1alpha1.PodSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "a"}, Spec: appsv1alpha1.PodSetSpec{Replicas: &three},
			Status: appsv1alpha1.PodSetStatus{Replicas: 3, ReadyReplicas: 2, AvailableReplicas: 2, Conditions: readyCond(false)}},
		&networkingv1alpha1.Balancer{ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: "a"},
			Status: networkingv1alpha1.BalancerStatus{Conditions: readyCond(true), Backends: []networkingv1alpha1.BalancerBackendStatus{
				{Name: "v1", Weight: 90, ReadyEndpoints: 2}, {Name: "v2", Weight: 10, ReadyEndpoints: 0}}}},
		&appsv1alpha1.Platform{ObjectMeta: metav1.ObjectMeta{Name: "acme", Namespace: "b"},
			Status: appsv1alpha1.PlatformStatus{Conditions: append(readyCond(false), metav1.Condition{Type: "Degraded", Status: metav1.ConditionTrue, Reason: "ComponentFailed"}), Components: []appsv1alpha1.ComponentStatus{
				{Name: "db", Phase: appsv1alpha1.ComponentReady}, {Name: "api", Phase: appsv1alpha1.ComponentDeploying}, {Name: "agent", Phase: appsv1alpha1.ComponentDisabled}}}},
		&idev1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "alice", Namespace: "b"}, Status: idev1alpha1.WorkspaceStatus{Conditions: readyCond(true)}},
		&clusterv1alpha1.KubernetesCluster{ObjectMeta: metav1.ObjectMeta{Name: "prod", Namespace: "c"}},
	).Build()

	want := `
# HELP kubeforge_balancer_backend_ready_endpoints Ready endpoints of a Balancer backend's pods.
# TYPE kubeforge_balancer_backend_ready_endpoints gauge
kubeforge_balancer_backend_ready_endpoints{backend="v1",name="shop",namespace="a"} 2
kubeforge_balancer_backend_ready_endpoints{backend="v2",name="shop",namespace="a"} 0
# HELP kubeforge_balancer_backend_weight Weight of a Balancer backend (0 drains it).
# TYPE kubeforge_balancer_backend_weight gauge
kubeforge_balancer_backend_weight{backend="v1",name="shop",namespace="a"} 90
kubeforge_balancer_backend_weight{backend="v2",name="shop",namespace="a"} 10
# HELP kubeforge_platform_component_ready 1 when a Platform component is Ready, else 0; disabled components are left out.
# TYPE kubeforge_platform_component_ready gauge
kubeforge_platform_component_ready{component="api",name="acme",namespace="b"} 0
kubeforge_platform_component_ready{component="db",name="acme",namespace="b"} 1
# HELP kubeforge_podset_replicas Pods of a PodSet by state: desired (spec), current, ready, available.
# TYPE kubeforge_podset_replicas gauge
kubeforge_podset_replicas{name="web",namespace="a",state="available"} 2
kubeforge_podset_replicas{name="web",namespace="a",state="current"} 3
kubeforge_podset_replicas{name="web",namespace="a",state="desired"} 3
kubeforge_podset_replicas{name="web",namespace="a",state="ready"} 2
# HELP kubeforge_resource_degraded 1 when the object's Degraded condition is True, else 0.
# TYPE kubeforge_resource_degraded gauge
kubeforge_resource_degraded{kind="Balancer",name="shop",namespace="a"} 0
kubeforge_resource_degraded{kind="KubernetesCluster",name="prod",namespace="c"} 0
kubeforge_resource_degraded{kind="Platform",name="acme",namespace="b"} 1
kubeforge_resource_degraded{kind="PodSet",name="web",namespace="a"} 0
kubeforge_resource_degraded{kind="Workspace",name="alice",namespace="b"} 0
# HELP kubeforge_resource_ready 1 when the object's Ready condition is True, else 0.
# TYPE kubeforge_resource_ready gauge
kubeforge_resource_ready{kind="Balancer",name="shop",namespace="a"} 1
kubeforge_resource_ready{kind="KubernetesCluster",name="prod",namespace="c"} 0
kubeforge_resource_ready{kind="Platform",name="acme",namespace="b"} 0
kubeforge_resource_ready{kind="PodSet",name="web",namespace="a"} 0
kubeforge_resource_ready{kind="Workspace",name="alice",namespace="b"} 1
`
	if err := testutil.CollectAndCompare(NewStateCollector(c), strings.NewReader(want)); err != nil {
		t.Fatal(err)
	}
	if problems, err := testutil.CollectAndLint(NewStateCollector(c)); err != nil || len(problems) > 0 {
		t.Fatalf("lint: %v %v", problems, err)
	}
}

func TestObserveClusterOperations(t *testing.T) {
	t0 := metav1.NewTime(time.Now().Add(-90 * time.Second))
	t1 := metav1.NewTime(t0.Add(90 * time.Second))
	running := []clusterv1alpha1.Operation{{ID: "1", Type: clusterv1alpha1.OpCreate, Result: clusterv1alpha1.ResultRunning, StartTime: &t0}}
	done := []clusterv1alpha1.Operation{{ID: "1", Type: clusterv1alpha1.OpCreate, Result: clusterv1alpha1.ResultSucceeded, StartTime: &t0, CompletionTime: &t1}}
	before := testutil.ToFloat64(ClusterOperations.WithLabelValues("create", "Succeeded"))
	ObserveClusterOperations(running, done)
	ObserveClusterOperations(done, done) // written again: not counted again
	if got := testutil.ToFloat64(ClusterOperations.WithLabelValues("create", "Succeeded")) - before; got != 1 {
		t.Fatalf("counted %v operations, want 1", got)
	}
	if n := testutil.CollectAndCount(ClusterOperationDuration, "kubeforge_cluster_operation_duration_seconds"); n != 1 {
		t.Fatalf("%d duration series", n)
	}
}

func histogram(t *testing.T, h prometheus.Histogram) (count uint64, sum float64) {
	m := &dto.Metric{}
	if err := h.Write(m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()
}

func TestObserveWorkspaceStartup(t *testing.T) {
	count0, sum0 := histogram(t, WorkspaceStartup)
	s := int64(12)
	ObserveWorkspaceStartup(&idev1alpha1.WorkspaceStatus{Phase: idev1alpha1.PhaseStarting}, &idev1alpha1.WorkspaceStatus{Phase: idev1alpha1.PhaseRunning, LastStartupSeconds: &s})
	// Still Running, written again: not a new start.
	ObserveWorkspaceStartup(&idev1alpha1.WorkspaceStatus{Phase: idev1alpha1.PhaseRunning, LastStartupSeconds: &s}, &idev1alpha1.WorkspaceStatus{Phase: idev1alpha1.PhaseRunning, LastStartupSeconds: &s})
	count, sum := histogram(t, WorkspaceStartup)
	if count-count0 != 1 || sum-sum0 != 12 {
		t.Fatalf("observed %d starts summing %v s, want 1 of 12 s", count-count0, sum-sum0)
	}
}

func TestObservePlatformRollout(t *testing.T) {
	start := time.Now().Add(-42 * time.Second)
	rolling := []metav1.Condition{
		{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Upgrading"},
		{Type: "Progressing", Status: metav1.ConditionTrue, Reason: "Upgrading", LastTransitionTime: metav1.NewTime(start)},
	}
	ready := []metav1.Condition{
		{Type: "Ready", Status: metav1.ConditionTrue, Reason: "AllComponentsReady"},
		{Type: "Progressing", Status: metav1.ConditionFalse, Reason: "AllComponentsReady"},
	}
	ObservePlatformRollout(rolling, ready, start.Add(42*time.Second))
	ObservePlatformRollout(ready, ready, time.Now()) // no rollout ended
	ObservePlatformRollout(rolling, rolling, time.Now())
	if err := testutil.CollectAndCompare(PlatformRollout, strings.NewReader(`
# HELP kubeforge_platform_rollout_duration_seconds How long a Platform took from starting a rollout to every enabled component Ready, by type (Deploying: first deployment or a spec change; Upgrading: a version bump).
# TYPE kubeforge_platform_rollout_duration_seconds histogram
kubeforge_platform_rollout_duration_seconds_bucket{type="Upgrading",le="5"} 0
kubeforge_platform_rollout_duration_seconds_bucket{type="Upgrading",le="10"} 0
kubeforge_platform_rollout_duration_seconds_bucket{type="Upgrading",le="30"} 0
kubeforge_platform_rollout_duration_seconds_bucket{type="Upgrading",le="60"} 1
kubeforge_platform_rollout_duration_seconds_bucket{type="Upgrading",le="120"} 1
kubeforge_platform_rollout_duration_seconds_bucket{type="Upgrading",le="300"} 1
kubeforge_platform_rollout_duration_seconds_bucket{type="Upgrading",le="600"} 1
kubeforge_platform_rollout_duration_seconds_bucket{type="Upgrading",le="1200"} 1
kubeforge_platform_rollout_duration_seconds_bucket{type="Upgrading",le="1800"} 1
kubeforge_platform_rollout_duration_seconds_bucket{type="Upgrading",le="3600"} 1
kubeforge_platform_rollout_duration_seconds_bucket{type="Upgrading",le="+Inf"} 1
kubeforge_platform_rollout_duration_seconds_sum{type="Upgrading"} 42
kubeforge_platform_rollout_duration_seconds_count{type="Upgrading"} 1
`)); err != nil {
		t.Fatal(err)
	}
}

func TestNamesFollowTheConvention(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	if err := Register(reg, fake.NewClientBuilder().WithScheme(scheme.New()).Build()); err != nil {
		t.Fatal(err)
	}
	ClusterOperations.WithLabelValues("create", "Succeeded").Inc()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		n := f.GetName()
		if !strings.HasPrefix(n, "kubeforge_") || !(strings.HasSuffix(n, "_total") || strings.HasSuffix(n, "_seconds") ||
			strings.HasPrefix(n, "kubeforge_resource_") || strings.HasSuffix(n, "_ready") || strings.HasSuffix(n, "_endpoints") ||
			strings.HasSuffix(n, "_weight") || strings.HasSuffix(n, "_replicas")) {
			t.Errorf("metric %s does not follow kubeforge_<subsystem>_<name>_<unit|total>", n)
		}
	}
}
