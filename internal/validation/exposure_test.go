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
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
	networkingv1alpha1 "github.com/kubeforge/kubeforge/api/networking/v1alpha1"
)

func TestExposuresFindIngressesCertificatesNodePortsBaselineStatefulSetVolumesAndInstallerVariablesThatAreNotPlain(t *testing.T) {
	ws := idev1alpha1.WorkspaceSpec{Ingress: &idev1alpha1.WorkspaceIngress{Host: "ide.example.com",
		TLS: &idev1alpha1.WorkspaceTLS{IssuerRef: idev1alpha1.IssuerReference{Name: "le", Kind: "ClusterIssuer"}}}}
	p := appsv1alpha1.PlatformSpec{Components: []appsv1alpha1.PlatformComponent{
		{Name: "web", PodSecurity: appsv1alpha1.PodSecurityRestricted, Service: appsv1alpha1.ComponentService{Type: corev1.ServiceTypeLoadBalancer},
			Ingress: &appsv1alpha1.ComponentIngress{Host: "shop.example.com",
				Annotations: map[string]string{"nginx.ingress.kubernetes.io/server-alias": "www.shop.example.com, bank.example.org"}}},
		{Name: "db", Service: appsv1alpha1.ComponentService{Type: corev1.ServiceTypeClusterIP}, PodSecurity: appsv1alpha1.PodSecurityBaseline},
		{Name: "api", PodSecurity: appsv1alpha1.PodSecurityRestricted},
		{Name: "pg", PodSecurity: appsv1alpha1.PodSecurityRestricted, Workload: appsv1alpha1.WorkloadStatefulSet, Storage: &appsv1alpha1.ComponentStorage{}},
		// A Deployment's claim is one the operator makes and seals; a
		// StatefulSet without storage mounts no claim.
		{Name: "files", PodSecurity: appsv1alpha1.PodSecurityRestricted, Workload: appsv1alpha1.WorkloadDeployment, Storage: &appsv1alpha1.ComponentStorage{}},
		// Unset: stored before the field, runs as Baseline.
		{Name: "cache", Workload: appsv1alpha1.WorkloadStatefulSet},
	}}
	b := networkingv1alpha1.BalancerSpec{ServiceType: corev1.ServiceTypeNodePort}
	kc := clusterv1alpha1.KubernetesClusterSpec{Installer: clusterv1alpha1.Installer{ExtraVars: clusterv1alpha1.InstallerVariables{
		"container_manager": "containerd", "minimal_node_memory_mb": "512", // plain
		"image_pull_command_on_localhost": "python3 -c x", // a command
		"download_localhost":              "true",         // not on the list, though a word
		"dns_mode":                        "../x",         // on the list, not one word
	}}}
	got := func(v any) []string {
		var out []string
		for _, e := range Exposures(v, field.NewPath("spec")) {
			out = append(out, e.Path.String()+" "+e.Verb+e.Resource+" "+e.Name+e.Host+e.Issuer+e.ServiceType)
		}
		return out
	}
	for _, tc := range []struct {
		spec any
		want []string
	}{
		{ws, []string{"spec.ingress.host ingresses ide.example.com", "spec.ingress.tls.issuerRef certificates ClusterIssuer/le"}},
		{p, []string{"spec.components[0].service.type services LoadBalancer", "spec.components[0].ingress.host ingresses shop.example.com",
			"spec.components[0].ingress.annotations[nginx.ingress.kubernetes.io/server-alias] ingresses www.shop.example.com",
			"spec.components[0].ingress.annotations[nginx.ingress.kubernetes.io/server-alias] ingresses bank.example.org",
			"spec.components[1].podSecurity usepodsecuritylevels baseline",
			"spec.components[3].storage getpersistentvolumeclaims ", "spec.components[3].storage createpods ",
			"spec.components[5].podSecurity usepodsecuritylevels baseline"}},
		{b, []string{"spec.serviceType services NodePort"}},
		{networkingv1alpha1.BalancerSpec{ServiceType: corev1.ServiceTypeClusterIP}, nil},
		{clusterv1alpha1.KubernetesClusterSpec{}, nil},
		{kc, []string{"spec.installer.extraVars[dns_mode] createpods ", "spec.installer.extraVars[download_localhost] createpods ",
			"spec.installer.extraVars[image_pull_command_on_localhost] createpods "}},
	} {
		if g := got(tc.spec); !reflect.DeepEqual(g, tc.want) {
			t.Errorf("Exposures(%T) = %q, want %q", tc.spec, g, tc.want)
		}
	}
}

func TestAClaimBindingAVolumeThatExistsTakesTheRightToCreateClaims(t *testing.T) {
	fast, none := "fast", ""
	claim := func(spec corev1.PersistentVolumeClaimSpec) corev1.Volume {
		return corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
			VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{Spec: spec}}}}
	}
	ps := appsv1alpha1.PodSetSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Volumes: []corev1.Volume{
		claim(corev1.PersistentVolumeClaimSpec{StorageClassName: &fast}), // a new volume of a class
		claim(corev1.PersistentVolumeClaimSpec{}),                        // of the default class
		claim(corev1.PersistentVolumeClaimSpec{StorageClassName: &fast, VolumeName: "team-b-data"}),
		claim(corev1.PersistentVolumeClaimSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "b"}}}),
		claim(corev1.PersistentVolumeClaimSpec{StorageClassName: &none}),
		{Name: "legacy", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{corev1.BetaStorageClassAnnotation: ""}},
			Spec:       corev1.PersistentVolumeClaimSpec{StorageClassName: &fast}}}}},
		{Name: "legacy-named", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{corev1.BetaStorageClassAnnotation: "fast"}}}}}},
		{Name: "placed", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"nfs.io/storage-path": "bob-home"}, Labels: map[string]string{"team": "b"}},
			Spec:       corev1.PersistentVolumeClaimSpec{StorageClassName: &fast}}}}},
	}}}}
	ws := idev1alpha1.WorkspaceSpec{Storage: idev1alpha1.WorkspaceStorage{StorageClassName: &none}}
	p := appsv1alpha1.PlatformSpec{Components: []appsv1alpha1.PlatformComponent{
		{Name: "files", PodSecurity: appsv1alpha1.PodSecurityRestricted, Storage: &appsv1alpha1.ComponentStorage{StorageClassName: &fast}},
		{Name: "data", PodSecurity: appsv1alpha1.PodSecurityRestricted, Storage: &appsv1alpha1.ComponentStorage{StorageClassName: &none}},
	}}
	got := func(v any) []string {
		var out []string
		for _, e := range Exposures(v, field.NewPath("spec")) {
			out = append(out, e.Path.String()+" "+e.Verb+" "+e.Resource)
		}
		return out
	}
	const vct = "spec.template.spec.volumes[%d].ephemeral.volumeClaimTemplate.spec."
	for _, tc := range []struct {
		spec any
		want []string
	}{
		{ps, []string{fmt.Sprintf(vct, 2) + "volumeName create persistentvolumeclaims",
			fmt.Sprintf(vct, 3) + "selector create persistentvolumeclaims",
			fmt.Sprintf(vct, 4) + "storageClassName create persistentvolumeclaims",
			"spec.template.spec.volumes[5].ephemeral.volumeClaimTemplate.metadata.annotations[volume.beta.kubernetes.io/storage-class] create persistentvolumeclaims",
			"spec.template.spec.volumes[6].ephemeral.volumeClaimTemplate.metadata.annotations[volume.beta.kubernetes.io/storage-class] create persistentvolumeclaims",
			"spec.template.spec.volumes[7].ephemeral.volumeClaimTemplate.metadata.annotations[nfs.io/storage-path] create persistentvolumeclaims",
			"spec.template.spec.volumes[7].ephemeral.volumeClaimTemplate.metadata.labels[team] create persistentvolumeclaims"}},
		{ws, []string{"spec.storage.storageClassName create persistentvolumeclaims"}},
		{idev1alpha1.WorkspaceSpec{Storage: idev1alpha1.WorkspaceStorage{StorageClassName: &fast}}, nil},
		{p, []string{"spec.components[1].storage.storageClassName create persistentvolumeclaims"}},
	} {
		if g := got(tc.spec); !reflect.DeepEqual(g, tc.want) {
			t.Errorf("Exposures(%T) = %q, want %q", tc.spec, g, tc.want)
		}
	}
}

func TestAVolumeThatMountsStorageWithoutAClaimTakesTheRightToCreatePods(t *testing.T) {
	ps := appsv1alpha1.PodSetSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Volumes: []corev1.Volume{
		{Name: "share", VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "nfs.csi.k8s.io",
			VolumeAttributes: map[string]string{"server": "nfs.team-b", "share": "/exports/b"}}}},
		{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/lib"}}},
		{Name: "nfs", VolumeSource: corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: "nfs.team-b", Path: "/"}}},
		{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}},
		{Name: "info", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{}}},
	}}}}
	var got []string
	for _, e := range Exposures(ps, field.NewPath("spec")) {
		got = append(got, e.Path.String()+" "+e.Verb+" "+e.Resource)
	}
	want := []string{
		"spec.template.spec use podsecuritylevels", // and hostPath and nfs are below restricted
		"spec.template.spec.volumes[0].csi create pods",
		"spec.template.spec.volumes[1].hostPath create pods",
		"spec.template.spec.volumes[2].nfs create pods",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Exposures = %q, want %q", got, want)
	}
}

func TestThePolicyLimitsIngressHostsAndIssuers(t *testing.T) {
	spec := func(host, issuer string) idev1alpha1.WorkspaceSpec {
		return idev1alpha1.WorkspaceSpec{Ingress: &idev1alpha1.WorkspaceIngress{Host: host,
			TLS: &idev1alpha1.WorkspaceTLS{IssuerRef: idev1alpha1.IssuerReference{Name: issuer, Kind: "ClusterIssuer"}}}}
	}
	pol := Policy{IngressHosts: []string{"*.ide.example.com", "exact.example.com"}, WildcardHosts: []string{"*.team-a.ide.example.com", "*.team-b.example.org"}, Issuers: []string{"ClusterIssuer/le"}}
	for _, tc := range []struct {
		host, issuer string
		errs         int
	}{
		{"alice.ide.example.com", "le", 0},
		{"a.b.ide.example.com", "le", 0},
		{"exact.example.com", "le", 0},
		{"ide.example.com", "le", 1}, // the wildcard needs a label
		// A pattern grants names, not wildcards: *.ide.example.com as a
		// host would catch every name under it and take a certificate
		// valid for every other tenant's host there.
		{"*.ide.example.com", "le", 1},
		{"*.alice.ide.example.com", "le", 1},
		{"*.Team-A.ide.example.com", "le", 0}, // listed in WildcardHosts
		{"*.team-b.example.org", "le", 0},     // listed, under no pattern: granted by name
		{"*.x.team-b.example.org", "le", 1},   // under a listed wildcard: not listed
		{"evil.example.org", "le", 1},
		{"alice.ide.example.com", "selfsigned", 1},
		{"evil.example.org", "selfsigned", 2},
	} {
		if errs := pol.Rules(spec(tc.host, tc.issuer), field.NewPath("spec")); len(errs) != tc.errs {
			t.Errorf("host %s issuer %s: %d errors (%v), want %d", tc.host, tc.issuer, len(errs), errs, tc.errs)
		}
	}
	if errs := (Policy{}).Rules(spec("anything.example.org", "any"), field.NewPath("spec")); len(errs) != 0 {
		t.Errorf("an empty policy refused: %v", errs)
	}
	// A host an ingress controller serves by annotation is a host too.
	aliased := appsv1alpha1.PlatformSpec{Components: []appsv1alpha1.PlatformComponent{{Name: "web",
		Ingress: &appsv1alpha1.ComponentIngress{Host: "web.ide.example.com",
			Annotations: map[string]string{"nginx.ingress.kubernetes.io/server-alias": "bank.example.org"}}}}}
	errs := pol.Rules(aliased, field.NewPath("spec"))
	if len(errs) != 1 || errs[0].Field != "spec.components[0].ingress.annotations[nginx.ingress.kubernetes.io/server-alias]" {
		t.Errorf("an aliased host outside the policy: %v", errs)
	}
	// Any controller's alias annotation, and never a pattern by its suffix.
	aliased.Components[0].Ingress.Annotations = map[string]string{"konghq.com/host-aliases": "web2.ide.example.com,bank.example.org"}
	if errs := pol.Rules(aliased, field.NewPath("spec")); len(errs) != 1 || errs[0].Field != "spec.components[0].ingress.annotations[konghq.com/host-aliases]" {
		t.Errorf("Kong's aliased host outside the policy: %v", errs)
	}
	// A wildcard in an alias annotation is a wildcard host too.
	aliased.Components[0].Ingress.Annotations = map[string]string{"nginx.ingress.kubernetes.io/server-alias": "*.ide.example.com"}
	if errs := pol.Rules(aliased, field.NewPath("spec")); len(errs) != 1 || !strings.Contains(errs[0].Detail, "wildcard") {
		t.Errorf("a wildcard alias under a host pattern: %v", errs)
	}
	if hostAllowed(pol.IngressHosts, `~^bank\.example\.org$|x.ide.example.com`) {
		t.Error("a regular expression passed the policy by its suffix")
	}
}

func TestIngressAnnotationsOfKubeforgeSnippetsIssuersAndHostPatternsAreForbidden(t *testing.T) {
	for _, tc := range []struct {
		key, value string
		forbidden  bool
	}{
		{"kubeforge.io/proof", "x", true},
		{"ide.kubeforge.io/pod-hash", "x", true},
		{"nginx.ingress.kubernetes.io/configuration-snippet", "x", true},
		{"nginx.ingress.kubernetes.io/server-snippet", "x", true},
		{"nginx.ingress.kubernetes.io/auth-snippet", "x", true},
		{"nginx.ingress.kubernetes.io/rewrite-target", "/", false},
		{"cert-manager.io/cluster-issuer", "le", true},
		{"cert-manager.io/issuer", "le", true},
		{"cert-manager.io/issuer-kind", "ClusterIssuer", true},
		{"cert-manager.io/issuer-group", "cert-manager.io", true},
		{"kubernetes.io/tls-acme", "true", true},
		{"traefik.ingress.kubernetes.io/router.tls.certresolver", "le", true},
		{"traefik.ingress.kubernetes.io/router.tls.domains.0.main", "bank.example.org", true},
		{"cert-manager.io/common-name", "web.example.com", false},
		{"acme.cert-manager.io/http01-edit-in-place", "true", false},
		{"example.com/kubeforge.io", "x", false},
		{"nginx.ingress.kubernetes.io/server-alias", "a.t.example.com, *.b.t.example.com", false},
		{"nginx.ingress.kubernetes.io/server-alias", `~^bank\.example\.org$`, true},
		{"nginx.ingress.kubernetes.io/server-alias", "", true},
		{"haproxy-ingress.github.io/server-alias-regex", `.*\.example\.org`, true},
		{"konghq.com/host-aliases", "x.t.example.com,y.t.example.com", false},
		{"haproxy-ingress.github.io/server-alias-regex", "a.t.example.com", true},
		{"external-dns.alpha.kubernetes.io/alias", "true", false},
	} {
		if got := ForbiddenIngressAnnotation(tc.key, tc.value) != ""; got != tc.forbidden {
			t.Errorf("ForbiddenIngressAnnotation(%q, %q) = %v, want %v", tc.key, tc.value, got, tc.forbidden)
		}
	}
}

func TestNewClustersMayNotCarryTemplatesOrNonPOSIXUsers(t *testing.T) {
	kc := func(user string, vars map[string]string) *clusterv1alpha1.KubernetesCluster {
		c := &clusterv1alpha1.KubernetesCluster{}
		c.Spec.Version = "v1.31.4"
		c.Spec.SSHSecretRef = clusterv1alpha1.SSHSecretReference{Name: "ssh", User: user}
		c.Spec.Installer.ExtraVars = vars
		return c
	}
	for _, tc := range []struct {
		name string
		kc   *clusterv1alpha1.KubernetesCluster
		errs int
	}{
		{"plain values", kc("ubuntu", map[string]string{"container_manager": "containerd"}), 0},
		{"a Jinja expression", kc("ubuntu", map[string]string{"x": "{{ lookup('pipe','id') }}"}), 1},
		{"a Jinja statement", kc("ubuntu", map[string]string{"x": "{% if true %}"}), 1},
		{"a Jinja comment", kc("ubuntu", map[string]string{"x": "{# #}"}), 1},
		{"Jinja as the user", kc("{{ lookup('pipe','id') }}", nil), 1},
		{"a user with a space", kc("a b", nil), 1},
		{"an upper-case user", kc("Admin", nil), 1},
		{"a user of 33 letters", kc("abcdefghijabcdefghijabcdefghijabc", nil), 1},
	} {
		if errs := KubernetesClusterTransition(nil, tc.kc); len(errs) != tc.errs {
			t.Errorf("%s: %d errors (%v), want %d", tc.name, len(errs), errs, tc.errs)
		}
	}
	// A cluster stored with such a value can still be changed otherwise.
	stored := kc("{{x}}", map[string]string{"x": "{{ y }}"})
	changed := stored.DeepCopy()
	changed.Spec.Paused = true
	if errs := KubernetesClusterTransition(stored, changed); len(errs) != 0 {
		t.Errorf("a stored cluster could not be paused: %v", errs)
	}
}

func TestPodLabelsOfKubeforgeAndTheJobControllerAreReserved(t *testing.T) {
	for key, reserved := range map[string]bool{
		"ide.kubeforge.io/workspace":   true,
		"apps.kubeforge.io/platform":   true,
		"kubeforge.io/anything":        true,
		"batch.kubernetes.io/job-name": true,
		"job-name":                     true,
		"controller-uid":               true,
		"app":                          false,
		"app.kubernetes.io/name":       false,
		"example.com/kubeforge.io":     false,
	} {
		if got := ReservedPodLabel(key) != ""; got != reserved {
			t.Errorf("ReservedPodLabel(%q) = %v, want %v", key, got, reserved)
		}
	}
	stored := &appsv1alpha1.PodSet{}
	stored.Spec.Template.Labels = map[string]string{"ide.kubeforge.io/workspace": "x"}
	if errs := PodSetTransition(nil, stored); len(errs) != 1 {
		t.Errorf("a new PodSet with a reserved label: %v", errs)
	}
	if errs := PodSetTransition(stored, stored.DeepCopy()); len(errs) != 0 {
		t.Errorf("a stored PodSet could not be changed otherwise: %v", errs)
	}
}
