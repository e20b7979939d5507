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
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
)

// These tests hand the rendered files to Debian's ansible (installed by
// hack/test-deps.sh): ansible must read the inventory with the groups
// kubespray expects, and the precheck playbook must run.

func ansibleTool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is not installed (Debian package ansible-core): run hack/test-deps.sh (make test does)", name)
	}
	return path
}

func writeInventory(t *testing.T, kc *clusterv1alpha1.KubernetesCluster) string {
	t.Helper()
	inv, err := Inventory(kc, kc.Spec.Version, kc.Spec.Nodes)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "hosts.yaml")
	if err := os.WriteFile(path, []byte(inv), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func ansibleEnv(t *testing.T) []string {
	return append(os.Environ(), "ANSIBLE_LOCAL_TEMP="+t.TempDir(), "ANSIBLE_HOME="+t.TempDir(), "ANSIBLE_NOCOLOR=1")
}

func TestAnsibleReadsTheInventoryWithKubespraysGroups(t *testing.T) {
	kc := cluster(func(kc *clusterv1alpha1.KubernetesCluster) {
		kc.Spec.Etcd = []clusterv1alpha1.Host{{Address: "10.0.0.10", Name: "cp1"}}
		kc.Spec.Installer.ExtraVars = map[string]string{"container_manager": "containerd"}
	})
	cmd := exec.Command(ansibleTool(t, "ansible-inventory"), "-i", writeInventory(t, kc), "--list")
	cmd.Env = ansibleEnv(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ansible-inventory: %v", err)
	}
	var inv map[string]json.RawMessage
	if err := json.Unmarshal(out, &inv); err != nil {
		t.Fatal(err)
	}
	group := func(name string) []string {
		var g struct {
			Hosts    []string `json:"hosts"`
			Children []string `json:"children"`
		}
		_ = json.Unmarshal(inv[name], &g)
		members := append(g.Hosts, g.Children...)
		sort.Strings(members)
		return members
	}
	for name, want := range map[string]string{
		"kube_control_plane": "cp1",
		"etcd":               "cp1",
		"kube_node":          "node-node2-example-com worker1",
		"k8s_cluster":        "kube_control_plane kube_node",
	} {
		if got := strings.Join(group(name), " "); got != want {
			t.Errorf("group %s = %q, want %q", name, got, want)
		}
	}
	var meta struct {
		HostVars map[string]map[string]any `json:"hostvars"`
	}
	if err := json.Unmarshal(inv["_meta"], &meta); err != nil {
		t.Fatal(err)
	}
	w := meta.HostVars["worker1"]
	// The tenant's values reach Ansible as unsafe text, which it never
	// templates (ansible-inventory shows them as {"__ansible_unsafe": v}).
	unsafe := func(v any) any {
		if m, ok := v.(map[string]any); ok {
			return m["__ansible_unsafe"]
		}
		return nil
	}
	if w["ansible_host"] != "10.0.0.21" || w["kube_version"] != "v1.31.4" || unsafe(w["container_manager"]) != "containerd" || unsafe(w["ansible_user"]) != "root" {
		t.Errorf("worker1's vars = %v", w)
	}
}

// The precheck playbook runs against this machine (ansible_connection
// local instead of SSH): it passes while the Kubernetes ports are free and
// fails, naming the port, when one is taken.
func TestPrecheckPlaybookRuns(t *testing.T) {
	playbook := ansibleTool(t, "ansible-playbook")
	kc := cluster(func(kc *clusterv1alpha1.KubernetesCluster) {
		kc.Spec.Masters = []clusterv1alpha1.Host{{Address: "127.0.0.1", Name: "local"}}
		kc.Spec.Nodes = nil
		kc.Spec.Installer.ExtraVars = map[string]string{"ansible_connection": "local", "ansible_python_interpreter": "/usr/bin/python3"}
	})
	inv := writeInventory(t, kc)
	play := filepath.Join(t.TempDir(), "precheck.yml")
	if err := os.WriteFile(play, []byte(PrecheckPlaybook), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func() (string, error) {
		cmd := exec.Command(playbook, "-i", inv, play)
		cmd.Env = ansibleEnv(t)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	syntax := exec.Command(playbook, "-i", inv, "--syntax-check", play)
	syntax.Env = ansibleEnv(t)
	if out, err := syntax.CombinedOutput(); err != nil {
		t.Fatalf("syntax check: %v\n%s", err, out)
	}
	for _, port := range []string{"6443", "2379", "2380", "10250", "10257", "10259"} {
		if l, err := net.Listen("tcp", ":"+port); err != nil {
			t.Fatalf("port %s is taken on this machine; the precheck test needs it free: %v", port, err)
		} else {
			_ = l.Close()
		}
	}
	if out, err := run(); err != nil {
		t.Fatalf("precheck on a machine with the ports free: %v\n%s", err, out)
	}

	l, err := net.Listen("tcp", ":10250")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	out, err := run()
	if err == nil {
		t.Fatalf("precheck passed although port 10250 is taken:\n%s", out)
	}
	if !strings.Contains(out, "10250") {
		t.Errorf("the failure does not name the port:\n%s", out)
	}
}

// A tenant's value that looks like a template (stored before admission
// refused such values, or written any other way) reaches Ansible as text:
// the lookup in it never runs, neither from extraVars nor from the SSH
// user, and a playbook that prints it prints it as written.
func TestAnsibleRunsNoTenantValueAsATemplate(t *testing.T) {
	playbook := ansibleTool(t, "ansible-playbook")
	marker := filepath.Join(t.TempDir(), "ran")
	jinja := "{{ lookup('pipe', 'touch " + marker + "') }}"
	kc := cluster(func(kc *clusterv1alpha1.KubernetesCluster) {
		kc.Spec.Masters = []clusterv1alpha1.Host{{Address: "127.0.0.1", Name: "local"}}
		kc.Spec.Nodes = nil
		kc.Spec.SSHSecretRef.User = jinja
		kc.Spec.Installer.ExtraVars = map[string]string{"ansible_connection": "local", "ansible_python_interpreter": "/usr/bin/python3",
			"probe": jinja}
	})
	inv := writeInventory(t, kc)
	play := filepath.Join(t.TempDir(), "print.yml")
	if err := os.WriteFile(play, []byte("- hosts: all\n  gather_facts: false\n  tasks:\n"+
		"  - debug: {msg: \"probe={{ probe }}\"}\n  - debug: {msg: \"user={{ ansible_user }}\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(playbook, "-i", inv, play)
	cmd.Env = ansibleEnv(t)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ansible-playbook: %v\n%s", err, out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("Ansible ran the lookup in a tenant's value:\n%s", out)
	}
	for _, want := range []string{"probe=" + jinja, "user=" + jinja} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the playbook did not print %q as written:\n%s", want, out)
		}
	}
}
