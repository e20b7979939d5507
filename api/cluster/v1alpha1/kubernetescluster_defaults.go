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
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Defaults of a KubernetesCluster's spec.
const (
	DefaultPodCIDR     = "10.233.64.0/18"
	DefaultServiceCIDR = "10.233.0.0/18"
	DefaultPlugin      = NetworkPlugin("calico")
	DefaultSSHUser     = "root"
	DefaultTimeout     = 60 * time.Minute
)

// DefaultKubernetesCluster fills in the defaults: etcd on the masters, the
// network, the SSH user, the installer image and timeout, resetOnDelete.
func DefaultKubernetesCluster(kc *KubernetesCluster) {
	s := &kc.Spec
	if len(s.Etcd) == 0 && len(s.Masters) > 0 {
		s.Etcd = append([]Host(nil), s.Masters...)
	}
	if s.Network.PodCIDR == "" {
		s.Network.PodCIDR = DefaultPodCIDR
	}
	if s.Network.ServiceCIDR == "" {
		s.Network.ServiceCIDR = DefaultServiceCIDR
	}
	if s.Network.Plugin == "" {
		s.Network.Plugin = DefaultPlugin
	}
	if s.SSHSecretRef.User == "" {
		s.SSHSecretRef.User = DefaultSSHUser
	}
	if s.Installer.Image == "" {
		s.Installer.Image = DefaultInstallerImage
	}
	if s.Installer.Timeout == nil {
		s.Installer.Timeout = &metav1.Duration{Duration: DefaultTimeout}
	}
	if s.ResetOnDelete == nil {
		reset := true
		s.ResetOnDelete = &reset
	}
}
