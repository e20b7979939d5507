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

package v1alpha1

import (
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kubeforge/kubeforge/internal/admit"
	"github.com/kubeforge/kubeforge/internal/validation"
)

// +kubebuilder:webhook:path=/mutate-apps-kubeforge-io-v1alpha1-platform,mutating=true,failurePolicy=fail,sideEffects=None,groups=apps.kubeforge.io,resources=platforms,verbs=create;update,versions=v1alpha1,name=mplatform-v1alpha1.kubeforge.io,admissionReviewVersions=v1,timeoutSeconds=5,reinvocationPolicy=IfNeeded
// +kubebuilder:webhook:path=/validate-apps-kubeforge-io-v1alpha1-platform,mutating=false,failurePolicy=fail,sideEffects=None,groups=apps.kubeforge.io,resources=platforms,verbs=create;update,versions=v1alpha1,name=vplatform-v1alpha1.kubeforge.io,admissionReviewVersions=v1,timeoutSeconds=5

// SetupPlatformWebhookWithManager serves the Platform webhooks.
func SetupPlatformWebhookWithManager(mgr ctrl.Manager, opts admit.Options) error {
	k := admit.PlatformWith(opts.Policy)
	k.Transition = validation.PlatformTransition
	return admit.Register(mgr, k, opts)
}
