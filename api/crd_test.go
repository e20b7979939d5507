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

// Package api_test checks what every kubeforge CRD must offer its users,
// whatever the kind.
package api_test

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubeforge/kubeforge/internal/test/testenv"
)

func loadCRDs(t *testing.T) []apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "config", "crd", "bases", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs in config/crd/bases: %v", err)
	}
	var crds []apiextensionsv1.CustomResourceDefinition
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.UnmarshalStrict(b, &crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		crds = append(crds, crd)
	}
	return crds
}

const rootMetadata = "<root>.metadata"

// undocumented lists the schema properties below path that have no
// description, i.e. that `kubectl explain` would show without text.
func undocumented(s *apiextensionsv1.JSONSchemaProps, path string) []string {
	var missing []string
	names := make([]string, 0, len(s.Properties))
	for name := range s.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		p := s.Properties[name]
		child := path + "." + name
		if child == rootMetadata {
			continue // the API server documents the root metadata itself
		}
		if p.Description == "" {
			missing = append(missing, child)
		}
		missing = append(missing, undocumented(&p, child)...)
	}
	if s.Items != nil && s.Items.Schema != nil {
		missing = append(missing, undocumented(s.Items.Schema, path+"[]")...)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		missing = append(missing, undocumented(s.AdditionalProperties.Schema, path+"{}")...)
	}
	return missing
}

func TestEveryFieldIsDocumented(t *testing.T) {
	for _, crd := range loadCRDs(t) {
		for _, v := range crd.Spec.Versions {
			schema := v.Schema.OpenAPIV3Schema
			if schema.Description == "" {
				t.Errorf("%s %s: the kind has no description", crd.Name, v.Name)
			}
			for _, path := range undocumented(schema, "<root>") {
				t.Errorf("%s %s: %s has no description for kubectl explain", crd.Name, v.Name, path)
			}
		}
	}
}

func TestEveryKindIsListedAndNamed(t *testing.T) {
	for _, crd := range loadCRDs(t) {
		n := crd.Spec.Names
		if len(n.ShortNames) == 0 {
			t.Errorf("%s has no short name", crd.Name)
		}
		found := false
		for _, c := range n.Categories {
			found = found || c == "kubeforge"
		}
		if !found {
			t.Errorf("%s is not in the kubeforge category, so `kubectl get kubeforge` misses it", crd.Name)
		}
		for _, v := range crd.Spec.Versions {
			if v.Subresources == nil || v.Subresources.Status == nil {
				t.Errorf("%s %s has no status subresource", crd.Name, v.Name)
			}
			if len(v.AdditionalPrinterColumns) == 0 {
				t.Errorf("%s %s has no printer columns", crd.Name, v.Name)
			}
		}
	}
}
