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

package kubernetescluster

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/test/podsecurity"
	"github.com/kubeforge/kubeforge/internal/validation"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func cluster(mutate func(*clusterv1alpha1.KubernetesCluster)) *clusterv1alpha1.KubernetesCluster {
	kc := &clusterv1alpha1.KubernetesCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "prod", Namespace: "infra"},
		Spec: clusterv1alpha1.KubernetesClusterSpec{
			Version:      "v1.31.4",
			Masters:      []clusterv1alpha1.Host{{Address: "10.0.0.10", Name: "cp1"}},
			Nodes:        []clusterv1alpha1.Host{{Address: "10.0.0.21", Name: "worker1"}, {Address: "node2.example.com"}},
			SSHSecretRef: clusterv1alpha1.SSHSecretReference{Name: "prod-ssh"},
		},
	}
	if mutate != nil {
		mutate(kc)
	}
	clusterv1alpha1.DefaultKubernetesCluster(kc) // what admit.Prepare gives the builders
	return kc
}

var inventoryCases = []struct {
	name string
	kc   *clusterv1alpha1.KubernetesCluster
}{
	{"masters-and-nodes", cluster(nil)},
	{"masters-only", cluster(func(kc *clusterv1alpha1.KubernetesCluster) {
		kc.Spec.Nodes = nil
		kc.Spec.Masters = []clusterv1alpha1.Host{{Address: "10.0.0.10"}, {Address: "10.0.0.11"}, {Address: "10.0.0.12"}}
	})},
	{"separate-etcd-flannel-extra-vars", cluster(func(kc *clusterv1alpha1.KubernetesCluster) {
		kc.Spec.Etcd = []clusterv1alpha1.Host{{Address: "10.0.1.1", Name: "etcd1"}}
		kc.Spec.Network = clusterv1alpha1.ClusterNetwork{Plugin: "flannel", PodCIDR: "10.100.0.0/16", ServiceCIDR: "10.101.0.0/16"}
		kc.Spec.SSHSecretRef.User = "ubuntu"
		kc.Spec.Installer.ExtraVars = map[string]string{"container_manager": "containerd", "kube_proxy_mode": "ipvs"}
	})},
}

func TestInventoryMatchesGoldenFiles(t *testing.T) {
	for _, tc := range inventoryCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Inventory(tc.kc, tc.kc.Spec.Version, tc.kc.Spec.Nodes)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", tc.name+".yaml")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("reading golden file (run go test -update to write it): %v", err)
			}
			if got != string(want) {
				t.Errorf("inventory differs from %s:\n--- got\n%s\n--- want\n%s", path, got, want)
			}
		})
	}
}

func TestInventoryHasTheKubesprayGroups(t *testing.T) {
	got, err := Inventory(cluster(nil), "v1.31.4", cluster(nil).Spec.Nodes)
	if err != nil {
		t.Fatal(err)
	}
	var inv struct {
		All struct {
			Hosts    map[string]map[string]string `json:"hosts"`
			Vars     map[string]any               `json:"vars"`
			Children map[string]struct {
				Hosts    map[string]any `json:"hosts"`
				Children map[string]any `json:"children"`
			} `json:"children"`
		} `json:"all"`
	}
	if err := yaml.Unmarshal([]byte(got), &inv); err != nil {
		t.Fatal(err)
	}
	groups := inv.All.Children
	if _, ok := groups["kube_control_plane"].Hosts["cp1"]; !ok {
		t.Errorf("kube_control_plane = %v", groups["kube_control_plane"])
	}
	if _, ok := groups["etcd"].Hosts["cp1"]; !ok {
		t.Errorf("etcd defaults to the masters: %v", groups["etcd"])
	}
	if len(groups["kube_node"].Hosts) != 2 || groups["kube_node"].Hosts["node-node2-example-com"] == nil {
		t.Errorf("kube_node = %v", groups["kube_node"])
	}
	if len(groups["k8s_cluster"].Children) != 2 {
		t.Errorf("k8s_cluster = %v", groups["k8s_cluster"])
	}
	if inv.All.Hosts["worker1"]["ansible_host"] != "10.0.0.21" || inv.All.Vars["kube_version"] != "v1.31.4" || inv.All.Vars["kube_network_plugin"] != "calico" {
		t.Errorf("hosts %v vars %v", inv.All.Hosts, inv.All.Vars)
	}
	if strings.Contains(got, "BEGIN") || strings.Contains(got, "password") {
		t.Error("no secret goes into the inventory")
	}
}

func TestScriptRunsThePlaybookOfEachOperation(t *testing.T) {
	kc := cluster(nil)
	cases := map[clusterv1alpha1.OperationType]string{
		clusterv1alpha1.OpPrecheck:  "/kubeforge/precheck.yml",
		clusterv1alpha1.OpCreate:    "cluster.yml",
		clusterv1alpha1.OpScaleUp:   "scale.yml --limit='node-node2-example-com'",
		clusterv1alpha1.OpScaleDown: "remove-node.yml -e node='node-node2-example-com'",
		clusterv1alpha1.OpUpgrade:   "upgrade-cluster.yml -e kube_version='v1.32.0'",
		clusterv1alpha1.OpReset:     "reset.yml -e reset_confirmation=yes",
	}
	for typ, want := range cases {
		s := Script(kc, clusterv1alpha1.Operation{ID: string(typ) + "-1", Type: typ, Hosts: []string{"node2.example.com"}, Version: "v1.32.0"})
		if !strings.Contains(s, want) {
			t.Errorf("%s script lacks %q:\n%s", typ, want, s)
		}
		if !strings.Contains(s, "--private-key /kubeforge-ssh/id_rsa") {
			t.Errorf("%s script does not use the mounted key:\n%s", typ, s)
		}
	}
	if !strings.Contains(Script(kc, clusterv1alpha1.Operation{Type: clusterv1alpha1.OpCreate}), `store-secret.py "$KUBEFORGE_KUBECONFIG_SECRET" kubeconfig`) {
		t.Error("create must store the kubeconfig")
	}
}

func TestJobKeepsTheKeyInAFileAndTheTimeoutInTheJob(t *testing.T) {
	kc := cluster(func(kc *clusterv1alpha1.KubernetesCluster) {
		kc.Spec.Installer.Timeout = &metav1.Duration{Duration: 90 * 60 * 1e9}
		kc.Spec.Installer.PodLabels = map[string]string{"team": "infra"}
	})
	op := clusterv1alpha1.Operation{ID: "create-2", Type: clusterv1alpha1.OpCreate}
	op.JobName = clusterv1alpha1.JobName(kc, op.ID)
	job := Job(kc, op)
	if job.Name != "prod-create-2" || *job.Spec.BackoffLimit != 0 || *job.Spec.ActiveDeadlineSeconds != 5400 {
		t.Errorf("name %s backoffLimit %d deadline %d", job.Name, *job.Spec.BackoffLimit, *job.Spec.ActiveDeadlineSeconds)
	}
	pod := job.Spec.Template.Spec
	// The pause container is PID 1 whatever the image, so the script gets
	// the deadline's SIGTERM and the ssh processes ansible leaves are reaped.
	if pod.ShareProcessNamespace == nil || !*pod.ShareProcessNamespace {
		t.Error("the installer Pod shares its process namespace")
	}
	c := pod.Containers[0]
	for _, e := range c.Env {
		if e.ValueFrom != nil || strings.Contains(strings.ToLower(e.Name), "key") || strings.Contains(strings.ToLower(e.Name), "password") {
			t.Errorf("no secret in env: %+v", e)
		}
	}
	var ssh, callback *corev1.Volume
	for i := range pod.Volumes {
		switch pod.Volumes[i].Name {
		case "ssh":
			ssh = &pod.Volumes[i]
		case "callback":
			callback = &pod.Volumes[i]
		}
	}
	if callback == nil || callback.Secret.SecretName != "prod-create-2-callback" || *callback.Secret.DefaultMode != 0o400 {
		t.Fatalf("callback volume = %+v", callback)
	}
	if ssh == nil || ssh.Secret.SecretName != "prod-ssh" || *ssh.Secret.DefaultMode != 0o400 || ssh.Secret.Items[0].Key != corev1.SSHAuthPrivateKey {
		t.Fatalf("ssh volume = %+v", ssh)
	}
	for _, m := range c.VolumeMounts {
		if !m.ReadOnly && m.Name != "work" {
			t.Errorf("mount %s must be read-only", m.Name)
		}
	}
	if pod.ServiceAccountName != "prod-installer" || job.Spec.Template.Labels["team"] != "infra" || job.Spec.Template.Labels[clusterv1alpha1.OperationLabel] != "create-2" {
		t.Errorf("sa %s labels %v", pod.ServiceAccountName, job.Spec.Template.Labels)
	}
	if c.TerminationMessagePolicy != corev1.TerminationMessageFallbackToLogsOnError {
		t.Error("a failure must report the installer's output")
	}
}

// Every variable and group the operator writes is one extraVars may not
// set, and should one get past validation, the operator's value wins.
func TestInventoryVarsAreTheOperators(t *testing.T) {
	kc := cluster(func(kc *clusterv1alpha1.KubernetesCluster) {
		kc.Spec.Installer.ExtraVars = map[string]string{"kube_version": "v9.9.9", "container_manager": "containerd"}
	})
	got, err := Inventory(kc, kc.Spec.Version, kc.Spec.Nodes)
	if err != nil {
		t.Fatal(err)
	}
	var inv struct {
		All struct {
			Vars     map[string]any `json:"vars"`
			Children map[string]any `json:"children"`
		} `json:"all"`
	}
	if err := yaml.Unmarshal([]byte(got), &inv); err != nil {
		t.Fatal(err)
	}
	if inv.All.Vars["kube_version"] != kc.Spec.Version || inv.All.Vars["container_manager"] != "containerd" {
		t.Errorf("vars = %v: the spec's version must win, other extra vars pass", inv.All.Vars)
	}
	for name := range inv.All.Vars {
		if name == "container_manager" {
			continue
		}
		if !strings.HasPrefix(name, "ansible_") && !slices.Contains(validation.ReservedInstallerVars, name) {
			t.Errorf("the operator writes %s, but extraVars may set it", name)
		}
	}
	for name := range inv.All.Children {
		if !slices.Contains(validation.ReservedInstallerVars, name) {
			t.Errorf("the operator fills the group %s, but extraVars may set it", name)
		}
	}
}

func TestInstallerPodPassesPodSecurityRestrictedAsNobodyWithAWritableHome(t *testing.T) {
	kc := cluster(nil)
	op := clusterv1alpha1.Operation{ID: "create-1", Type: clusterv1alpha1.OpCreate}
	op.JobName = clusterv1alpha1.JobName(kc, op.ID)
	job := Job(kc, op)
	pod := job.Spec.Template.Spec
	if v := podsecurity.Restricted(job.Spec.Template.ObjectMeta, pod); len(v) > 0 {
		t.Fatalf("the installer Pod is refused by Pod Security restricted: %v", v)
	}
	if u := pod.SecurityContext.RunAsUser; u == nil || *u != 65534 {
		t.Errorf("installer user %v, want nobody (65534), whom ssh finds in /etc/passwd", u)
	}
	c := pod.Containers[0]
	if c.SecurityContext.ReadOnlyRootFilesystem == nil || !*c.SecurityContext.ReadOnlyRootFilesystem {
		t.Error("the installer's root file system is writable")
	}
	home, remote := "", ""
	for _, e := range c.Env {
		switch e.Name {
		case "HOME":
			home = e.Value
		case "ANSIBLE_REMOTE_TMP":
			remote = e.Value
		}
	}
	if !strings.HasPrefix(remote, home+"/") {
		t.Errorf("ANSIBLE_REMOTE_TMP %q is not under the writable HOME %q: a task delegated to localhost makes it under nobody's passwd home, /nonexistent", remote, home)
	}
	writable := false
	for _, m := range c.VolumeMounts {
		if m.MountPath == home && !m.ReadOnly {
			writable = true
		}
	}
	if home == "" || !writable || !strings.HasPrefix(artifactsDir, home) {
		t.Errorf("HOME %q is not the writable work volume (mounts %+v), or the artifacts (%s) are elsewhere", home, c.VolumeMounts, artifactsDir)
	}
	if pod.AutomountServiceAccountToken != nil {
		t.Error("the installer records Secrets with its token, which is not mounted")
	}
}
