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
	"maps"
	"net"
	"regexp"
	"slices"
	"strings"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
)

// kubernetesclusterMaxName leaves room for -scale-down-<sequence> in the Job names,
// which label the Job's pods and must stay within 63 characters.
const kubernetesclusterMaxName = 40

// KubernetesCluster returns every problem with a KubernetesCluster's spec.
func KubernetesCluster(kc *clusterv1alpha1.KubernetesCluster) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	errs = append(errs, NameAtMost(kc.Name, kubernetesclusterMaxName)...)
	if _, ok := clusterv1alpha1.ParseVersion(kc.Spec.Version); !ok {
		errs = append(errs, field.Invalid(spec.Child("version"), kc.Spec.Version, "must be vMAJOR.MINOR.PATCH, e.g. v1.31.4"))
	}
	if len(kc.Spec.Masters) == 0 {
		errs = append(errs, field.Required(spec.Child("masters"), "at least one control-plane host"))
	}
	// A host is one machine: it may be a master and run etcd, but appears
	// once per list and never as both a master and a worker.
	seen := map[string]string{}
	for _, list := range []struct {
		name  string
		hosts []clusterv1alpha1.Host
	}{{"masters", kc.Spec.Masters}, {"nodes", kc.Spec.Nodes}} {
		for i, h := range list.hosts {
			p := spec.Child(list.name).Index(i)
			errs = append(errs, validateHost(h, p)...)
			if other, dup := seen[h.Address]; dup {
				errs = append(errs, field.Duplicate(p.Child("address"), fmt.Sprintf("%s (already in %s)", h.Address, other)))
			}
			seen[h.Address] = p.String()
		}
	}
	etcdSeen := map[string]bool{}
	for i, h := range kc.Spec.Etcd {
		p := spec.Child("etcd").Index(i)
		errs = append(errs, validateHost(h, p)...)
		if etcdSeen[h.Address] {
			errs = append(errs, field.Duplicate(p.Child("address"), h.Address))
		}
		etcdSeen[h.Address] = true
	}
	if n := len(kc.Spec.Etcd); n > 0 && n%2 == 0 {
		errs = append(errs, field.Invalid(spec.Child("etcd"), n, "etcd needs an odd number of members to keep a quorum"))
	}
	names := map[string]bool{}
	for _, list := range [][]clusterv1alpha1.Host{kc.Spec.Masters, kc.Spec.Nodes} {
		for _, h := range list {
			if h.Name != "" && names[h.Name] {
				errs = append(errs, field.Duplicate(spec.Child("nodes"), "name "+h.Name))
			}
			names[h.Name] = true
		}
	}

	net := spec.Child("network")
	for _, c := range []struct{ path, value string }{{"podCIDR", kc.Spec.Network.PodCIDR}, {"serviceCIDR", kc.Spec.Network.ServiceCIDR}} {
		if c.value != "" {
			if _, _, err := parseCIDR(c.value); err != nil {
				errs = append(errs, field.Invalid(net.Child(c.path), c.value, "must be a CIDR such as 10.233.64.0/18"))
			}
		}
	}
	switch kc.Spec.Network.Plugin {
	case "", "calico", "flannel", "cilium":
	default:
		errs = append(errs, field.NotSupported(net.Child("plugin"), kc.Spec.Network.Plugin, []string{"calico", "flannel", "cilium"}))
	}
	if kc.Spec.SSHSecretRef.Name == "" {
		errs = append(errs, field.Required(spec.Child("sshSecretRef", "name"), "a kubernetes.io/ssh-auth Secret with the installer's SSH key"))
	}
	in := spec.Child("installer")
	if t := kc.Spec.Installer.Timeout; t != nil && t.Duration < time.Minute {
		errs = append(errs, field.Invalid(in.Child("timeout"), t.Duration.String(), "must be at least 1m"))
	}
	errs = append(errs, PodLabels(kc.Spec.Installer.PodLabels, in.Child("podLabels"))...)
	errs = append(errs, extraVars(kc.Spec.Installer.ExtraVars, in.Child("extraVars"))...)
	if kc.Spec.Installer.Resources != nil {
		errs = append(errs, Resources(kc.Spec.Installer.Resources, in.Child("resources"))...)
	}
	return errs
}

// KubernetesClusterTransition are the rules a new cluster, or a change of
// what they look at, must pass, while clusters stored before them stay
// valid: the installer's version range, and no tenant value the inventory
// carries that looks like a template (the inventory writer also passes
// every such value to Ansible as !unsafe text, so a value stored before
// this rule is never templated either) or an SSH user that is not a POSIX
// login name.
func KubernetesClusterTransition(oldKC, newKC *clusterv1alpha1.KubernetesCluster) field.ErrorList {
	errs := InstallerVersion(oldKC, newKC)
	spec := field.NewPath("spec")
	var before map[string]string
	if oldKC != nil {
		before = oldKC.Spec.Installer.PodLabels
	}
	errs = append(errs, ReservedPodLabels(newKC.Spec.Installer.PodLabels, before, spec.Child("installer", "podLabels"))...)
	if oldKC == nil || !maps.Equal(oldKC.Spec.Installer.ExtraVars, newKC.Spec.Installer.ExtraVars) {
		for _, name := range slices.Sorted(maps.Keys(newKC.Spec.Installer.ExtraVars)) {
			if v := newKC.Spec.Installer.ExtraVars[name]; HasTemplate(v) {
				errs = append(errs, field.Invalid(spec.Child("installer", "extraVars").Key(name), v,
					"must not contain {{, {% or {#: Ansible would run it as a Jinja template"))
			}
		}
	}
	if u := newKC.Spec.SSHSecretRef.User; u != "" && (oldKC == nil || oldKC.Spec.SSHSecretRef.User != u) && !posixLogin.MatchString(u) {
		errs = append(errs, field.Invalid(spec.Child("sshSecretRef", "user"), u,
			"must be a POSIX login name: up to 32 lower-case letters, digits, _ and -, starting with a letter or _"))
	}
	return errs
}

// HasTemplate reports whether s holds a Jinja delimiter.
func HasTemplate(s string) bool {
	return strings.Contains(s, "{{") || strings.Contains(s, "{%") || strings.Contains(s, "{#")
}

// posixLogin is a portable login name (POSIX's portable filename set as
// useradd checks it).
var posixLogin = regexp.MustCompile(`^[a-z_][a-z0-9_-]{0,31}$`)

// InstallerVersion refuses a spec.version that the installer image
// cannot install, when the image is one of clusterv1alpha1.InstallerReleases
// (the default). It is a transition rule: it applies to a new cluster, and
// to a change of the version or the installer image, so that a cluster
// stored before the rule (or before the default image changed) can still
// be edited otherwise.
func InstallerVersion(oldKC, newKC *clusterv1alpha1.KubernetesCluster) field.ErrorList {
	if oldKC != nil && oldKC.Spec.Version == newKC.Spec.Version && installerImage(oldKC) == installerImage(newKC) {
		return nil
	}
	image := installerImage(newKC)
	r, known := clusterv1alpha1.InstallerReleaseOf(image)
	if _, ok := clusterv1alpha1.ParseVersion(newKC.Spec.Version); !ok || !known {
		return nil
	}
	v := newKC.Spec.Version
	if clusterv1alpha1.CompareVersions(v, r.Min) >= 0 && clusterv1alpha1.CompareVersions(v, r.Max) <= 0 {
		return nil
	}
	return field.ErrorList{field.Invalid(field.NewPath("spec", "version"), v, fmt.Sprintf(
		"the installer image %s installs Kubernetes %s to %s; choose a version in that range, or name in spec.installer.image an installer image that installs %s",
		image, r.Min, r.Max, v))}
}

// installerImage is the image the operations will run: the default one
// when none is named.
func installerImage(kc *clusterv1alpha1.KubernetesCluster) string {
	if kc.Spec.Installer.Image == "" {
		return clusterv1alpha1.DefaultInstallerImage
	}
	return kc.Spec.Installer.Image
}

func validateHost(h clusterv1alpha1.Host, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if net.ParseIP(h.Address) == nil && len(utilvalidation.IsDNS1123Subdomain(h.Address)) > 0 {
		errs = append(errs, field.Invalid(p.Child("address"), h.Address, "must be an IP address or a DNS name"))
	}
	if h.Name != "" {
		for _, msg := range utilvalidation.IsDNS1123Label(h.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), h.Name, msg))
		}
	}
	return errs
}

func parseCIDR(s string) (net.IP, *net.IPNet, error) { return net.ParseCIDR(s) }

// KubernetesClusterUpdate returns every problem with a change:
// masters, etcd and network are fixed at creation; the version never goes
// down and rises one minor version at a time; and while an operation runs,
// nothing but paused may change.
func KubernetesClusterUpdate(oldKC, newKC *clusterv1alpha1.KubernetesCluster) field.ErrorList {
	errs := KubernetesCluster(newKC)
	spec := field.NewPath("spec")
	if !apiequality.Semantic.DeepEqual(oldKC.Spec.Masters, newKC.Spec.Masters) {
		errs = append(errs, field.Forbidden(spec.Child("masters"), "cannot change after creation"))
	}
	if !apiequality.Semantic.DeepEqual(oldKC.Spec.Etcd, newKC.Spec.Etcd) {
		errs = append(errs, field.Forbidden(spec.Child("etcd"), "cannot change after creation"))
	}
	if !apiequality.Semantic.DeepEqual(oldKC.Spec.Network, newKC.Spec.Network) {
		errs = append(errs, field.Forbidden(spec.Child("network"), "cannot change after creation"))
	}
	if o, okO := clusterv1alpha1.ParseVersion(oldKC.Spec.Version); okO {
		if n, okN := clusterv1alpha1.ParseVersion(newKC.Spec.Version); okN {
			switch {
			case less(n, o):
				errs = append(errs, field.Forbidden(spec.Child("version"), fmt.Sprintf("cannot go down from %s to %s", oldKC.Spec.Version, newKC.Spec.Version)))
			case n[0] != o[0]:
				errs = append(errs, field.Forbidden(spec.Child("version"), fmt.Sprintf("cannot change the major version (%s to %s)", oldKC.Spec.Version, newKC.Spec.Version)))
			case n[1] > o[1]+1:
				errs = append(errs, field.Forbidden(spec.Child("version"),
					fmt.Sprintf("can rise by one minor version at a time: from %s to v%d.%d.x at most", oldKC.Spec.Version, o[0], o[1]+1)))
			}
		}
	}
	if op := oldKC.Status.CurrentOperation; op != "" {
		a, b := oldKC.Spec.DeepCopy(), newKC.Spec.DeepCopy()
		a.Paused, b.Paused = false, false
		if !apiequality.Semantic.DeepEqual(a, b) {
			errs = append(errs, field.Forbidden(spec, fmt.Sprintf("operation %s is running; only spec.paused may change until it ends", op)))
		}
	}
	return errs
}

func less(a, b [3]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// ReservedInstallerVars are the inventory variables the operator sets
// itself (the version, the network, the SSH user, where the kubeconfig
// goes), the host groups it fills, and the kubespray switches that would
// step around the one-minor-version upgrade rule or the hosts it checked.
// installer.extraVars may set none of them, nor any ansible_* variable
// (connection, user, privilege escalation: the operator's to set).
var ReservedInstallerVars = []string{
	"kube_version", "kube_network_plugin", "kube_pods_subnet", "kube_service_addresses",
	"cluster_name", "kubeconfig_localhost", "artifacts_dir",
	"kube_control_plane", "kube_node", "etcd", "k8s_cluster", "calico_rr", "all",
	"kube_version_min_required", "upgrade_cluster_setup", "skip_downloads",
}

// installerVarName is what Ansible accepts as a variable name.
var installerVarName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

func extraVars(vars map[string]string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, name := range slices.Sorted(maps.Keys(vars)) {
		switch {
		case !installerVarName.MatchString(name):
			errs = append(errs, field.Invalid(p.Key(name), name, "must be an Ansible variable name: letters, digits and _, not starting with a digit"))
		case strings.HasPrefix(name, "ansible_"):
			errs = append(errs, field.Forbidden(p.Key(name), "ansible_* variables (connection, user, privilege escalation) are the operator's"))
		case slices.Contains(ReservedInstallerVars, name):
			errs = append(errs, field.Forbidden(p.Key(name), "the operator sets this from the spec (version, network, hosts); change the spec instead"))
		}
	}
	return errs
}
