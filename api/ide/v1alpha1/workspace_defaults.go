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
	"k8s.io/apimachinery/pkg/util/validation"
)

// DefaultWorkspace fills in the defaults of a Workspace and records
// spec.user as the label ide.kubeforge.io/user.
func DefaultWorkspace(ws *Workspace) {
	s := &ws.Spec
	if s.Image == "" {
		s.Image = WorkspaceDefaultImage
	}
	if s.ImagePullPolicy == "" {
		s.ImagePullPolicy = corev1.PullIfNotPresent
	}
	if s.Port == 0 {
		s.Port = WorkspaceDefaultPort
	}
	if s.Started == nil {
		started := true
		s.Started = &started
	}
	if s.Storage.Size == nil {
		size := WorkspaceDefaultStorageSize.DeepCopy()
		s.Storage.Size = &size
	}
	if s.Storage.MountPath == "" {
		s.Storage.MountPath = WorkspaceDefaultMountPath
	}
	if s.Auth.Mode == "" {
		s.Auth.Mode = AuthPassword
	}
	if s.HealthPath == "" {
		s.HealthPath = WorkspaceDefaultHealthPath
	}
	if s.Storage.ReclaimPolicy == "" {
		s.Storage.ReclaimPolicy = ReclaimDelete
	}
	if in := s.Ingress; in != nil && in.TLS != nil && in.TLS.IssuerRef.Kind == "" {
		in.TLS.IssuerRef.Kind = "Issuer"
	}
	// An invalid user is left for the validator to name as spec.user,
	// rather than written into a label the API server would refuse.
	if s.User != "" && len(validation.IsValidLabelValue(s.User)) == 0 {
		if ws.Labels == nil {
			ws.Labels = map[string]string{}
		}
		ws.Labels[UserLabel] = s.User
	}
}
