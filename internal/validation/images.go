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

package validation

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
)

// ImagePolicy is the operator administrator's list of the images a kind
// may run with privileges users do not have themselves — an installer
// mounts an SSH key that opens every host of a cluster. Each entry is an
// image repository ("quay.io/kubespray/kubespray": any tag or digest of
// it) or a prefix ending in "/*" ("registry.example.com/installers/*":
// every repository under it). Short Docker Hub names are normalised
// ("kubespray/kubespray" is "docker.io/kubespray/kubespray"). The entry
// "*" allows every image, as does an empty policy.
type ImagePolicy []string

// DefaultInstallerImages are the installer images allowed unless the
// administrator says otherwise (--installer-images): kubespray's own.
var DefaultInstallerImages = ImagePolicy{"quay.io/kubespray/kubespray", "docker.io/kubespray/kubespray"}

// Allows reports whether image is on the list.
func (p ImagePolicy) Allows(image string) bool {
	if len(p) == 0 {
		return true
	}
	repo := repository(image)
	for _, entry := range p {
		if entry == "*" {
			return true
		}
		if prefix, ok := strings.CutSuffix(entry, "/*"); ok {
			if strings.HasPrefix(repo, normalise(prefix)+"/") {
				return true
			}
		} else if repo == normalise(entry) {
			return true
		}
	}
	return false
}

// Check returns a field error at path when image is not on the list.
func (p ImagePolicy) Check(path *field.Path, image string) *field.Error {
	if p.Allows(image) {
		return nil
	}
	return field.Forbidden(path, fmt.Sprintf("%s is not an installer image this operator's administrator allows (%s); use one of those, or ask them to add it to --installer-images",
		image, strings.Join(p, ", ")))
}

// InstallerImages returns the rule that a KubernetesCluster's (defaulted)
// installer image is on the policy.
func InstallerImages(p ImagePolicy) func(*clusterv1alpha1.KubernetesCluster) field.ErrorList {
	return func(kc *clusterv1alpha1.KubernetesCluster) field.ErrorList {
		if err := p.Check(field.NewPath("spec", "installer", "image"), kc.Spec.Installer.Image); err != nil {
			return field.ErrorList{err}
		}
		return nil
	}
}

// repository is image without its tag and digest, normalised.
func repository(image string) string {
	name, _, _ := strings.Cut(image, "@")
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name = name[:i]
	}
	return normalise(name)
}

// normalise names Docker Hub repositories in full, as the container
// runtime resolves them: "busybox" is "docker.io/library/busybox".
func normalise(repo string) string {
	first, rest, found := strings.Cut(repo, "/")
	if !found {
		return "docker.io/library/" + repo
	}
	if !strings.ContainsAny(first, ".:") && first != "localhost" {
		return "docker.io/" + repo
	}
	if first == "index.docker.io" {
		return "docker.io/" + rest
	}
	return repo
}
