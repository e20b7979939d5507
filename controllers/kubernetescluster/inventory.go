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
	"bytes"
	"fmt"
	"maps"
	"net"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/validation"
)

// HostName is a host's name in the inventory (and as a node): its given
// name; the name it was installed under; else one made from its address,
// node-<address with - for . and :>, which never takes a name given to
// or installed for another host (a -2, -3, ... is added until it is free).
func HostName(kc *clusterv1alpha1.KubernetesCluster, h clusterv1alpha1.Host) string {
	if h.Name != "" {
		return h.Name
	}
	if n := kc.Status.NodeNames[h.Address]; n != "" {
		return n
	}
	taken := map[string]bool{}
	for _, list := range [][]clusterv1alpha1.Host{kc.Spec.Masters, kc.Spec.Nodes, kc.Spec.Etcd} {
		for _, o := range list {
			if o.Name != "" && o.Address != h.Address {
				taken[o.Name] = true
			}
		}
	}
	for a, n := range kc.Status.NodeNames {
		if a != h.Address {
			taken[n] = true
		}
	}
	r := strings.NewReplacer(".", "-", ":", "-")
	base := "node-" + strings.Trim(r.Replace(strings.ToLower(h.Address)), "-")
	name := base
	for i := 2; taken[name]; i++ {
		name = fmt.Sprintf("%s-%d", base, i)
	}
	return name
}

// Inventory renders the Ansible inventory (kubespray's hosts.yaml layout)
// of an operation on nodes as workers, at version.
//
// No tenant value is ever templated by Ansible: extraVars values and the
// SSH user are written as !unsafe text, which Ansible passes on as it is;
// every other value the spec gives (names, addresses, the version, the
// network) must match its pattern, which has no template delimiter — a
// value that somehow does is refused here, where it would be used.
func Inventory(kc *clusterv1alpha1.KubernetesCluster, version string, nodes []clusterv1alpha1.Host) (string, error) {
	hosts := map[string]*yaml.Node{}
	var bad []string
	plain := func(what, v string) *yaml.Node {
		if validation.HasTemplate(v) {
			bad = append(bad, what)
		}
		return scalar(v, "")
	}
	group := func(list []clusterv1alpha1.Host) *yaml.Node {
		members := map[string]*yaml.Node{}
		for _, h := range list {
			name := HostName(kc, h)
			if validation.HasTemplate(name) {
				bad = append(bad, "a host name")
			}
			vars := map[string]*yaml.Node{"ansible_host": plain("a host address", h.Address)}
			if net.ParseIP(h.Address) != nil {
				vars["ip"], vars["access_ip"] = scalar(h.Address, ""), scalar(h.Address, "")
			}
			hosts[name] = mapping(vars)
			members[name] = mapping(nil)
		}
		return mapping(map[string]*yaml.Node{"hosts": mapping(members)})
	}
	controlPlane := group(kc.Spec.Masters)
	workers := group(nodes)
	etcd := group(kc.Spec.Etcd)
	if len(nodes) == 0 {
		workers = group(kc.Spec.Masters)
	}

	vars := map[string]*yaml.Node{}
	for k, v := range kc.Spec.Installer.ExtraVars {
		vars[k] = scalar(v, unsafeTag)
	}
	n := kc.Spec.Network
	maps.Copy(vars, map[string]*yaml.Node{
		"kube_version":           plain("the version", version),
		"kube_network_plugin":    plain("the network plugin", string(n.Plugin)),
		"kube_pods_subnet":       plain("the pod CIDR", n.PodCIDR),
		"kube_service_addresses": plain("the service CIDR", n.ServiceCIDR),
		"cluster_name":           plain("the name", kc.Name),
		"ansible_user":           scalar(kc.Spec.SSHSecretRef.User, unsafeTag),
		"kubeconfig_localhost":   {Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"},
		"artifacts_dir":          scalar(artifactsDir, ""),
	})
	if len(bad) > 0 {
		return "", fmt.Errorf("not writing the inventory: %s holds a template delimiter ({{, {%% or {#)", strings.Join(bad, ", "))
	}
	inv := mapping(map[string]*yaml.Node{"all": mapping(map[string]*yaml.Node{
		"hosts": mapping(hosts),
		"vars":  mapping(vars),
		"children": mapping(map[string]*yaml.Node{
			"kube_control_plane": controlPlane,
			"kube_node":          workers,
			"etcd":               etcd,
			"k8s_cluster": mapping(map[string]*yaml.Node{"children": mapping(map[string]*yaml.Node{
				"kube_control_plane": mapping(nil), "kube_node": mapping(nil)})}),
			"calico_rr": mapping(map[string]*yaml.Node{"hosts": mapping(nil)}),
		}),
	})})
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{inv}}); err != nil {
		return "", fmt.Errorf("rendering the inventory: %w", err)
	}
	return "# Generated by kubeforge for KubernetesCluster " + kc.Namespace + "/" + kc.Name + ".\n" + b.String(), nil
}

// unsafeTag makes Ansible take a value as text, never as a template.
const unsafeTag = "!unsafe"

// scalar is a string value, quoted so that YAML reads it back as the same
// string, with tag ("" for none).
func scalar(v, tag string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Value: v, Tag: tag}
	if tag == "" {
		n.Tag = "!!str"
	}
	return n
}

// mapping is a YAML mapping with its keys sorted; {} when empty.
func mapping(m map[string]*yaml.Node) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	if len(m) == 0 {
		n.Style = yaml.FlowStyle
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, m[k])
	}
	return n
}

// Script is the shell script an operation's Job runs. The SSH key is a
// file; the inventory and this script come from the operation's ConfigMap.
func Script(kc *clusterv1alpha1.KubernetesCluster, op clusterv1alpha1.Operation) string {
	var s strings.Builder
	s.WriteString("#!/bin/sh\n# Generated by kubeforge: operation " + op.ID + " of KubernetesCluster " + kc.Namespace + "/" + kc.Name + ".\nset -eu\n")
	s.WriteString("cd /kubespray 2>/dev/null || true\n")
	s.WriteString(HostKeySetup)
	s.WriteString(StepRunner)
	common := fmt.Sprintf("-i %s/hosts.yaml --private-key %s -u %s -b", configDir, sshKeyPath, shellQuote(kc.Spec.SSHSecretRef.User))
	limit := make([]string, 0, len(op.Hosts))
	for _, a := range op.Hosts {
		limit = append(limit, hostNameOf(kc, a))
	}
	sort.Strings(limit)
	switch op.Type {
	case clusterv1alpha1.OpPrecheck:
		fmt.Fprintf(&s, "run ansible-playbook %s %s/precheck.yml\n", common, configDir)
	case clusterv1alpha1.OpCreate:
		fmt.Fprintf(&s, "run ansible-playbook %s cluster.yml\n", common)
		fmt.Fprintf(&s, "run python3 %s/store-secret.py \"$KUBEFORGE_KUBECONFIG_SECRET\" kubeconfig %s/admin.conf\n", configDir, artifactsDir)
	case clusterv1alpha1.OpScaleUp:
		// The new hosts get the precheck a create gives every host.
		fmt.Fprintf(&s, "run ansible-playbook %s %s/precheck.yml --limit=%s\n", common, configDir, shellQuote(strings.Join(limit, ",")))
		fmt.Fprintf(&s, "run ansible-playbook %s scale.yml --limit=%s\n", common, shellQuote(strings.Join(limit, ",")))
	case clusterv1alpha1.OpScaleDown:
		fmt.Fprintf(&s, "run ansible-playbook %s remove-node.yml -e node=%s -e skip_confirmation=yes\n", common, shellQuote(strings.Join(limit, ",")))
	case clusterv1alpha1.OpUpgrade:
		fmt.Fprintf(&s, "run ansible-playbook %s upgrade-cluster.yml -e kube_version=%s\n", common, shellQuote(op.Version))
	case clusterv1alpha1.OpReset:
		fmt.Fprintf(&s, "run ansible-playbook %s reset.yml -e reset_confirmation=yes\n", common)
	}
	return s.String()
}

// hostNameOf finds the inventory name of the host at address, which may
// be a node no longer in the spec (scale-down).
func hostNameOf(kc *clusterv1alpha1.KubernetesCluster, address string) string {
	for _, list := range [][]clusterv1alpha1.Host{kc.Spec.Nodes, kc.Spec.Masters} {
		for _, h := range list {
			if h.Address == address {
				return HostName(kc, h)
			}
		}
	}
	return HostName(kc, clusterv1alpha1.Host{Address: address, Name: kc.Status.NodeNames[address]})
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// PrecheckPlaybook checks every host of the inventory (or of --limit)
// before anything is installed on it: reachable over SSH with working
// sudo and python (gathering facts fails otherwise), a supported OS,
// enough memory (kubespray's minimal_master_memory_mb /
// minimal_node_memory_mb, 1500 and 1024 MB) and free disk where
// /var/lib lives (kubeforge_min_disk_gb, 10), a clock within
// kubeforge_max_clock_skew_seconds (60) of the installer's, and the
// Kubernetes ports free. The three thresholds are extraVars. Every host
// is checked and every problem of each reported in one line (no host, and
// no problem, hides another).
const PrecheckPlaybook = `# Generated by kubeforge: checks hosts before a create or a scale-up.
- hosts: all
  gather_facts: true
  any_errors_fatal: false
  vars:
    min_memory_mb: "{{ (minimal_master_memory_mb | default(1500)) if inventory_hostname in groups['kube_control_plane'] else (minimal_node_memory_mb | default(1024)) }}"
    min_disk_gb: "{{ kubeforge_min_disk_gb | default(10) }}"
    max_skew: "{{ kubeforge_max_clock_skew_seconds | default(60) }}"
    disk: "{{ df_var_lib.stdout_lines[-1].split() }}"
    skew: "{{ ((ansible_facts['date_time']['epoch'] | int) - (lookup('pipe', 'date +%s') | int)) | abs }}"
    problems:
    - "{{ '' if ansible_facts['os_family'] in ['Debian', 'RedHat', 'Suse', 'Flatcar', 'Flatcar Container Linux by Kinvolk'] else ansible_facts['distribution'] ~ ' ' ~ ansible_facts['distribution_version'] ~ ' is not supported' }}"
    - "{{ '' if (ansible_facts['memtotal_mb'] | int) >= (min_memory_mb | int) else ansible_facts['memtotal_mb'] ~ ' MB of memory, at least ' ~ min_memory_mb ~ ' MB needed' }}"
    - "{{ '' if (disk[3] | int) >= (min_disk_gb | int) * 1048576 else (((disk[3] | int) / 1048576) | round(1)) ~ ' GiB free on ' ~ disk[5] ~ ', at least ' ~ min_disk_gb ~ ' GiB needed' }}"
    - "{{ '' if (skew | int) <= (max_skew | int) else 'clock off by ' ~ skew ~ ' s from the installer, at most ' ~ max_skew ~ ' s allowed' }}"
  tasks:
  # df, not the mount facts: those leave out a container's overlay root.
  - name: Free space where /var/lib lives
    command: df -Pk /var/lib
    register: df_var_lib
    changed_when: false
  - name: The host is fit for Kubernetes (operating system, memory, disk, clock)
    assert:
      that: problems | select | list | length == 0
      fail_msg: "{{ inventory_hostname }}: {{ problems | select | join('; ') }}"
      quiet: true
  - name: The Kubernetes ports are free
    wait_for:
      port: "{{ item }}"
      state: stopped
      timeout: 5
    loop: [6443, 2379, 2380, 10250, 10257, 10259]
`

// StepRunner is run(), with which a script runs each step. SIGTERM must
// reach ansible: a shell that is PID 1 (a Pod without a shared process
// namespace, or `docker run` of the image) ignores it, and any shell's
// trap waits for a step in the foreground to end. So each step runs in the
// background, and SIGTERM or SIGINT — the Job's deadline, a delete — is
// passed on to it (ansible stops), and the script exits 143 once the step
// has ended; its EXIT trap still records host keys.
const StepRunner = `step=
stopping=
trap 'stopping=1; echo "kubeforge: stopping the operation (SIGTERM)" >&2; if [ -n "$step" ]; then kill -TERM "$step" 2>/dev/null || true; fi' TERM INT
run() {
  echo "+ $*"
  "$@" &
  step=$!
  rc=0
  wait "$step" || rc=$?
  # A trapped signal ends wait early: wait again for the step's own end.
  while [ -n "$stopping" ] && kill -0 "$step" 2>/dev/null; do wait "$step" || rc=$?; done
  step=
  if [ -n "$stopping" ]; then exit 143; fi
  return "$rc"
}
`

// HostKeySetup starts every operation's script: SSH checks every host's
// key. When the SSH Secret holds known_hosts, those keys and nothing else
// (StrictHostKeyChecking=yes). Otherwise trust on first use: the keys
// kubeforge recorded are checked strictly — a host whose key changed is
// refused — and a host met for the first time (the precheck's, a
// scale-up's new node) is accepted and recorded into the Secret
// <cluster>-known-hosts when the script ends, whatever its result.
// The directories can be moved for tests (KUBEFORGE_*_DIR).
const HostKeySetup = `given=${KUBEFORGE_GIVEN_HOSTS_DIR:-` + givenHostsDir + `}/` + KnownHostsKey + `
recorded=${KUBEFORGE_RECORDED_HOSTS_DIR:-` + recordedHostsDir + `}/` + KnownHostsKey + `
hosts=${KUBEFORGE_SSH_WORK_DIR:-/tmp/kubeforge-ssh}/` + KnownHostsKey + `
mkdir -p "$(dirname "$hosts")"
if [ -s "$given" ]; then
  cp "$given" "$hosts"
  strict=yes
  echo "checking host keys against the SSH Secret's known_hosts"
else
  if [ -s "$recorded" ]; then cp "$recorded" "$hosts"; else : > "$hosts"; fi
  strict=accept-new
  trap 'python3 "${KUBEFORGE_CONFIG_DIR:-` + configDir + `}/store-secret.py" "$KUBEFORGE_KNOWN_HOSTS_SECRET" ` + KnownHostsKey + ` "$hosts" || echo "could not record the host keys" >&2' EXIT
  echo "checking recorded host keys; new hosts are trusted on first use and recorded"
fi
export ANSIBLE_HOST_KEY_CHECKING=True
export ANSIBLE_SSH_ARGS="-C -o ControlMaster=auto -o ControlPersist=60s -o UserKnownHostsFile=$hosts -o StrictHostKeyChecking=$strict -o HashKnownHosts=no"
`

// StoreSecret writes a file into a key of a Secret through the API, as the
// installer's ServiceAccount, which may write only the cluster's
// kubeconfig and known-hosts Secrets: store-secret.py SECRET KEY FILE.
const StoreSecret = `# Generated by kubeforge: stores a file in a key of a Secret.
import base64, json, os, ssl, sys, urllib.request
sa = os.environ.get("KUBEFORGE_SA_DIR", "/var/run/secrets/kubernetes.io/serviceaccount")
token = open(sa + "/token").read()
ns = open(sa + "/namespace").read()
name, key, path = sys.argv[1], sys.argv[2], sys.argv[3]
data = base64.b64encode(open(path, "rb").read()).decode()
url = "https://%s:%s/api/v1/namespaces/%s/secrets/%s" % (os.environ["KUBERNETES_SERVICE_HOST"], os.environ["KUBERNETES_SERVICE_PORT"], ns, name)
req = urllib.request.Request(url, method="PATCH", data=json.dumps({"data": {key: data}}).encode(),
    headers={"Authorization": "Bearer " + token, "Content-Type": "application/merge-patch+json"})
urllib.request.urlopen(req, context=ssl.create_default_context(cafile=sa + "/ca.crt"))
print("stored %s in Secret %s" % (key, name))
`
