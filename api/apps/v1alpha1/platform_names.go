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

// The names of the objects the operator makes for a Platform, shared by
// the controller that makes them and admission, which checks that someone
// who changes a Platform they do not own may use what its pods use.

// PlatformObjectName is the name of a component's workload and Service.
func PlatformObjectName(p *Platform, c *PlatformComponent) string { return p.Name + "-" + c.Name }

// PlatformClaimName is the name of a Deployment component's volume claim.
func PlatformClaimName(p *Platform, c *PlatformComponent) string {
	return PlatformObjectName(p, c) + "-data"
}

// PlatformGeneratedSecretName is the name of one of spec.secrets' Secrets.
func PlatformGeneratedSecretName(p *Platform, name string) string { return p.Name + "-" + name }

// PlatformDatabaseSecretName is the name of a component's database Secret.
func PlatformDatabaseSecretName(p *Platform, c *PlatformComponent) string {
	return PlatformObjectName(p, c) + "-db"
}
