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

package admit

import (
	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
	networkingv1alpha1 "github.com/kubeforge/kubeforge/api/networking/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/validation"
)

// The admission rules of every kubeforge kind: the defaults live with the
// API, the rules in internal/validation; this table joins them once for
// the webhooks (Register) and the reconcilers (Prepare).
var (
	PodSet = Kind[*appsv1alpha1.PodSet]{
		GVK:     appsv1alpha1.GroupVersion.WithKind("PodSet"),
		Default: appsv1alpha1.DefaultPodSet, ValidateCreate: validation.PodSet, ValidateUpdate: validation.PodSetUpdate,
	}
	Platform = Kind[*appsv1alpha1.Platform]{
		GVK:     appsv1alpha1.GroupVersion.WithKind("Platform"),
		Default: appsv1alpha1.DefaultPlatform, ValidateCreate: validation.Platform, ValidateUpdate: validation.PlatformUpdate,
	}
	Balancer = Kind[*networkingv1alpha1.Balancer]{
		GVK:     networkingv1alpha1.GroupVersion.WithKind("Balancer"),
		Default: networkingv1alpha1.DefaultBalancer, ValidateCreate: validation.Balancer, ValidateUpdate: validation.BalancerUpdate,
	}
	Workspace = Kind[*idev1alpha1.Workspace]{
		GVK:     idev1alpha1.GroupVersion.WithKind("Workspace"),
		Default: idev1alpha1.DefaultWorkspace, ValidateCreate: validation.Workspace, ValidateUpdate: validation.WorkspaceUpdate,
	}
	KubernetesCluster = Kind[*clusterv1alpha1.KubernetesCluster]{
		GVK:     clusterv1alpha1.GroupVersion.WithKind("KubernetesCluster"),
		Default: clusterv1alpha1.DefaultKubernetesCluster, ValidateCreate: validation.KubernetesCluster, ValidateUpdate: validation.KubernetesClusterUpdate,
	}
)
