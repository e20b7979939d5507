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

// Package v1alpha1 serves the admission webhooks of the cluster.kubeforge.io
// kinds. It is a thin adapter: the defaults live with the API
// (api/cluster/v1alpha1), the rules in internal/validation, and internal/admit
// joins them, serves them and runs them again inside the reconcilers.
package v1alpha1

import (
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kubeforge/kubeforge/internal/admit"
	"github.com/kubeforge/kubeforge/internal/validation"
)

// +kubebuilder:webhook:path=/mutate-cluster-kubeforge-io-v1alpha1-kubernetescluster,mutating=true,failurePolicy=fail,sideEffects=None,groups=cluster.kubeforge.io,resources=kubernetesclusters,verbs=create;update,versions=v1alpha1,name=mkubernetescluster-v1alpha1.kubeforge.io,admissionReviewVersions=v1,timeoutSeconds=5,reinvocationPolicy=IfNeeded
// +kubebuilder:webhook:path=/validate-cluster-kubeforge-io-v1alpha1-kubernetescluster,mutating=false,failurePolicy=fail,sideEffects=None,groups=cluster.kubeforge.io,resources=kubernetesclusters,verbs=create;update,versions=v1alpha1,name=vkubernetescluster-v1alpha1.kubeforge.io,admissionReviewVersions=v1,timeoutSeconds=5

// SetupKubernetesClusterWebhookWithManager serves the KubernetesCluster
// webhooks, refusing installer images that opts.InstallerImages does not
// allow (--installer-images; nil: the default policy).
func SetupKubernetesClusterWebhookWithManager(mgr ctrl.Manager, opts admit.Options) error {
	images := opts.InstallerImages
	if images == nil {
		images = validation.DefaultInstallerImages
	}
	k := admit.KubernetesCluster.With(validation.InstallerImages(images))
	k.Transition = validation.KubernetesClusterTransition
	return admit.Register(mgr, k, opts)
}
