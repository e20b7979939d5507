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

package workload_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubeforge/kubeforge/internal/test/podsecurity"
	"github.com/kubeforge/kubeforge/internal/workload"
)

func podSpec() corev1.PodSpec {
	return corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "init", Image: "busybox"}},
		Containers: []corev1.Container{{Name: "app", Image: "nginx",
			SecurityContext: &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_ADMIN"}}}}},
	}
}

func TestRestrictMakesAPodPassTheRestrictedLevel(t *testing.T) {
	spec := podSpec()
	if v := podsecurity.Restricted(metav1.ObjectMeta{}, spec); len(v) == 0 {
		t.Fatal("the unrestricted spec passes the restricted level: the check checks nothing")
	}
	workload.Restrict(&spec, workload.Security{})
	if v := podsecurity.Restricted(metav1.ObjectMeta{}, spec); len(v) > 0 {
		t.Fatalf("restricted spec is refused by Pod Security restricted: %v", v)
	}
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		t.Error("the ServiceAccount token is still mounted")
	}
	if spec.SecurityContext.RunAsUser != nil || spec.SecurityContext.FSGroup != nil {
		t.Error("no user or group was asked for, but one is set")
	}
	if c := spec.Containers[0].SecurityContext; len(c.Capabilities.Add) > 0 || c.ReadOnlyRootFilesystem != nil {
		t.Errorf("container security context %+v: an added capability is kept, or the root was made read-only unasked", c)
	}
}

func TestRestrictSetsTheUserGroupReadOnlyRootAndKeepsTheTokenWhenAsked(t *testing.T) {
	spec := podSpec()
	workload.Restrict(&spec, workload.Security{User: ptr.To[int64](1000), FSGroup: ptr.To[int64](2000), ReadOnlyRoot: true, KeepToken: true})
	if v := podsecurity.Restricted(metav1.ObjectMeta{}, spec); len(v) > 0 {
		t.Fatalf("refused by Pod Security restricted: %v", v)
	}
	sc := spec.SecurityContext
	if *sc.RunAsUser != 1000 || *sc.RunAsGroup != 1000 || *sc.FSGroup != 2000 || *sc.FSGroupChangePolicy != corev1.FSGroupChangeOnRootMismatch {
		t.Errorf("pod security context %+v", sc)
	}
	if spec.AutomountServiceAccountToken != nil {
		t.Error("the token was asked to be kept, but automount is set")
	}
	for _, c := range append(spec.InitContainers, spec.Containers...) {
		if c.SecurityContext.ReadOnlyRootFilesystem == nil || !*c.SecurityContext.ReadOnlyRootFilesystem {
			t.Errorf("container %s: root file system not read-only", c.Name)
		}
	}
}
