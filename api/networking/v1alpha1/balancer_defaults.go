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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// DefaultBalancer fills in the defaults of a Balancer: proxy replicas and
// image, the front-end Service type, each backend's weight, each port's
// protocol and target port, passive health and session affinity.
func DefaultBalancer(b *Balancer) {
	s := &b.Spec
	if s.Replicas == nil {
		r := BalancerDefaultReplicas
		s.Replicas = &r
	}
	if s.Image == "" {
		s.Image = BalancerDefaultImage
	}
	if s.ServiceType == "" {
		s.ServiceType = corev1.ServiceTypeClusterIP
	}
	for i := range s.Backends {
		if s.Backends[i].Weight == nil {
			w := BalancerDefaultWeight
			s.Backends[i].Weight = &w
		}
	}
	for i := range s.Ports {
		if s.Ports[i].Protocol == "" {
			s.Ports[i].Protocol = corev1.ProtocolTCP
		}
		if s.Ports[i].TargetPort == nil {
			tp := intstr.FromInt32(s.Ports[i].Port)
			s.Ports[i].TargetPort = &tp
		}
	}
	if s.PassiveHealth == nil {
		s.PassiveHealth = &BalancerPassiveHealth{}
	}
	if s.PassiveHealth.MaxFails == nil {
		m := BalancerDefaultMaxFails
		s.PassiveHealth.MaxFails = &m
	}
	if s.PassiveHealth.FailTimeout == nil {
		d := metav1.Duration{Duration: BalancerDefaultFailTimeout.Duration}
		s.PassiveHealth.FailTimeout = &d
	}
	if s.SessionAffinity == "" {
		s.SessionAffinity = SessionAffinityNone
	}
}

// BackendServiceName is the name of a backend's Service: <balancer>-<backend>.
func BackendServiceName(b *Balancer, be BalancerBackend) string { return b.Name + "-" + be.Name }
