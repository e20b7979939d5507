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

package kubernetescluster

import (
	"slices"

	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
)

// Next is the operation that brings the cluster closer to its spec.
type Next struct {
	Type clusterv1alpha1.OperationType
	// Hosts are the worker addresses it works on (scale-up, scale-down).
	Hosts []string
	// Version it installs (create, upgrade).
	Version string
}

// NeedsReset reports whether deleting the cluster must first run a reset:
// resetOnDelete (the default) and something may have been installed.
func NeedsReset(kc *clusterv1alpha1.KubernetesCluster) bool {
	if kc.Spec.ResetOnDelete != nil && !*kc.Spec.ResetOnDelete {
		return false
	}
	if last := lastOperation(kc); last != nil && last.Type == clusterv1alpha1.OpReset && last.Result == clusterv1alpha1.ResultSucceeded {
		return false // done
	}
	if kc.Status.Version != "" {
		return true
	}
	for _, op := range kc.Status.Operations {
		if op.Type == clusterv1alpha1.OpCreate {
			return true
		}
	}
	return false
}

// NextOperation derives the next operation from the spec and the status
// alone — never from an annotation a client sets — so it is the same
// after a crash: nil when there is nothing to do.
//
//	deleting                       → reset (if NeedsReset)
//	not created                    → precheck, then create (a failed create is retried as create)
//	workers removed from the spec  → scale-down of those
//	workers added to the spec      → scale-up of those
//	version above the installed    → upgrade
func NextOperation(kc *clusterv1alpha1.KubernetesCluster) *Next {
	if kc.DeletionTimestamp != nil {
		if NeedsReset(kc) {
			return &Next{Type: clusterv1alpha1.OpReset}
		}
		return nil
	}
	if kc.Status.Version == "" {
		if last := lastOperation(kc); last != nil &&
			(last.Type == clusterv1alpha1.OpPrecheck && last.Result == clusterv1alpha1.ResultSucceeded ||
				last.Type == clusterv1alpha1.OpCreate) {
			return &Next{Type: clusterv1alpha1.OpCreate, Version: kc.Spec.Version, Hosts: addresses(kc.Spec.Nodes)}
		}
		return &Next{Type: clusterv1alpha1.OpPrecheck}
	}
	wanted := addresses(kc.Spec.Nodes)
	var removed, added []string
	for _, a := range kc.Status.InstalledNodes {
		if !slices.Contains(wanted, a) {
			removed = append(removed, a)
		}
	}
	for _, a := range wanted {
		if !slices.Contains(kc.Status.InstalledNodes, a) {
			added = append(added, a)
		}
	}
	switch {
	case len(removed) > 0:
		return &Next{Type: clusterv1alpha1.OpScaleDown, Hosts: removed}
	case len(added) > 0:
		return &Next{Type: clusterv1alpha1.OpScaleUp, Hosts: added}
	case clusterv1alpha1.CompareVersions(kc.Spec.Version, kc.Status.Version) > 0:
		return &Next{Type: clusterv1alpha1.OpUpgrade, Version: kc.Spec.Version}
	}
	return nil
}

func lastOperation(kc *clusterv1alpha1.KubernetesCluster) *clusterv1alpha1.Operation {
	if n := len(kc.Status.Operations); n > 0 {
		return &kc.Status.Operations[n-1]
	}
	return nil
}

func addresses(hosts []clusterv1alpha1.Host) []string {
	out := make([]string, 0, len(hosts))
	for _, h := range hosts {
		out = append(out, h.Address)
	}
	return out
}
