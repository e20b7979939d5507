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
	"regexp"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
	networkingv1alpha1 "github.com/kubeforge/kubeforge/api/networking/v1alpha1"
)

func found(v any) map[string]string {
	out := map[string]string{}
	for _, r := range References(v, field.NewPath("spec")) {
		out[r.Path.String()] = r.Kind + " " + r.Name
	}
	return out
}

func TestReferencesFindsEveryKindOfReferenceWithItsPath(t *testing.T) {
	fromSecret := func(name string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: "k"}}
	}
	ps := appsv1alpha1.PodSetSpec{}
	ps.Template.Spec = corev1.PodSpec{
		ServiceAccountName: "robot",
		ImagePullSecrets:   []corev1.LocalObjectReference{{Name: "pull"}},
		Volumes: []corev1.Volume{
			{Name: "a", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "vol"}}},
			{Name: "b", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "projected"}}},
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "projected-cm"}}}}}}},
			{Name: "c", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			{Name: "d", VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "x", NodePublishSecretRef: &corev1.LocalObjectReference{Name: "csi"}}}},
			{Name: "e", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "home"}}},
			{Name: "f", VolumeSource: corev1.VolumeSource{AzureFile: &corev1.AzureFileVolumeSource{SecretName: "azure"}}},
			{Name: "g", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{
				Spec: corev1.PersistentVolumeClaimSpec{DataSource: &corev1.TypedLocalObjectReference{Kind: "PersistentVolumeClaim", Name: "clone-me"}}}}}},
		},
		InitContainers: []corev1.Container{{Name: "i", EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "init-from"}}}}}},
		Containers:     []corev1.Container{{Name: "c", Env: []corev1.EnvVar{{Name: "A", Value: "plain"}, {Name: "B", ValueFrom: fromSecret("env")}}}},
	}
	want := map[string]string{
		"spec.template.spec.serviceAccountName":                                            "ServiceAccount robot",
		"spec.template.spec.imagePullSecrets[0].name":                                      "Secret pull",
		"spec.template.spec.volumes[0].secret.secretName":                                  "Secret vol",
		"spec.template.spec.volumes[1].projected.sources[0].secret.name":                   "Secret projected",
		"spec.template.spec.volumes[1].projected.sources[1].configMap.name":                "ConfigMap projected-cm",
		"spec.template.spec.volumes[3].csi.nodePublishSecretRef.name":                      "Secret csi",
		"spec.template.spec.volumes[4].persistentVolumeClaim.claimName":                    "PersistentVolumeClaim home",
		"spec.template.spec.volumes[5].azureFile.secretName":                               "Secret azure",
		"spec.template.spec.volumes[6].ephemeral.volumeClaimTemplate.spec.dataSource.name": "PersistentVolumeClaim clone-me",
		"spec.template.spec.initContainers[0].envFrom[0].secretRef.name":                   "Secret init-from",
		"spec.template.spec.containers[0].env[1].valueFrom.secretKeyRef.name":              "Secret env",
	}
	if got := found(ps); !reflect.DeepEqual(got, want) {
		t.Errorf("PodSet references:\n got %v\nwant %v", got, want)
	}

	p := appsv1alpha1.PlatformSpec{
		Database: &appsv1alpha1.PlatformDatabase{AdminSecretRef: corev1.LocalObjectReference{Name: "admin"},
			TLS: appsv1alpha1.DatabaseTLS{CASecretRef: &corev1.LocalObjectReference{Name: "ca"}}},
		ImagePullSecrets: []corev1.LocalObjectReference{{Name: "regcred"}},
		Components: []appsv1alpha1.PlatformComponent{{Name: "api", Env: []corev1.EnvVar{{Name: "K", ValueFrom: fromSecret("api-key")}},
			Hooks: &appsv1alpha1.ComponentHooks{Bootstrap: &appsv1alpha1.HookJob{Env: []corev1.EnvVar{{Name: "S", ValueFrom: fromSecret("hook")}}}}}},
	}
	want = map[string]string{
		"spec.database.adminSecretRef.name":                                     "Secret admin",
		"spec.database.tls.caSecretRef.name":                                    "Secret ca",
		"spec.imagePullSecrets[0].name":                                         "Secret regcred",
		"spec.components[0].env[0].valueFrom.secretKeyRef.name":                 "Secret api-key",
		"spec.components[0].hooks.bootstrap.env[0].valueFrom.secretKeyRef.name": "Secret hook",
	}
	if got := found(p); !reflect.DeepEqual(got, want) {
		t.Errorf("Platform references:\n got %v\nwant %v", got, want)
	}

	kc := clusterv1alpha1.KubernetesClusterSpec{SSHSecretRef: clusterv1alpha1.SSHSecretReference{Name: "ssh", User: "admin"}}
	if got := found(kc); !reflect.DeepEqual(got, map[string]string{"spec.sshSecretRef.name": "Secret ssh"}) {
		t.Errorf("KubernetesCluster references: %v", got)
	}
	ws := idev1alpha1.WorkspaceSpec{Env: []corev1.EnvVar{{Name: "TOKEN", ValueFrom: fromSecret("gh")}}}
	if got := found(ws); !reflect.DeepEqual(got, map[string]string{"spec.env[0].valueFrom.secretKeyRef.name": "Secret gh"}) {
		t.Errorf("Workspace references: %v", got)
	}
}

// The walker's completeness. It must not share a list with the walker, or
// it proves nothing: it fills every field of every kind's spec by
// reflection (each string a unique marker), asks the walker, and then, by
// its own broad rule — any string field whose name or whose struct's name
// says secret, config map, claim, service account, credential, token,
// password, key, certificate or reference — demands that the walker
// reported that field, unless the list below says what else it is. A
// field added to any type (ours or Kubernetes') that names one of these
// fails the test until the walker's rules report it or this list says why
// it is not a reference.
var notReferences = []struct{ path, why string }{
	{`\.key$`, "the key inside a Secret or ConfigMap the selector names"},
	{`\.items\[0\]\.(key|path|mode)$`, "which keys of a mounted Secret or ConfigMap, and where"},
	{`\.fieldRef\.`, "a field of the Pod itself"},
	{`\.resourceFieldRef\.`, "a resource of one of the Pod's own containers"},
	{`\.fileKeyRef\.`, "a file in one of the Pod's own volumes"},
	{`\.serviceAccountToken\.`, "a token of the Pod's own ServiceAccount (which is checked)"},
	{`\.clusterTrustBundle\.`, "cluster-scoped public certificates"},
	{`\.podCertificate\.`, "a certificate issued to the Pod itself"},
	{`\.image\.reference$`, "a container image, not an object"},
	{`\.cephfs\.secretFile$|\.rbd\.keyring$`, "a path on the node"},
	{`\.(kind|apiGroup|namespace)$`, "the kind, group or namespace part of a reference the walker reports by its name"},
	{`issuerRef\.`, "a cert-manager issuer: checked as an exposure (Exposures)"},
	{`\.volumeClaimTemplate\.(metadata|spec)\.`, "the claim an ephemeral volume makes for the Pod (its dataSource is a reference; the volume it binds, by volumeName, selector or an empty class, an exposure: Exposures)"},
	{`\.resourceClaims\[0\]\.name$|\.claims\[0\]\.(name|request)$`, "the name a Pod gives its own resource claims"},
	{`^spec\.secrets\[0\]\.`, "the Secrets a Platform generates (named <platform>-<name>), not ones it reads"},
	{`\.sshSecretRef\.user$`, "the login name, not an object"},
	{`\.database\.(user|name)$`, "the database and user made on the server"},
	{`\.securityContext\.`, "the Pod's own identity and profiles"},
	{`\.(selector|matchLabels|nodeSelector|labelSelector|podAffinityTerm|namespaceSelector)`, "labels"},
	{`\.matchLabelKeys|\.mismatchLabelKeys|\.topologyKey`, "label keys"},
	{`\.tolerations\[0\]\.key$`, "a taint key"},
	{`\.glusterfs\.endpoints$`, "an Endpoints object of the gluster plugin, removed from the kubelet"},
	{`\.csi\.volumeAttributes`, "a CSI driver's own parameters"},
	{`\.flexVolume\.options`, "a flex driver's own parameters"},
	{`\.httpGet\.httpHeaders|\.dnsConfig\.`, "plain values"},
	{`\.env\[0\]\.name$`, "an environment variable's name"},
	{`^spec\.installer\.extraVars`, "Ansible variables, passed as text"},
	{`^spec\.values`, "template values, plain text"},
	{`\.config\[`, "config file content"},
	{`annotations|labels`, "metadata of objects kubeforge makes"},
	{`^spec\.template\.metadata\.`, "the pod template's metadata: only its labels and annotations reach the Pods (podset.Deployment)"},
	{`\.reclaimPolicy$`, "Delete or Retain"},
}

// A string field is suspect when its own name, or the name of the struct
// type it is a field of, says it may name an object.
var (
	suspectField = regexp.MustCompile(`(?i)secret|configmap|claim|serviceaccount|credential|token|password|passwd|cert|(ref|reference)$`)
	suspectType  = regexp.MustCompile(`(?i)secret|configmap|claim|serviceaccount|credential|(ref|reference|projection)$`)
)

// everySpec is each kind's spec type.
var everySpec = []any{appsv1alpha1.PodSetSpec{}, appsv1alpha1.PlatformSpec{}, networkingv1alpha1.BalancerSpec{},
	idev1alpha1.WorkspaceSpec{}, clusterv1alpha1.KubernetesClusterSpec{}}

// filled is a spec of spec's type with every field set (filler).
func filled(spec any) (reflect.Value, *filler) {
	f := &filler{paths: map[string]place{}}
	v := reflect.New(reflect.TypeOf(spec)).Elem()
	f.fill(v, "spec", "", 0)
	return v, f
}

func TestWalkerReportsEveryReferenceFieldOfEveryKind(t *testing.T) {
	for _, spec := range everySpec {
		t.Run(reflect.TypeOf(spec).Name(), func(t *testing.T) {
			v, f := filled(spec)
			reported := map[string]bool{}
			var missed []string
			for _, r := range References(v.Interface(), field.NewPath("spec")) {
				reported[r.Name] = true
				if r.Kind == "" {
					missed = append(missed, r.Path.String()+" (reported, but no rule says what it names)")
				}
			}
			for marker, at := range f.paths {
				if !(suspectField.MatchString(at.field) || suspectType.MatchString(at.inType)) || reported[marker] || explained(at.path) {
					continue
				}
				missed = append(missed, at.path+" (a string of "+at.inType+")")
			}
			sort.Strings(missed)
			if len(missed) > 0 {
				t.Errorf("the walker does not report these fields, which look like references:\n  %s\n"+
					"give the walker a rule (references.go) or the field a `kubeforge:\"ref=<Kind>\"` tag; "+
					"if one is not a reference, say why in notReferences", strings.Join(missed, "\n  "))
			}
		})
	}
}

func explained(path string) bool {
	for _, n := range notReferences {
		if regexp.MustCompile(n.path).MatchString(path) {
			return true
		}
	}
	return false
}

// filler sets every field of a value: pointers allocated, one element in
// each slice and map, each string a unique marker remembered with its path
// (including the names of the struct types it lies in, which the
// suspicion rule reads too).
type filler struct {
	n     int
	paths map[string]place
}

// place is where a marker was put: its path, the field's name and the
// struct type the field belongs to.
type place struct{ path, field, inType string }

func (f *filler) fill(v reflect.Value, path, inType string, depth int) {
	if depth > 20 {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		f.fill(v.Elem(), path, inType, depth+1)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		f.fill(v.Index(0), path+"[0]", inType, depth+1)
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return
		}
		m := reflect.MakeMap(v.Type())
		key := f.marker(place{path: path + ".<key>"})
		elem := reflect.New(v.Type().Elem()).Elem()
		f.fill(elem, path+"["+key+"]", inType, depth+1)
		m.SetMapIndex(reflect.ValueOf(key).Convert(v.Type().Key()), elem)
		v.Set(m)
	case reflect.String:
		leaf := path[strings.LastIndex(path, ".")+1:]
		v.SetString(f.marker(place{path: path, field: strings.TrimSuffix(leaf, "[0]"), inType: inType}))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			if !sf.IsExported() {
				continue
			}
			name, inline := jsonName0(sf)
			if name == "-" {
				continue
			}
			p := path
			if !inline {
				p = path + "." + name
			}
			f.fill(v.Field(i), p, t.Name(), depth+1)
		}
	}
}

func (f *filler) marker(at place) string {
	f.n++
	m := fmt.Sprintf("m%d", f.n)
	f.paths[m] = at
	return m
}

var _ = ptr.To[int]

// Sites (the walker over types, from which the API server's own policy is
// made) finds exactly where References (the walker over values, which the
// webhooks use) finds references, in every kind's spec filled in full.
func TestSitesAreWhereReferencesAre(t *testing.T) {
	index := regexp.MustCompile(`\[[^\]]*\]`)
	for _, spec := range everySpec {
		t.Run(reflect.TypeOf(spec).Name(), func(t *testing.T) {
			v, _ := filled(spec)
			byValue := map[string]bool{}
			for _, r := range References(v.Interface(), field.NewPath("spec")) {
				byValue[strings.TrimPrefix(index.ReplaceAllString(r.Path.String(), "[*]"), "spec.")] = true
			}
			byType := map[string]bool{}
			for _, s := range Sites(reflect.TypeOf(spec)) {
				byType[s.String()] = true
			}
			for p := range byValue {
				if !byType[p] {
					t.Errorf("References finds %s, Sites does not", p)
				}
			}
			for p := range byType {
				if !byValue[p] {
					t.Errorf("Sites finds %s, References does not", p)
				}
			}
			if len(byType) == 0 && reflect.TypeOf(spec).Name() != "BalancerSpec" {
				t.Error("no sites")
			}
			t.Logf("%d sites", len(byType))
		})
	}
}
