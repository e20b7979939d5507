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
	"bytes"
	"fmt"
	"os"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/property"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// renderCatalog writes the file-based catalog: the package, its channel
// with this bundle as head, and the bundle as `opm render` describes one
// (package, GVKs, CSV metadata). With o.Previous, the bundles and channel
// entries of that catalog are kept and this bundle is added to them.
func renderCatalog(o Options, csv *v1alpha1.ClusterServiceVersion, objs []*unstructured.Unstructured) ([]byte, error) {
	bundleName := csv.Name
	props := []property.Property{property.MustBuildPackage(Package, o.Version)}
	for _, u := range objs {
		if u.GetKind() != "CustomResourceDefinition" {
			continue
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := convert(u, crd); err != nil {
			return nil, err
		}
		for _, v := range crd.Spec.Versions {
			if v.Served {
				props = append(props, property.MustBuildGVK(crd.Spec.Group, v.Name, crd.Spec.Names.Kind))
			}
		}
	}
	props = append(props, property.MustBuildCSVMetadata(*csv))
	cfg := declcfg.DeclarativeConfig{
		Packages: []declcfg.Package{{
			Schema: declcfg.SchemaPackage, Name: Package, DefaultChannel: Channel,
			Description: csv.Annotations["description"],
			Icon:        &declcfg.Icon{Data: mustDecode(csv.Spec.Icon[0].Data), MediaType: csv.Spec.Icon[0].MediaType},
		}},
		Channels: []declcfg.Channel{{
			Schema: declcfg.SchemaChannel, Package: Package, Name: Channel,
			Entries: []declcfg.ChannelEntry{{Name: bundleName}},
		}},
		Bundles: []declcfg.Bundle{{
			Schema: declcfg.SchemaBundle, Name: bundleName, Package: Package, Image: o.BundleImage,
			Properties:    props,
			RelatedImages: []declcfg.RelatedImage{{Name: "", Image: o.BundleImage}, {Name: "manager", Image: o.Image}},
		}},
	}
	cfg.Channels[0].Entries[0].Replaces = o.Replaces
	if o.Previous != "" {
		if err := keepPrevious(&cfg, o.Previous); err != nil {
			return nil, err
		}
	}
	var b bytes.Buffer
	if err := declcfg.WriteYAML(cfg, &b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// keepPrevious adds the bundles and channel entries of the catalog in file
// to cfg, the new bundle's own entry last. A previous bundle of the same
// name is replaced by the new one.
func keepPrevious(cfg *declcfg.DeclarativeConfig, file string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	prev, err := declcfg.LoadReader(f)
	if err != nil {
		return fmt.Errorf("previous catalog %s: %w", file, err)
	}
	head := cfg.Bundles[0].Name
	var bundles []declcfg.Bundle
	for _, b := range prev.Bundles {
		if b.Package == Package && b.Name != head {
			bundles = append(bundles, b)
		}
	}
	cfg.Bundles = append(bundles, cfg.Bundles...)
	for _, ch := range prev.Channels {
		if ch.Package != Package {
			continue
		}
		var entries []declcfg.ChannelEntry
		for _, e := range ch.Entries {
			if e.Name != head {
				entries = append(entries, e)
			}
		}
		if ch.Name == Channel {
			cfg.Channels[0].Entries = append(entries, cfg.Channels[0].Entries...)
			continue
		}
		ch.Entries = entries
		cfg.Channels = append(cfg.Channels, ch)
	}
	return nil
}
