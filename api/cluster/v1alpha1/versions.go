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

// ParseVersion parses a Kubernetes version, vMAJOR.MINOR.PATCH.
func ParseVersion(v string) ([3]int, bool) {
	var out [3]int
	n, err := fmt.Sscanf(v, "v%d.%d.%d", &out[0], &out[1], &out[2])
	if err != nil || n != 3 || fmt.Sprintf("v%d.%d.%d", out[0], out[1], out[2]) != v {
		return out, false
	}
	return out, out[0] >= 0 && out[1] >= 0 && out[2] >= 0
}

// CompareVersions compares two versions: -1, 0 or 1. A version that does
// not parse sorts first.
func CompareVersions(a, b string) int {
	pa, oka := ParseVersion(a)
	pb, okb := ParseVersion(b)
	switch {
	case !oka && !okb:
		return 0
	case !oka:
		return -1
	case !okb:
		return 1
	}
	for i := range pa {
		if pa[i] != pb[i] {
			if pa[i] < pb[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// InstallerRelease is the range of Kubernetes versions one installer
// image can install. It is the operator's knowledge, not part of the API.
// +kubebuilder:object:generate=false
type InstallerRelease struct {
	// Images are the image references of the release (its registries).
	Images []string
	// Min and Max are the lowest and highest Kubernetes versions it can
	// install, both included.
	Min, Max string
	// Source says where the range comes from.
	Source string
}

// InstallerReleases are the installer images whose range the operator
// knows: the default one. A kubespray release installs the Kubernetes
// versions whose binaries it has checksums for (kubelet_checksums in
// roles/kubespray-defaults/defaults/main/checksums.yml at the release's
// tag); docs/kubernetescluster.md has the table. An image not listed here
// is the user's choice, and its range is not checked.
var InstallerReleases = []InstallerRelease{{
	Images: []string{DefaultInstallerImage, "docker.io/kubespray/kubespray:v2.27.0"},
	Min:    "v1.29.0",
	Max:    "v1.31.4",
	Source: "kubespray v2.27.0: kube_version v1.31.4 by default, kubelet checksums for v1.29.0 to v1.31.4",
}}

// InstallerReleaseOf is the known release of an installer image.
func InstallerReleaseOf(image string) (InstallerRelease, bool) {
	for _, r := range InstallerReleases {
		for _, i := range r.Images {
			if i == image {
				return r, true
			}
		}
	}
	return InstallerRelease{}, false
}
