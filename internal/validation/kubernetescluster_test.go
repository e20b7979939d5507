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
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
)

func cluster(mutate func(*clusterv1alpha1.KubernetesCluster)) *clusterv1alpha1.KubernetesCluster {
	kc := &clusterv1alpha1.KubernetesCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "prod", Namespace: "infra"},
		Spec: clusterv1alpha1.KubernetesClusterSpec{
			Version:      "v1.31.4",
			Masters:      []clusterv1alpha1.Host{{Address: "10.0.0.10", Name: "cp1"}},
			Nodes:        []clusterv1alpha1.Host{{Address: "10.0.0.21"}, {Address: "worker2.example.com"}},
			SSHSecretRef: clusterv1alpha1.SSHSecretReference{Name: "prod-ssh"},
		},
	}
	if mutate != nil {
		mutate(kc)
	}
	return kc
}

func TestDefaultKubernetesCluster(t *testing.T) {
	kc := cluster(nil)
	clusterv1alpha1.DefaultKubernetesCluster(kc)
	s := kc.Spec
	if len(s.Etcd) != 1 || s.Etcd[0].Address != "10.0.0.10" {
		t.Errorf("etcd defaults to the masters: %v", s.Etcd)
	}
	if s.Network.Plugin != "calico" || s.Network.PodCIDR == "" || s.SSHSecretRef.User != "root" || !*s.ResetOnDelete {
		t.Errorf("defaults: %+v", s)
	}
	if s.Installer.Image != clusterv1alpha1.DefaultInstallerImage || s.Installer.Timeout.Duration.Minutes() != 60 {
		t.Errorf("installer: %+v", s.Installer)
	}
}

func TestValidateKubernetesCluster(t *testing.T) {
	type K = clusterv1alpha1.KubernetesCluster
	cases := map[string]struct {
		mutate func(*K)
		want   []string
	}{
		"accept the sample":      {},
		"reject no master":       {mutate: func(k *K) { k.Spec.Masters = nil }, want: []string{"spec.masters"}},
		"reject a bad version":   {mutate: func(k *K) { k.Spec.Version = "1.31" }, want: []string{"spec.version"}},
		"reject a bad address":   {mutate: func(k *K) { k.Spec.Nodes[0].Address = "not an address!" }, want: []string{"spec.nodes[0].address"}},
		"reject a host twice":    {mutate: func(k *K) { k.Spec.Nodes[1].Address = "10.0.0.10" }, want: []string{"spec.nodes[1].address"}},
		"reject no SSH secret":   {mutate: func(k *K) { k.Spec.SSHSecretRef.Name = "" }, want: []string{"spec.sshSecretRef.name"}},
		"reject an even etcd":    {mutate: func(k *K) { k.Spec.Etcd = []clusterv1alpha1.Host{{Address: "10.0.1.1"}, {Address: "10.0.1.2"}} }, want: []string{"spec.etcd"}},
		"reject a bad pod CIDR":  {mutate: func(k *K) { k.Spec.Network.PodCIDR = "10.0.0.0" }, want: []string{"spec.network.podCIDR"}},
		"reject a long name":     {mutate: func(k *K) { k.Name = strings.Repeat("c", 41) }, want: []string{"metadata.name"}},
		"reject a short timeout": {mutate: func(k *K) { k.Spec.Installer.Timeout = &metav1.Duration{Duration: 1e9} }, want: []string{"spec.installer.timeout"}},
		"accept extra vars the operator does not set": {mutate: func(k *K) {
			k.Spec.Installer.ExtraVars = map[string]string{"container_manager": "containerd", "kube_proxy_mode": "ipvs"}
		}},
		"reject extra vars that would replace the operator's": {mutate: func(k *K) {
			k.Spec.Installer.ExtraVars = map[string]string{
				"kube_version": "v1.33.0", "kube_version_min_required": "v1.20.0", "etcd": "x",
				"ansible_ssh_common_args": "-o ProxyCommand=evil", "ansible_become_user": "root", "bad-name": "1",
			}
		}, want: []string{"spec.installer.extraVars[ansible_become_user]", "spec.installer.extraVars[ansible_ssh_common_args]",
			"spec.installer.extraVars[bad-name]", "spec.installer.extraVars[etcd]", "spec.installer.extraVars[kube_version]",
			"spec.installer.extraVars[kube_version_min_required]"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			kc := cluster(tc.mutate)
			var got []string
			for _, e := range KubernetesCluster(kc) {
				got = append(got, e.Field)
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Fatalf("fields = %q, want %q\n%v", got, tc.want, KubernetesCluster(kc))
			}
		})
	}
}

func TestValidateKubernetesClusterUpdate(t *testing.T) {
	old := cluster(nil)
	clusterv1alpha1.DefaultKubernetesCluster(old)
	type K = clusterv1alpha1.KubernetesCluster
	cases := map[string]struct {
		running string
		mutate  func(*K)
		want    []string
	}{
		"add a node":                  {mutate: func(k *K) { k.Spec.Nodes = append(k.Spec.Nodes, clusterv1alpha1.Host{Address: "10.0.0.23"}) }},
		"raise one minor version":     {mutate: func(k *K) { k.Spec.Version = "v1.32.0" }},
		"raise a patch version":       {mutate: func(k *K) { k.Spec.Version = "v1.31.9" }},
		"lower the version":           {mutate: func(k *K) { k.Spec.Version = "v1.31.3" }, want: []string{"spec.version"}},
		"skip a minor version":        {mutate: func(k *K) { k.Spec.Version = "v1.33.0" }, want: []string{"spec.version"}},
		"change the masters":          {mutate: func(k *K) { k.Spec.Masters[0].Address = "10.0.0.11" }, want: []string{"spec.masters"}},
		"change etcd":                 {mutate: func(k *K) { k.Spec.Etcd = []clusterv1alpha1.Host{{Address: "10.0.0.12"}} }, want: []string{"spec.etcd"}},
		"change the network":          {mutate: func(k *K) { k.Spec.Network.Plugin = "cilium" }, want: []string{"spec.network"}},
		"pause during an operation":   {running: "create-2", mutate: func(k *K) { k.Spec.Paused = true }},
		"scale during an operation":   {running: "create-2", mutate: func(k *K) { k.Spec.Nodes = k.Spec.Nodes[:1] }, want: []string{"spec"}},
		"upgrade during an operation": {running: "scale-up-3", mutate: func(k *K) { k.Spec.Version = "v1.32.0" }, want: []string{"spec"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := old.DeepCopy()
			o.Status.CurrentOperation = tc.running
			n := o.DeepCopy()
			tc.mutate(n)
			errs := KubernetesClusterUpdate(o, n)
			var got []string
			for _, e := range errs {
				got = append(got, e.Field)
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Fatalf("fields = %q, want %q\n%v", got, tc.want, errs)
			}
			if tc.running != "" && len(errs) > 0 && !strings.Contains(errs.ToAggregate().Error(), tc.running) {
				t.Fatalf("the message must name the running operation: %v", errs)
			}
		})
	}
}

func FuzzKubernetesCluster(f *testing.F) {
	f.Add([]byte(`{"metadata":{"name":"c"},"spec":{"version":"v1.31.4","masters":[{"address":"10.0.0.1"}],"sshSecretRef":{"name":"s"}}}`))
	f.Add([]byte(`{"spec":{"version":"v1.2","masters":[{"address":""},{"address":""}],"etcd":[{}],"network":{"podCIDR":"x"},"installer":{"timeout":"-1s","podLabels":{"":""}}}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		kc := &clusterv1alpha1.KubernetesCluster{}
		if err := json.Unmarshal(raw, kc); err != nil {
			return
		}
		clusterv1alpha1.DefaultKubernetesCluster(kc)
		a, b := KubernetesCluster(kc), KubernetesClusterUpdate(kc, kc)
		if len(a) != len(b) {
			t.Fatalf("an unchanged update must give the create errors: %v vs %v", a, b)
		}
	})
}

func TestInstallerVersion(t *testing.T) {
	type K = clusterv1alpha1.KubernetesCluster
	at := func(version, image string) *K {
		k := cluster(nil)
		k.Spec.Version, k.Spec.Installer.Image = version, image
		return k
	}
	const own = "registry.example.com/kubespray:v2.28.0"
	cases := map[string]struct {
		old, new *K
		want     bool // refused
	}{
		"create: the default image's default version":          {nil, at("v1.31.4", ""), false},
		"create: the default image's lowest version":           {nil, at("v1.29.0", clusterv1alpha1.DefaultInstallerImage), false},
		"create: below the default image's range":              {nil, at("v1.28.12", ""), true},
		"create: above the default image's range":              {nil, at("v1.32.0", ""), true},
		"create: above it, the default image named explicitly": {nil, at("v1.32.0", clusterv1alpha1.DefaultInstallerImage), true},
		"create: above it, with an image the user names":       {nil, at("v1.32.0", own), false},
		"update: upgrade past the range":                       {at("v1.31.4", ""), at("v1.32.0", ""), true},
		"update: upgrade with the user's image":                {at("v1.31.4", ""), at("v1.32.0", own), false},
		"update: a cluster stored past the range, otherwise edited": {at("v1.32.0", ""), func() *K {
			k := at("v1.32.0", "")
			k.Spec.Paused = true
			return k
		}(), false},
		"update: back to the default image past its range": {at("v1.32.0", own), at("v1.32.0", ""), true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			errs := InstallerVersion(tc.old, tc.new)
			if refused := len(errs) > 0; refused != tc.want {
				t.Fatalf("refused = %v, want %v: %v", refused, tc.want, errs)
			}
			if tc.want && (errs[0].Field != "spec.version" || !strings.Contains(errs[0].Detail, "installs Kubernetes v1.29.0 to v1.31.4")) {
				t.Errorf("error = %v: want spec.version naming the range", errs[0])
			}
		})
	}
}
