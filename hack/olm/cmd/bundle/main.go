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

// Command bundle writes bundle/, bundle.Dockerfile and catalog/ from
// config/ (`make bundle`, `make catalog`).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kubeforge/kubeforge/hack/olm"
)

func main() {
	var o olm.Options
	flag.StringVar(&o.Root, "root", "../..", "The repository root.")
	flag.StringVar(&o.Version, "version", "", "The operator's version, e.g. 0.1.0.")
	flag.StringVar(&o.Image, "image", "", "The manager's image.")
	flag.StringVar(&o.BundleImage, "bundle-image", "", "The bundle's image, named in the catalog.")
	flag.StringVar(&o.Replaces, "replaces", "", "The CSV this version upgrades, e.g. kubeforge.v0.1.0 (spec.replaces and the channel entry).")
	flag.StringVar(&o.Previous, "previous-catalog", "", "A catalog.yaml whose bundles and channel entries the new catalog keeps.")
	out := flag.String("out", "", "The directory for bundle/, bundle.Dockerfile and catalog/ (default: the repository root).")
	flag.Parse()
	if o.Version == "" || o.Image == "" || o.BundleImage == "" {
		fmt.Fprintln(os.Stderr, "bundle: --version, --image and --bundle-image are required")
		os.Exit(2)
	}
	root, err := filepath.Abs(o.Root)
	if err == nil {
		o.Root = root
		if *out == "" {
			*out = root
		}
		var files olm.Files
		if files, err = olm.Generate(o); err == nil {
			err = olm.Write(files, filepath.Join(*out, "bundle"))
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bundle:", err)
		os.Exit(1)
	}
	fmt.Printf("wrote bundle/, bundle.Dockerfile and catalog/kubeforge/catalog.yaml under %s\n", *out)
}
