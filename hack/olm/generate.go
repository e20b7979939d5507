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

// Package olm generates kubeforge's OLM bundle and file-based catalog from
// config/, as `operator-sdk generate bundle` and `opm render` would, and
// checks them with the validators `operator-sdk bundle validate` and
// `opm validate` run. It is its own Go module so that operator-framework's
// dependencies stay out of the operator's.
package olm

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"unicode"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/api/pkg/lib/version"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// The package, its channel and what builds it.
const (
	Package        = "kubeforge"
	Channel        = "candidate"
	WebhookPort    = 9443
	ManifestsDir   = "manifests/"
	MetadataDir    = "metadata/"
	ScorecardDir   = "tests/scorecard/"
	CSVFile        = ManifestsDir + "kubeforge.clusterserviceversion.yaml"
	AnnotationFile = MetadataDir + "annotations.yaml"
)

// Options say what to build.
type Options struct {
	// Root is the repository root.
	Root string
	// Version of the operator (the CSV's spec.version), e.g. 0.1.0.
	Version string
	// Image of the manager.
	Image string
	// BundleImage is the bundle's image, named in the catalog.
	BundleImage string
	// Replaces names the CSV this version upgrades (the CSV's
	// spec.replaces and the channel entry's replaces), e.g.
	// kubeforge.v0.1.0; empty for the first version of a channel.
	Replaces string
	// Previous is a file-based catalog (a catalog.yaml written by an earlier
	// run) whose bundles and channel entries the new catalog keeps, so that
	// a release adds its bundle to those already published.
	Previous string
}

// Files are generated files by path: bundle files relative to bundle/,
// plus "../bundle.Dockerfile" and "../catalog/..." for the others.
type Files map[string][]byte

// Generate builds the bundle, bundle.Dockerfile and the catalog.
func Generate(o Options) (Files, error) {
	objs, err := kustomize(o.Root, "config/manifests")
	if err != nil {
		return nil, err
	}
	csv, bound, err := buildCSV(o, objs)
	if err != nil {
		return nil, err
	}
	files := Files{}
	csvYAML, err := marshal(csv)
	if err != nil {
		return nil, err
	}
	files[CSVFile] = csvYAML
	for _, u := range objs {
		if !standalone(u, bound) {
			continue
		}
		u.SetNamespace("")
		b, err := marshal(u.Object)
		if err != nil {
			return nil, err
		}
		files[ManifestsDir+manifestName(u)] = b
	}
	annotations := Annotations()
	b, err := marshal(map[string]any{"annotations": annotations})
	if err != nil {
		return nil, err
	}
	files[AnnotationFile] = b
	scorecard, err := os.ReadFile(filepath.Join(o.Root, "config/scorecard/config.yaml"))
	if err != nil {
		return nil, err
	}
	files[ScorecardDir+"config.yaml"] = scorecard
	files["../bundle.Dockerfile"] = bundleDockerfile(annotations)
	catalog, err := renderCatalog(o, csv, objs)
	if err != nil {
		return nil, err
	}
	files["../catalog/kubeforge/catalog.yaml"] = catalog
	return files, nil
}

// Write writes files under bundleDir (replacing manifests/ whole).
func Write(files Files, bundleDir string) error {
	if err := os.RemoveAll(filepath.Join(bundleDir, ManifestsDir)); err != nil {
		return err
	}
	for name, b := range files {
		p := filepath.Join(bundleDir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Annotations are the bundle's metadata/annotations.yaml, which the bundle
// image carries as labels.
func Annotations() map[string]string {
	return map[string]string{
		"operators.operatorframework.io.bundle.mediatype.v1":       "registry+v1",
		"operators.operatorframework.io.bundle.manifests.v1":       ManifestsDir,
		"operators.operatorframework.io.bundle.metadata.v1":        MetadataDir,
		"operators.operatorframework.io.bundle.package.v1":         Package,
		"operators.operatorframework.io.bundle.channels.v1":        Channel,
		"operators.operatorframework.io.bundle.channel.default.v1": Channel,
		"operators.operatorframework.io.metrics.builder":           "kubeforge-bundle-generator",
		"operators.operatorframework.io.metrics.mediatype.v1":      "metrics+v1",
		"operators.operatorframework.io.metrics.project_layout":    "go.kubebuilder.io/v4",
		"operators.operatorframework.io.test.mediatype.v1":         "scorecard+v1",
		"operators.operatorframework.io.test.config.v1":            ScorecardDir,
	}
}

func bundleDockerfile(annotations map[string]string) []byte {
	var b bytes.Buffer
	b.WriteString("# The OLM bundle image, generated by `make bundle` (hack/olm): its labels\n# equal bundle/metadata/annotations.yaml. Build it with `make bundle-build`.\nFROM scratch\n\n")
	for _, k := range sortedKeys(annotations) {
		fmt.Fprintf(&b, "LABEL %s=%s\n", k, annotations[k])
	}
	b.WriteString("\nCOPY bundle/manifests /manifests/\nCOPY bundle/metadata /metadata/\nCOPY bundle/tests/scorecard /tests/scorecard/\n")
	return b.Bytes()
}

// kustomize builds a kustomization with the repository's pinned kustomize.
func kustomize(root, dir string) ([]*unstructured.Unstructured, error) {
	cmd := exec.Command("go", "tool", "-modfile="+filepath.Join(root, "hack/tools/go.mod"), "kustomize", "build", filepath.Join(root, dir))
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w\n%s", dir, err, stderr.String())
	}
	var objs []*unstructured.Unstructured
	for _, doc := range strings.Split(string(out), "\n---\n") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		m := map[string]any{}
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			return nil, err
		}
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
	return objs, nil
}

func convert(u *unstructured.Unstructured, into any) error {
	b, err := json.Marshal(u.Object)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, into)
}

func marshal(v any) ([]byte, error) { return yaml.Marshal(v) }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// manifestName names a bundle file as operator-sdk does:
// <name>_<group>_<version>_<kind>.yaml (group left out for the core group).
func manifestName(u *unstructured.Unstructured) string {
	gvk := u.GroupVersionKind()
	if gvk.Kind == "CustomResourceDefinition" {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		_ = convert(u, crd)
		return crd.Spec.Group + "_" + crd.Spec.Names.Plural + ".yaml"
	}
	parts := []string{u.GetName()}
	if gvk.Group != "" {
		parts = append(parts, gvk.Group)
	}
	parts = append(parts, gvk.Version, strings.ToLower(gvk.Kind))
	return strings.Join(parts, "_") + ".yaml"
}

// standalone says whether an object goes into the bundle as a manifest of
// its own. The CSV takes the Deployment, the ServiceAccount's RBAC and the
// webhooks; OLM provides the webhook Service and certificates; the samples
// become alm-examples; the Namespace is the one OLM installs into.
//
// The ServiceMonitor and PrometheusRule stay out: OLM fails the whole
// InstallPlan when a bundle object's CRD is not served, so a bundle with
// them installs only on clusters running prometheus-operator. They ship as
// config/manifests/monitoring, applied into the install namespace by those
// who have prometheus-operator (docs/install.md).
func standalone(u *unstructured.Unstructured, bound map[string]bool) bool {
	switch u.GetKind() {
	case "CustomResourceDefinition", "PodDisruptionBudget":
		return true
	case "Service":
		return u.GetName() != webhookService
	case "ClusterRole":
		return !bound[u.GetName()]
	}
	return false
}

const webhookService = "kubeforge-webhook-service"

// rbacScopeAnnotation marks the manager's two roles (hack/rbacsplit):
// "namespaced" or "cluster".
const rbacScopeAnnotation = "kubeforge.io/rbac-scope"

// buildCSV completes the base CSV; it also returns the (Cluster)Roles bound
// to the manager's ServiceAccount, which go into the CSV, not the bundle.
func buildCSV(o Options, objs []*unstructured.Unstructured) (*v1alpha1.ClusterServiceVersion, map[string]bool, error) {
	var csv *v1alpha1.ClusterServiceVersion
	crds := map[string]*apiextensionsv1.CustomResourceDefinition{}
	var crdOrder []string
	var samples []map[string]any
	var deployment *appsv1.Deployment
	clusterRoles, roles := map[string][]rbacv1.PolicyRule{}, map[string][]rbacv1.PolicyRule{}
	namespacedRoles := map[string]bool{}
	var clusterBindings, bindings []rbacv1.RoleBinding
	var mutating []admissionregistrationv1.MutatingWebhook
	var validating []admissionregistrationv1.ValidatingWebhook

	for _, u := range objs {
		var err error
		switch u.GetKind() {
		case "ClusterServiceVersion":
			csv = &v1alpha1.ClusterServiceVersion{}
			err = convert(u, csv)
		case "CustomResourceDefinition":
			crd := &apiextensionsv1.CustomResourceDefinition{}
			err = convert(u, crd)
			crds[crd.Name] = crd
			crdOrder = append(crdOrder, crd.Name)
		case "Deployment":
			deployment = &appsv1.Deployment{}
			err = convert(u, deployment)
		case "ClusterRole":
			r := &rbacv1.ClusterRole{}
			err = convert(u, r)
			clusterRoles[r.Name] = r.Rules
			namespacedRoles[r.Name] = r.Annotations[rbacScopeAnnotation] == "namespaced"
		case "Role":
			r := &rbacv1.Role{}
			err = convert(u, r)
			roles[r.Name] = r.Rules
		case "ClusterRoleBinding":
			b := &rbacv1.ClusterRoleBinding{}
			err = convert(u, b)
			clusterBindings = append(clusterBindings, rbacv1.RoleBinding{ObjectMeta: b.ObjectMeta, Subjects: b.Subjects, RoleRef: b.RoleRef})
		case "RoleBinding":
			b := &rbacv1.RoleBinding{}
			err = convert(u, b)
			bindings = append(bindings, *b)
		case "MutatingWebhookConfiguration":
			c := &admissionregistrationv1.MutatingWebhookConfiguration{}
			err = convert(u, c)
			mutating = append(mutating, c.Webhooks...)
		case "ValidatingWebhookConfiguration":
			c := &admissionregistrationv1.ValidatingWebhookConfiguration{}
			err = convert(u, c)
			validating = append(validating, c.Webhooks...)
		default:
			if strings.HasSuffix(u.GroupVersionKind().Group, ".kubeforge.io") {
				s := u.DeepCopy()
				s.SetNamespace("")
				samples = append(samples, s.Object)
			}
		}
		if err != nil {
			return nil, nil, fmt.Errorf("reading %s %s: %w", u.GetKind(), u.GetName(), err)
		}
	}
	if csv == nil || deployment == nil {
		return nil, nil, fmt.Errorf("config/manifests has no ClusterServiceVersion base or no Deployment")
	}
	sa := deployment.Spec.Template.Spec.ServiceAccountName

	csv.Name = Package + ".v" + o.Version
	csv.Namespace = "placeholder"
	v, err := semver.Parse(o.Version)
	if err != nil {
		return nil, nil, fmt.Errorf("version %q: %w", o.Version, err)
	}
	csv.Spec.Version = version.OperatorVersion{Version: v}
	csv.Spec.Replaces = o.Replaces
	csv.Annotations["containerImage"] = o.Image
	examples, err := json.MarshalIndent(samples, "", "  ")
	if err != nil {
		return nil, nil, err
	}
	csv.Annotations["alm-examples"] = string(examples)

	icon, err := os.ReadFile(filepath.Join(o.Root, "config/manifests/icon.svg"))
	if err != nil {
		return nil, nil, err
	}
	csv.Spec.Icon = []v1alpha1.Icon{{Data: base64.StdEncoding.EncodeToString(icon), MediaType: "image/svg+xml"}}

	// The install strategy: the Deployment, its image set.
	for i := range deployment.Spec.Template.Spec.Containers {
		if deployment.Spec.Template.Spec.Containers[i].Name == "manager" {
			deployment.Spec.Template.Spec.Containers[i].Image = o.Image
		}
	}
	csv.Spec.InstallStrategy = v1alpha1.NamedInstallStrategy{
		StrategyName: v1alpha1.InstallStrategyNameDeployment,
		StrategySpec: v1alpha1.StrategyDetailsDeployment{
			DeploymentSpecs: []v1alpha1.StrategyDeploymentSpec{{Name: deployment.Name, Label: deployment.Labels, Spec: deployment.Spec}},
		},
	}
	// Permissions: what RoleBindings give the ServiceAccount (leader
	// election), and the ClusterRoles of namespaced resources only
	// (hack/rbacsplit's "namespaced" role), are permissions, which OLM
	// grants in the operator's namespace and each target namespace (and
	// cluster-wide for AllNamespaces); what the other ClusterRoleBindings
	// give is cluster-wide in every mode.
	boundRoles := map[string]bool{}
	var clusterRules, rules []rbacv1.PolicyRule
	for _, b := range clusterBindings {
		if boundTo(b, sa) {
			if namespacedRoles[b.RoleRef.Name] {
				rules = append(rules, clusterRoles[b.RoleRef.Name]...)
			} else {
				clusterRules = append(clusterRules, clusterRoles[b.RoleRef.Name]...)
			}
			boundRoles[b.RoleRef.Name] = true
		}
	}
	for _, b := range bindings {
		if boundTo(b, sa) {
			if b.RoleRef.Kind == "ClusterRole" {
				rules = append(rules, clusterRoles[b.RoleRef.Name]...)
			} else {
				rules = append(rules, roles[b.RoleRef.Name]...)
			}
			boundRoles[b.RoleRef.Name] = true
		}
	}
	csv.Spec.InstallStrategy.StrategySpec.ClusterPermissions = []v1alpha1.StrategyDeploymentPermissions{{ServiceAccountName: sa, Rules: clusterRules}}
	csv.Spec.InstallStrategy.StrategySpec.Permissions = []v1alpha1.StrategyDeploymentPermissions{{ServiceAccountName: sa, Rules: rules}}

	// Webhooks: OLM makes the Service, certificate and configurations.
	csv.Spec.WebhookDefinitions = nil
	for _, w := range mutating {
		d := webhookDescription(w.Name, v1alpha1.MutatingAdmissionWebhook, deployment.Name, w.ClientConfig, w.Rules, w.AdmissionReviewVersions)
		d.FailurePolicy, d.MatchPolicy, d.ObjectSelector, d.SideEffects, d.TimeoutSeconds, d.ReinvocationPolicy = w.FailurePolicy, w.MatchPolicy, w.ObjectSelector, w.SideEffects, w.TimeoutSeconds, w.ReinvocationPolicy
		csv.Spec.WebhookDefinitions = append(csv.Spec.WebhookDefinitions, d)
	}
	for _, w := range validating {
		d := webhookDescription(w.Name, v1alpha1.ValidatingAdmissionWebhook, deployment.Name, w.ClientConfig, w.Rules, w.AdmissionReviewVersions)
		d.FailurePolicy, d.MatchPolicy, d.ObjectSelector, d.SideEffects, d.TimeoutSeconds = w.FailurePolicy, w.MatchPolicy, w.ObjectSelector, w.SideEffects, w.TimeoutSeconds
		csv.Spec.WebhookDefinitions = append(csv.Spec.WebhookDefinitions, d)
	}
	sort.SliceStable(csv.Spec.WebhookDefinitions, func(i, j int) bool {
		return csv.Spec.WebhookDefinitions[i].GenerateName < csv.Spec.WebhookDefinitions[j].GenerateName
	})

	// Owned CRDs: the base names them and what they create; the rest comes
	// from each CRD's storage version schema.
	base := map[string]v1alpha1.CRDDescription{}
	for _, d := range csv.Spec.CustomResourceDefinitions.Owned {
		base[d.Name] = d
	}
	csv.Spec.CustomResourceDefinitions.Owned = nil
	for _, name := range crdOrder {
		crd := crds[name]
		d := base[name]
		d.Name, d.Kind = crd.Name, crd.Spec.Names.Kind
		if d.DisplayName == "" {
			d.DisplayName = crd.Spec.Names.Kind
		}
		for _, v := range crd.Spec.Versions {
			if !v.Storage {
				continue
			}
			d.Version = v.Name
			root := v.Schema.OpenAPIV3Schema
			d.Description = firstSentences(root.Description)
			d.SpecDescriptors, d.StatusDescriptors = nil, nil
			if spec, ok := root.Properties["spec"]; ok {
				for _, p := range sortedKeys(spec.Properties) {
					d.SpecDescriptors = append(d.SpecDescriptors, v1alpha1.SpecDescriptor{
						Path: p, DisplayName: displayName(p), Description: firstSentences(spec.Properties[p].Description),
					})
				}
			}
			if status, ok := root.Properties["status"]; ok {
				for _, p := range sortedKeys(status.Properties) {
					sd := v1alpha1.StatusDescriptor{Path: p, DisplayName: displayName(p), Description: firstSentences(status.Properties[p].Description)}
					switch p {
					case "conditions":
						sd.XDescriptors = []string{"urn:alm:descriptor:io.kubernetes.conditions"}
					case "phase":
						sd.XDescriptors = []string{"urn:alm:descriptor:io.kubernetes.phase"}
					}
					d.StatusDescriptors = append(d.StatusDescriptors, sd)
				}
			}
		}
		csv.Spec.CustomResourceDefinitions.Owned = append(csv.Spec.CustomResourceDefinitions.Owned, d)
	}
	sort.SliceStable(csv.Spec.CustomResourceDefinitions.Owned, func(i, j int) bool {
		return csv.Spec.CustomResourceDefinitions.Owned[i].Name < csv.Spec.CustomResourceDefinitions.Owned[j].Name
	})
	return csv, boundRoles, nil
}

func boundTo(b rbacv1.RoleBinding, sa string) bool {
	for _, s := range b.Subjects {
		if s.Kind == "ServiceAccount" && s.Name == sa {
			return true
		}
	}
	return false
}

func webhookDescription(name string, t v1alpha1.WebhookAdmissionType, deployment string, cc admissionregistrationv1.WebhookClientConfig,
	rules []admissionregistrationv1.RuleWithOperations, versions []string) v1alpha1.WebhookDescription {
	d := v1alpha1.WebhookDescription{
		GenerateName: name, Type: t, DeploymentName: deployment, ContainerPort: 443,
		TargetPort: new(intstr.FromInt32(WebhookPort)), Rules: rules, AdmissionReviewVersions: versions,
	}
	if cc.Service != nil && cc.Service.Path != nil {
		d.WebhookPath = new(*cc.Service.Path)
	}
	return d
}

// firstSentences is a description up to its first paragraph.
func firstSentences(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, "\n\n"); i > 0 {
		s = s[:i]
	}
	return strings.Join(strings.Fields(s), " ")
}

// displayName turns a field name into words: readyReplicas → Ready Replicas.
func displayName(field string) string {
	var b strings.Builder
	for i, r := range field {
		if i == 0 {
			b.WriteRune(unicode.ToUpper(r))
			continue
		}
		if unicode.IsUpper(r) {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func mustDecode(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}
