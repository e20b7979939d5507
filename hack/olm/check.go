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

package olm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/operator-framework/api/pkg/validation"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/pkg/lib/bundle"
	"github.com/operator-framework/operator-registry/pkg/lib/config"
	"github.com/sirupsen/logrus"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// K8sVersion is the newest Kubernetes kubeforge supports (what it is
// built and tested against), for the deprecated-API checks.
const K8sVersion = "1.37"

// Validators are what `operator-sdk bundle validate
// --select-optional suite=operatorframework` runs.
var Validators = validation.DefaultBundleValidators.WithValidators(
	validation.BundleValidator,
	validation.ClusterServiceVersionValidator,
	validation.CustomResourceDefinitionValidator,
	validation.OperatorHubV2Validator,
	validation.StandardCapabilitiesValidator,
	validation.StandardCategoriesValidator,
	validation.AlphaDeprecatedAPIsValidator,
	validation.GoodPracticesValidator,
)

// CheckFormat runs operator-registry's bundle format and content checks
// (what `opm alpha bundle validate` does).
func CheckFormat(bundleDir string) []string {
	log := logrus.New()
	log.SetOutput(io.Discard)
	v := bundle.NewImageValidator(nil, logrus.NewEntry(log))
	var problems []string
	if err := v.ValidateBundleFormat(bundleDir); err != nil {
		problems = append(problems, "bundle format: "+err.Error())
	}
	if err := v.ValidateBundleContent(filepath.Join(bundleDir, ManifestsDir)); err != nil {
		problems = append(problems, "bundle content: "+err.Error())
	}
	return problems
}

// builtinGroups are the API groups every cluster OLM runs on serves.
var builtinGroups = map[string]bool{
	"": true, "apps": true, "batch": true, "policy": true, "rbac.authorization.k8s.io": true,
	"networking.k8s.io": true, "scheduling.k8s.io": true, "admissionregistration.k8s.io": true,
	"apiextensions.k8s.io": true, "operators.coreos.com": true,
}

// CheckInstallableAnywhere finds bundle objects whose kind only some
// clusters serve: OLM fails the whole InstallPlan when one of them is
// unknown (a ServiceMonitor on a cluster without prometheus-operator), so
// the bundle may carry only built-in kinds and the kinds of its own CRDs.
func CheckInstallableAnywhere(bundleDir string) []string {
	files, err := filepath.Glob(filepath.Join(bundleDir, ManifestsDir, "*.yaml"))
	if err != nil {
		return []string{err.Error()}
	}
	type object struct{ file, apiVersion, kind string }
	var objects []object
	own := map[string]bool{}
	for _, f := range files {
		var u struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Spec       struct {
				Group string `json:"group"`
			} `json:"spec"`
		}
		if err := readYAML(f, &u); err != nil {
			return []string{err.Error()}
		}
		if u.Kind == "CustomResourceDefinition" {
			own[u.Spec.Group] = true
		}
		objects = append(objects, object{filepath.Base(f), u.APIVersion, u.Kind})
	}
	var problems []string
	for _, o := range objects {
		group := ""
		if i := strings.LastIndex(o.apiVersion, "/"); i >= 0 {
			group = o.apiVersion[:i]
		}
		if !builtinGroups[group] && !own[group] {
			problems = append(problems, fmt.Sprintf("%s: a %s (%s) installs only where its CRD is served; OLM fails the InstallPlan elsewhere", o.file, o.kind, o.apiVersion))
		}
	}
	return problems
}

// CheckValidators loads the bundle root (so the channel checks see the
// annotations) and returns every error and warning of the validators.
func CheckValidators(bundleDir string) []string {
	b, err := manifests.GetBundleFromDir(bundleDir)
	if err != nil {
		return []string{"loading the bundle: " + err.Error()}
	}
	var problems []string
	for _, r := range Validators.Validate(b, map[string]string{"k8s-version": K8sVersion}) {
		for _, e := range r.Errors {
			problems = append(problems, fmt.Sprintf("error: %s: %s", r.Name, e.Error()))
		}
		for _, w := range r.Warnings {
			problems = append(problems, fmt.Sprintf("warning: %s: %s", r.Name, w.Error()))
		}
	}
	return problems
}

func loadBundle(bundleDir string) (*v1alpha1.ClusterServiceVersion, map[string]*apiextensionsv1.CustomResourceDefinition, error) {
	raw, err := os.ReadFile(filepath.Join(bundleDir, CSVFile))
	if err != nil {
		return nil, nil, err
	}
	csv := &v1alpha1.ClusterServiceVersion{}
	if err := yaml.Unmarshal(raw, csv); err != nil {
		return nil, nil, err
	}
	crds, err := readCRDs(filepath.Join(bundleDir, ManifestsDir))
	return csv, crds, err
}

func readCRDs(dir string) (map[string]*apiextensionsv1.CustomResourceDefinition, error) {
	crds := map[string]*apiextensionsv1.CustomResourceDefinition{}
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(raw, crd); err != nil || crd.Kind != "CustomResourceDefinition" {
			continue
		}
		crds[crd.Name] = crd
	}
	return crds, nil
}

// CheckScorecard replicates the scorecard's static OLM tests: every spec
// key of each alm-examples object is in its CRD's schema; every owned CRD
// lists the resources it creates; every top-level spec key has a
// specDescriptor; a kind with status has statusDescriptors.
func CheckScorecard(bundleDir string) []string {
	csv, crds, err := loadBundle(bundleDir)
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	owned := map[string]v1alpha1.CRDDescription{}
	for _, d := range csv.Spec.CustomResourceDefinitions.Owned {
		owned[d.Kind] = d
		if len(d.Resources) == 0 {
			problems = append(problems, fmt.Sprintf("owned CRD %s lists no resources", d.Name))
		}
		crd := crds[d.Name]
		if crd == nil {
			problems = append(problems, fmt.Sprintf("owned CRD %s is not in the bundle", d.Name))
			continue
		}
		schema := storageSchema(crd)
		has := map[string]bool{}
		for _, s := range d.SpecDescriptors {
			has[s.Path] = true
		}
		for key := range schema.Properties["spec"].Properties {
			if !has[key] {
				problems = append(problems, fmt.Sprintf("%s: spec.%s has no specDescriptor", d.Kind, key))
			}
		}
		if _, ok := schema.Properties["status"]; ok && len(d.StatusDescriptors) == 0 {
			problems = append(problems, fmt.Sprintf("%s has a status but no statusDescriptors", d.Kind))
		}
	}
	for name := range crds {
		found := false
		for _, d := range csv.Spec.CustomResourceDefinitions.Owned {
			found = found || d.Name == name
		}
		if !found {
			problems = append(problems, fmt.Sprintf("CRD %s is in the bundle but not owned by the CSV", name))
		}
	}
	var examples []map[string]any
	if err := json.Unmarshal([]byte(csv.Annotations["alm-examples"]), &examples); err != nil {
		return append(problems, "alm-examples is not a JSON list: "+err.Error())
	}
	for _, ex := range examples {
		kind, _ := ex["kind"].(string)
		d, ok := owned[kind]
		if !ok {
			problems = append(problems, fmt.Sprintf("alm-examples has a %s, which the CSV does not own", kind))
			continue
		}
		crd := crds[d.Name]
		if crd == nil {
			continue
		}
		spec, _ := ex["spec"].(map[string]any)
		s := storageSchema(crd).Properties["spec"]
		problems = append(problems, unknownFields(kind+" example spec", spec, &s)...)
	}
	return problems
}

func storageSchema(crd *apiextensionsv1.CustomResourceDefinition) *apiextensionsv1.JSONSchemaProps {
	for _, v := range crd.Spec.Versions {
		if v.Storage && v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
			return v.Schema.OpenAPIV3Schema
		}
	}
	return &apiextensionsv1.JSONSchemaProps{}
}

// unknownFields lists the keys of v that schema does not know, at any depth.
func unknownFields(path string, v any, schema *apiextensionsv1.JSONSchemaProps) []string {
	if schema == nil || schema.XPreserveUnknownFields != nil && *schema.XPreserveUnknownFields {
		return nil
	}
	var out []string
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if p, ok := schema.Properties[k]; ok {
				out = append(out, unknownFields(path+"."+k, val, &p)...)
			} else if schema.AdditionalProperties != nil && schema.AdditionalProperties.Schema != nil {
				out = append(out, unknownFields(path+"."+k, val, schema.AdditionalProperties.Schema)...)
			} else if schema.AdditionalProperties == nil || !schema.AdditionalProperties.Allows {
				out = append(out, fmt.Sprintf("%s.%s is not in the CRD schema", path, k))
			}
		}
	case []any:
		if schema.Items != nil && schema.Items.Schema != nil {
			for i, val := range x {
				out = append(out, unknownFields(fmt.Sprintf("%s[%d]", path, i), val, schema.Items.Schema)...)
			}
		}
	}
	return out
}

// CheckSync checks that the bundle says what config/ says: the CRDs,
// the manager's cluster permissions, the webhooks, the CSV's name and
// image, and bundle.Dockerfile's labels. version is the Makefile's.
func CheckSync(root, bundleDir, dockerfile, version string) []string {
	const stale = " (the bundle is stale: run `make bundle`)"
	csv, crds, err := loadBundle(bundleDir)
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	config, err := readCRDs(filepath.Join(root, "config/crd/bases"))
	if err != nil {
		return []string{err.Error()}
	}
	for name, want := range config {
		got := crds[name]
		switch {
		case got == nil:
			problems = append(problems, "CRD "+name+" of config/crd is missing from the bundle"+stale)
		case got.Name != want.Name || !reflect.DeepEqual(got.Spec, want.Spec):
			problems = append(problems, "CRD "+name+" differs from config/crd/bases"+stale)
		}
	}
	if len(crds) != len(config) {
		problems = append(problems, fmt.Sprintf("the bundle has %d CRDs, config/crd/bases %d%s", len(crds), len(config), stale))
	}

	// Cluster permissions: the cluster-scoped role and the metrics auth
	// role; permissions: the namespaced role and leader election's.
	for _, want := range []struct {
		what  string
		files []string
		got   []v1alpha1.StrategyDeploymentPermissions
	}{
		{"clusterPermissions", []string{"config/rbac/cluster_role.yaml", "config/rbac/metrics_auth_role.yaml"}, csv.Spec.InstallStrategy.StrategySpec.ClusterPermissions},
		{"permissions", []string{"config/rbac/role.yaml", "config/rbac/leader_election_role.yaml"}, csv.Spec.InstallStrategy.StrategySpec.Permissions},
	} {
		var wantRules []rbacv1.PolicyRule
		for _, f := range want.files {
			r := &rbacv1.ClusterRole{}
			if err := readYAML(filepath.Join(root, f), r); err != nil {
				return append(problems, err.Error())
			}
			wantRules = append(wantRules, r.Rules...)
		}
		var gotRules []rbacv1.PolicyRule
		for _, p := range want.got {
			gotRules = append(gotRules, p.Rules...)
		}
		if !sameRules(gotRules, wantRules) {
			problems = append(problems, "the CSV's "+want.what+" differ from config/rbac's rules"+stale)
		}
	}

	hooks, err := readWebhooks(filepath.Join(root, "config/webhook/manifests.yaml"))
	if err != nil {
		return append(problems, err.Error())
	}
	got := map[string]v1alpha1.WebhookDescription{}
	for _, d := range csv.Spec.WebhookDefinitions {
		got[d.GenerateName] = d
	}
	for name, want := range hooks {
		d, ok := got[name]
		switch {
		case !ok:
			problems = append(problems, "webhook "+name+" of config/webhook is missing from the CSV"+stale)
		case d.WebhookPath == nil || *d.WebhookPath != want.path || !reflect.DeepEqual(d.Rules, want.rules) || string(d.Type) != want.kind:
			problems = append(problems, "webhook "+name+" differs from config/webhook"+stale)
		}
	}
	if len(got) != len(hooks) {
		problems = append(problems, fmt.Sprintf("the CSV defines %d webhooks, config/webhook %d%s", len(got), len(hooks), stale))
	}

	if want := Package + ".v" + csv.Spec.Version.String(); csv.Name != want {
		problems = append(problems, fmt.Sprintf("the CSV is named %s, not %s", csv.Name, want))
	}
	if csv.Spec.Version.String() != version {
		problems = append(problems, fmt.Sprintf("the CSV's version is %s, the Makefile's %s%s", csv.Spec.Version.String(), version, stale))
	}
	image := ""
	for _, d := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		for _, c := range d.Spec.Template.Spec.Containers {
			if c.Name == "manager" {
				image = c.Image
			}
		}
	}
	if image == "" || csv.Annotations["containerImage"] != image {
		problems = append(problems, fmt.Sprintf("containerImage %q is not the manager's image %q", csv.Annotations["containerImage"], image))
	}

	var annotations struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := readYAML(filepath.Join(bundleDir, AnnotationFile), &annotations); err != nil {
		return append(problems, err.Error())
	}
	labels, err := dockerfileLabels(dockerfile)
	if err != nil {
		return append(problems, err.Error())
	}
	if !reflect.DeepEqual(labels, annotations.Annotations) {
		problems = append(problems, "bundle.Dockerfile's labels differ from bundle/metadata/annotations.yaml"+stale)
	}
	return problems
}

type webhook struct {
	kind, path string
	rules      []admissionregistrationv1.RuleWithOperations
}

func readWebhooks(path string) (map[string]webhook, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]webhook{}
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		var m admissionregistrationv1.MutatingWebhookConfiguration
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			return nil, err
		}
		switch m.Kind {
		case "MutatingWebhookConfiguration":
			for _, w := range m.Webhooks {
				out[w.Name] = webhook{string(v1alpha1.MutatingAdmissionWebhook), *w.ClientConfig.Service.Path, w.Rules}
			}
		case "ValidatingWebhookConfiguration":
			var v admissionregistrationv1.ValidatingWebhookConfiguration
			if err := yaml.Unmarshal([]byte(doc), &v); err != nil {
				return nil, err
			}
			for _, w := range v.Webhooks {
				out[w.Name] = webhook{string(v1alpha1.ValidatingAdmissionWebhook), *w.ClientConfig.Service.Path, w.Rules}
			}
		}
	}
	return out, nil
}

func readYAML(path string, into any) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return yaml.Unmarshal(raw, into)
}

func dockerfileLabels(path string) (map[string]string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	labels := map[string]string{}
	s := bufio.NewScanner(bytes.NewReader(raw))
	for s.Scan() {
		line := strings.TrimSpace(s.Text())
		if rest, ok := strings.CutPrefix(line, "LABEL "); ok {
			k, v, _ := strings.Cut(rest, "=")
			labels[k] = v
		}
	}
	return labels, s.Err()
}

// CheckCatalog validates the file-based catalog as `opm validate` does and
// checks that its channel's head is the bundle's CSV.
func CheckCatalog(catalogDir, csvName string) []string {
	var problems []string
	if err := config.Validate(context.Background(), os.DirFS(catalogDir)); err != nil {
		problems = append(problems, "opm validate: "+err.Error())
	}
	cfg, err := declcfg.LoadFS(context.Background(), os.DirFS(catalogDir))
	if err != nil {
		return append(problems, err.Error())
	}
	found := false
	for _, ch := range cfg.Channels {
		if ch.Package != Package {
			continue
		}
		// The head is the entry nothing replaces or skips.
		replaced := map[string]bool{}
		for _, e := range ch.Entries {
			replaced[e.Replaces] = true
			for _, s := range e.Skips {
				replaced[s] = true
			}
		}
		for _, e := range ch.Entries {
			if !replaced[e.Name] && e.Name == csvName {
				found = true
			}
		}
	}
	if !found {
		problems = append(problems, "the catalog's channel head is not "+csvName+" (run `make catalog`)")
	}
	return problems
}

// sameRules reports whether two lists hold the same rules, in any order.
func sameRules(a, b []rbacv1.PolicyRule) bool {
	if len(a) != len(b) {
		return false
	}
	used := make([]bool, len(b))
	for _, r := range a {
		found := false
		for j, s := range b {
			if !used[j] && reflect.DeepEqual(r, s) {
				used[j], found = true, true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
