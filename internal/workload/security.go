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

package workload

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// Every Pod the operator builds for a kind goes through Restrict (or, for
// a Platform component that opted out, deliberately does not), so that
// one function says what "restricted" means for all of them, and a new
// kind's Pods get the same by calling it.

// NonRootUser is the user (and group) the operator's own programs run as
// when their image's user is root: the proxy's nginx, whose image is any
// nginx. 65532 is the distroless "nonroot" user; nothing needs it in
// /etc/passwd.
const NonRootUser int64 = 65532

// Security is how a Pod is restricted beyond what every restricted Pod
// gets (non-root, no capabilities, no privilege escalation, the runtime's
// default seccomp profile).
type Security struct {
	// User, when set, is the UID and GID the containers run as; unset,
	// the image's user runs, which the kubelet refuses to start if it is
	// root (or not numeric).
	User *int64
	// FSGroup, when set, owns the Pod's volumes, so a non-root user can
	// write a fresh volume; changed only when the volume's root differs.
	FSGroup *int64
	// ReadOnlyRoot makes the containers' root file systems read-only: for
	// programs known to write only to their volumes.
	ReadOnlyRoot bool
	// KeepToken mounts the ServiceAccount token: only for Pods whose
	// program calls the API server.
	KeepToken bool
}

// Restrict makes spec pass Pod Security's restricted level (the checks
// of k8s.io/pod-security-admission, which the tests run on every
// builder): runAsNonRoot, every capability dropped, no privilege
// escalation, the RuntimeDefault seccomp profile, and no ServiceAccount
// token unless s keeps it. The volume types restricted allows are the
// builders' own choice (ConfigMaps, Secrets, claims, emptyDirs).
func Restrict(spec *corev1.PodSpec, s Security) {
	pod := spec.SecurityContext
	if pod == nil {
		pod = &corev1.PodSecurityContext{}
		spec.SecurityContext = pod
	}
	pod.RunAsNonRoot = ptr.To(true)
	pod.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
	if s.User != nil {
		pod.RunAsUser, pod.RunAsGroup = ptr.To(*s.User), ptr.To(*s.User)
	}
	if s.FSGroup != nil {
		pod.FSGroup = ptr.To(*s.FSGroup)
		pod.FSGroupChangePolicy = ptr.To(corev1.FSGroupChangeOnRootMismatch)
	}
	if !s.KeepToken {
		spec.AutomountServiceAccountToken = ptr.To(false)
	}
	for _, list := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range list {
			c := &list[i]
			if c.SecurityContext == nil {
				c.SecurityContext = &corev1.SecurityContext{}
			}
			c.SecurityContext.AllowPrivilegeEscalation = ptr.To(false)
			c.SecurityContext.Capabilities = &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}
			if s.ReadOnlyRoot {
				c.SecurityContext.ReadOnlyRootFilesystem = ptr.To(true)
			}
		}
	}
}
