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
	"testing"

	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
)

func TestImagePolicy(t *testing.T) {
	p := ImagePolicy{"quay.io/kubespray/kubespray", "kubespray/kubespray", "registry.example.com:5000/installers/*"}
	for image, want := range map[string]bool{
		clusterv1alpha1.DefaultInstallerImage:                   true,
		"quay.io/kubespray/kubespray@sha256:0123456789abcdef":   true,
		"quay.io/kubespray/kubespray:v2.27.0@sha256:0123":       true,
		"kubespray/kubespray:v2.26.0":                           true,
		"docker.io/kubespray/kubespray:v2.26.0":                 true,
		"index.docker.io/kubespray/kubespray":                   true,
		"registry.example.com:5000/installers/kubespray:v1":     true,
		"registry.example.com:5000/installers/team/ansible:1":   true,
		"quay.io/kubespray/kubespray-evil:v2.27.0":              false,
		"quay.io/kubespray/kubespray/../evil:1":                 false,
		"quay.io/attacker/kubespray:v2.27.0":                    false,
		"evil.example.com/quay.io/kubespray/kubespray:v2.27.0":  false,
		"registry.example.com:5000/installers":                  false,
		"registry.example.com:5000/installers-evil/kubespray:1": false,
		"registry.example.com/installers/kubespray:v1":          false,
		"busybox": false,
	} {
		if got := p.Allows(image); got != want {
			t.Errorf("%s: allowed %v, want %v", image, got, want)
		}
	}
	if !(ImagePolicy{}).Allows("anything:1") || !(ImagePolicy{"*"}).Allows("anything:1") {
		t.Error("an empty policy allows every image")
	}
	if !DefaultInstallerImages.Allows(clusterv1alpha1.DefaultInstallerImage) {
		t.Error("the default installer image is not in the default policy")
	}
	kc := &clusterv1alpha1.KubernetesCluster{Spec: clusterv1alpha1.KubernetesClusterSpec{Installer: clusterv1alpha1.Installer{Image: "quay.io/attacker/kubespray:1"}}}
	errs := InstallerImages(DefaultInstallerImages)(kc)
	if len(errs) != 1 || errs[0].Field != "spec.installer.image" {
		t.Fatalf("errors: %v", errs)
	}
}
