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

// Package metrics holds kubeforge's own Prometheus metrics, registered on
// controller-runtime's registry next to its reconcile, workqueue, webhook
// and REST client metrics:
//
//   - per object, collected at scrape time from the manager's cache
//     (kube-state-metrics style: nothing is kept between scrapes, nothing
//     is recorded per reconcile);
//   - events — an installer operation finished, a workspace started, a
//     platform rollout ended — observed by the controllers when a status
//     write records the transition, so a transition is counted once, by
//     the leader that wrote it.
//
// docs/metrics.md lists every metric and the alerts built on them.
package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
)

// The event metrics.
var (
	// ClusterOperations counts finished installer operations.
	ClusterOperations = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kubeforge_cluster_operations_total",
		Help: "Installer operations of KubernetesClusters that finished, by type (precheck, create, scale-up, scale-down, upgrade, reset) and result (Succeeded, Failed).",
	}, []string{"type", "result"})

	// ClusterOperationDuration is how long finished operations ran.
	ClusterOperationDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "kubeforge_cluster_operation_duration_seconds",
		Help:    "How long finished installer operations ran, from the Job's start to its completion, by type.",
		Buckets: []float64{10, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200},
	}, []string{"type"})

	// WorkspaceStartup is how long workspaces took to start.
	WorkspaceStartup = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "kubeforge_workspace_startup_seconds",
		Help:    "How long a Workspace took from its Pod's creation to Running (the IDE answering its readiness probe).",
		Buckets: []float64{1, 2, 5, 10, 20, 30, 60, 90, 120, 300, 600},
	})

	// PlatformRollout is how long platform rollouts took.
	PlatformRollout = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "kubeforge_platform_rollout_duration_seconds",
		Help:    "How long a Platform took from starting a rollout to every enabled component Ready, by type (Deploying: first deployment or a spec change; Upgrading: a version bump).",
		Buckets: []float64{5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600},
	}, []string{"type"})
)

// Register registers every kubeforge metric on reg; the per-object ones
// read reader (the manager's cache) at every scrape.
func Register(reg prometheus.Registerer, reader client.Reader) error {
	for _, c := range []prometheus.Collector{ClusterOperations, ClusterOperationDuration, WorkspaceStartup, PlatformRollout, NewStateCollector(reader)} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// ObserveClusterOperations counts the operations that after records as
// finished and before did not.
func ObserveClusterOperations(before, after []clusterv1alpha1.Operation) {
	was := map[string]clusterv1alpha1.OperationResult{}
	for _, op := range before {
		was[op.ID] = op.Result
	}
	for _, op := range after {
		if op.Result != clusterv1alpha1.ResultSucceeded && op.Result != clusterv1alpha1.ResultFailed || was[op.ID] == op.Result {
			continue
		}
		ClusterOperations.WithLabelValues(string(op.Type), string(op.Result)).Inc()
		if op.StartTime != nil && op.CompletionTime != nil {
			ClusterOperationDuration.WithLabelValues(string(op.Type)).Observe(op.CompletionTime.Sub(op.StartTime.Time).Seconds())
		}
	}
}

// ObserveWorkspaceStartup records a workspace that turned Running.
func ObserveWorkspaceStartup(before, after *idev1alpha1.WorkspaceStatus) {
	if before.Phase == idev1alpha1.PhaseRunning || after.Phase != idev1alpha1.PhaseRunning || after.LastStartupSeconds == nil {
		return
	}
	WorkspaceStartup.Observe(float64(*after.LastStartupSeconds))
}

// ObservePlatformRollout records a rollout that ended: the Progressing
// condition was True (since its lastTransitionTime) and Ready is now True.
func ObservePlatformRollout(before, after []metav1.Condition, now time.Time) {
	progressing := meta.FindStatusCondition(before, "Progressing")
	wasReady := meta.IsStatusConditionTrue(before, "Ready")
	if progressing == nil || progressing.Status != metav1.ConditionTrue || wasReady || !meta.IsStatusConditionTrue(after, "Ready") {
		return
	}
	PlatformRollout.WithLabelValues(progressing.Reason).Observe(now.Sub(progressing.LastTransitionTime.Time).Seconds())
}
