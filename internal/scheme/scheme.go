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

// Package scheme builds the runtime scheme of the manager and the tests:
// the built-in Kubernetes types, every kubeforge API group, and the
// third-party types kubeforge creates (cert-manager's Certificate).
package scheme

import (
	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
	networkingv1alpha1 "github.com/kubeforge/kubeforge/api/networking/v1alpha1"
)

// New returns a scheme with the built-in types and every kubeforge kind.
func New() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(appsv1alpha1.AddToScheme(s))
	utilruntime.Must(networkingv1alpha1.AddToScheme(s))
	utilruntime.Must(idev1alpha1.AddToScheme(s))
	utilruntime.Must(clusterv1alpha1.AddToScheme(s))
	// cert-manager's Certificate, which a Workspace with TLS owns.
	utilruntime.Must(cmv1.AddToScheme(s))
	return s
}
