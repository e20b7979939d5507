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

import "fmt"

// WorkspaceURL is where a Workspace's IDE answers: the ingress host when
// there is one, otherwise its Service's cluster DNS name. The controller
// reports it in status and the API answers with it. ws is defaulted.
func WorkspaceURL(ws *Workspace) string {
	if in := ws.Spec.Ingress; in != nil {
		if in.TLS != nil {
			return "https://" + in.Host
		}
		return "http://" + in.Host
	}
	return fmt.Sprintf("http://%s.%s.svc:%d", ws.Name, ws.Namespace, ws.Spec.Port)
}

// WorkspaceCredentialsSecret is the Secret that holds the password of a
// Workspace's IDE (key password), or "" when it has no login (auth mode
// None). The controller reports it in status and the API answers with it.
// ws is defaulted.
func WorkspaceCredentialsSecret(ws *Workspace) string {
	if ws.Spec.Auth.Mode != AuthPassword {
		return ""
	}
	return WorkspaceAuthSecretName(ws)
}

// WorkspaceAuthSecretName is the name of the Secret for a Workspace's
// password: <name>-auth.
func WorkspaceAuthSecretName(ws *Workspace) string { return ws.Name + "-auth" }

// WorkspaceHomeClaimName is the name of a Workspace's home volume claim:
// <name>-home.
func WorkspaceHomeClaimName(ws *Workspace) string { return ws.Name + "-home" }
