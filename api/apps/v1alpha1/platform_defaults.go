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
	networkingv1 "k8s.io/api/networking/v1"
)

// DefaultPlatform fills in the per-component defaults that do not depend
// on other fields of the spec. The tag is not filled in: an empty tag
// follows spec.version, so that a version bump cascades.
func DefaultPlatform(p *Platform) {
	if p.Spec.ImagePullPolicy == "" {
		p.Spec.ImagePullPolicy = corev1.PullIfNotPresent
	}
	if d := p.Spec.Database; d != nil {
		// The engine cannot change, so its port can be written down.
		if d.Port == 0 {
			d.Port = DefaultDatabasePort(d.Engine)
		}
		if d.TLS.Mode == "" {
			// The certificate is checked unless the user says otherwise
			// (require). Platforms stored before this default have
			// require written in their spec and keep it.
			d.TLS.Mode = DatabaseTLSVerifyFull
		}
	}
	for i := range p.Spec.Components {
		c := &p.Spec.Components[i]
		if c.Workload == "" {
			c.Workload = WorkloadDeployment
		}
		if c.Image == "" && c.ImageName == "" {
			c.ImageName = c.Name
		}
		if c.Replicas == nil && HasReplicas(c.Workload) {
			r := int32(1)
			c.Replicas = &r
		}
		for j := range c.Ports {
			if c.Ports[j].Protocol == "" {
				c.Ports[j].Protocol = corev1.ProtocolTCP
			}
		}
		if len(c.Ports) > 0 && c.Service.Type == "" {
			c.Service.Type = corev1.ServiceTypeClusterIP
		}
		if c.HasDatabase() && p.Spec.Database != nil {
			// Names follow the platform's and component's names and the
			// engine, none of which can change: written down, they stay.
			c.Database.Name = DatabaseName(p, c)
			c.Database.User = DatabaseUser(p, c)
		}
		if s := c.Storage; s != nil {
			if s.MountPath == "" {
				s.MountPath = "/var/lib/" + c.Name
			}
			if s.ReclaimPolicy == "" {
				s.ReclaimPolicy = "Retain"
			}
		}
		if in := c.Ingress; in != nil {
			if in.Path == "" {
				in.Path = "/"
			}
			if in.PathType == nil {
				pt := networkingv1.PathTypePrefix
				in.PathType = &pt
			}
			if in.TLS != nil && in.TLS.IssuerRef.Kind == "" {
				in.TLS.IssuerRef.Kind = "Issuer"
			}
		}
		if h := c.Hooks; h != nil {
			for _, j := range []*HookJob{h.Bootstrap, h.PreUpgrade} {
				if j == nil {
					continue
				}
				if j.BackoffLimit == nil {
					b := DefaultHookBackoffLimit
					j.BackoffLimit = &b
				}
				if j.ActiveDeadlineSeconds == nil {
					d := DefaultHookDeadlineSeconds
					j.ActiveDeadlineSeconds = &d
				}
			}
		}
	}
	for i := range p.Spec.Secrets {
		s := &p.Spec.Secrets[i]
		if s.Length == 0 {
			s.Length = DefaultSecretLength
		}
		if s.ReclaimPolicy == "" {
			s.ReclaimPolicy = "Retain"
		}
	}
	if p.Spec.UpgradePolicy.OnFailure == "" {
		p.Spec.UpgradePolicy.OnFailure = UpgradePause
	}
	if p.Spec.UpgradePolicy.ProgressDeadlineSeconds == nil {
		d := DefaultProgressDeadlineSeconds
		p.Spec.UpgradePolicy.ProgressDeadlineSeconds = &d
	}
}

// The defaults of hooks and generated secrets.
const (
	DefaultHookBackoffLimit    int32 = 2
	DefaultHookDeadlineSeconds int64 = 600
	DefaultSecretLength        int32 = 32
)

// HasReplicas reports whether replicas means something for a workload.
func HasReplicas(w WorkloadType) bool {
	return w == "" || w == WorkloadDeployment || w == WorkloadStatefulSet
}

// DefaultNewPlatform is what admission alone writes (admit.Kind's
// DefaultNew): a component the request adds gets podSecurity Restricted;
// one that was stored with a podSecurity keeps it when the request drops
// the field (removing it would otherwise turn a Baseline component into
// an unset one without the right Baseline takes); one stored without it
// stays without (it predates the field: see PodSecurity). old is nil on
// a create.
func DefaultNewPlatform(old, p *Platform) {
	stored := map[string]PodSecurity{}
	if old != nil {
		for _, c := range old.Spec.Components {
			stored[c.Name] = c.PodSecurity
		}
	}
	for i := range p.Spec.Components {
		c := &p.Spec.Components[i]
		if c.PodSecurity != "" {
			continue
		}
		was, existed := stored[c.Name]
		switch {
		case !existed:
			c.PodSecurity = PodSecurityRestricted
		default:
			c.PodSecurity = was
		}
	}
}
