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

// Command crddocs completes the CRDs that controller-gen writes: it gives
// the fields of embedded object metadata (a pod template's labels, say) the
// descriptions that controller-gen leaves out, so that kubectl explain has
// text for every field. It rewrites the given files in place.
package main

import (
	"bytes"
	"fmt"
	"os"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// metadataDocs are the descriptions of ObjectMeta's fields that
// controller-gen keeps in embedded metadata (crd:generateEmbeddedObjectMeta).
var metadataDocs = map[string]string{
	"name":        "name of the object, unique within its namespace. See https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names",
	"namespace":   "namespace of the object. See https://kubernetes.io/docs/concepts/overview/working-with-objects/namespaces",
	"labels":      "labels: string keys and values to organise and select objects. See https://kubernetes.io/docs/concepts/overview/working-with-objects/labels",
	"annotations": "annotations: string keys and values that tools store with the object; not used to select it. See https://kubernetes.io/docs/concepts/overview/working-with-objects/annotations",
	"finalizers":  "finalizers: names of controllers that must act before the object is deleted. See https://kubernetes.io/docs/concepts/overview/working-with-objects/finalizers",
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: crddocs CRD.yaml...")
		os.Exit(2)
	}
	for _, f := range os.Args[1:] {
		if err := complete(f); err != nil {
			fmt.Fprintf(os.Stderr, "crddocs: %s: %v\n", f, err)
			os.Exit(1)
		}
	}
}

func complete(file string) error {
	in, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(in, &crd); err != nil {
		return err
	}
	for i := range crd.Spec.Versions {
		if s := crd.Spec.Versions[i].Schema; s != nil && s.OpenAPIV3Schema != nil {
			for name, p := range s.OpenAPIV3Schema.Properties {
				if name != "metadata" { // the root metadata is the API server's own
					walk(&p)
					s.OpenAPIV3Schema.Properties[name] = p
				}
			}
		}
	}
	out, err := yaml.Marshal(&crd)
	if err != nil {
		return err
	}
	// controller-gen writes no status, and starts each file with a separator.
	if i := bytes.Index(out, []byte("\nstatus:\n")); i >= 0 {
		out = out[:i+1]
	}
	return os.WriteFile(file, append([]byte("---\n"), out...), 0o644)
}

func walk(s *apiextensionsv1.JSONSchemaProps) {
	for name, p := range s.Properties {
		if name == "metadata" {
			for field, doc := range metadataDocs {
				if mp, ok := p.Properties[field]; ok && mp.Description == "" {
					mp.Description = doc
					p.Properties[field] = mp
				}
			}
		}
		walk(&p)
		s.Properties[name] = p
	}
	if s.Items != nil && s.Items.Schema != nil {
		walk(s.Items.Schema)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		walk(s.AdditionalProperties.Schema)
	}
}
