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

package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The tarball is a valid OCI layout: every blob is named by its digest, the
// index names the manifest with the reference, the manifest the config and
// the layer, the config the layer's uncompressed digest; the layer holds the
// file at its destination; the same inputs give the same image.
func TestImageLayout(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "hello")
	if err := os.WriteFile(bin, []byte("#!/bin/true\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	read := func(out string) map[string][]byte {
		if err := build("example.local/hello:1", out, "65532:65532", []string{"/bin/hello"}, []string{"a=b"}, nil, []string{bin + "=/bin/hello"}); err != nil {
			t.Fatal(err)
		}
		files, err := readTar(out)
		if err != nil {
			t.Fatal(err)
		}
		return files
	}
	files := read(filepath.Join(dir, "a.tar"))
	again := read(filepath.Join(dir, "b.tar"))
	if !bytes.Equal(files["index.json"], again["index.json"]) {
		t.Error("the same inputs gave another image")
	}
	for name, b := range files {
		if strings.HasPrefix(name, "blobs/sha256/") && "blobs/sha256/"+strings.TrimPrefix(digest(b), "sha256:") != name {
			t.Errorf("%s holds content of another digest", name)
		}
	}
	var index struct {
		Manifests []descriptor `json:"manifests"`
	}
	must(t, json.Unmarshal(files["index.json"], &index))
	if len(index.Manifests) != 1 || index.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != "example.local/hello:1" {
		t.Fatalf("index %s", files["index.json"])
	}
	var manifest struct {
		Config descriptor   `json:"config"`
		Layers []descriptor `json:"layers"`
	}
	must(t, json.Unmarshal(files[blobName(index.Manifests[0].Digest)], &manifest))
	var config struct {
		Config struct {
			User       string
			Entrypoint []string
			Labels     map[string]string
		} `json:"config"`
		RootFS struct {
			DiffIDs []string `json:"diff_ids"`
		} `json:"rootfs"`
	}
	must(t, json.Unmarshal(files[blobName(manifest.Config.Digest)], &config))
	if config.Config.User != "65532:65532" || config.Config.Entrypoint[0] != "/bin/hello" || config.Config.Labels["a"] != "b" {
		t.Errorf("config %+v", config.Config)
	}
	layer, err := gunzip(files[blobName(manifest.Layers[0].Digest)])
	must(t, err)
	if digest(layer) != config.RootFS.DiffIDs[0] {
		t.Error("the config's diff ID is not the layer's")
	}
	tr := tar.NewReader(bytes.NewReader(layer))
	found := false
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		found = found || (h.Name == "bin/hello" && h.Mode == 0o755)
	}
	if !found {
		t.Error("the layer lacks bin/hello, executable")
	}
}

func blobName(d string) string { return blobPath(d) }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// An image built again into the same tarball takes the compressed layer
// it holds when the files are the same (its config may change), and makes
// a new one holding the new content when a file changed.
func TestLayerKeptOnlyForTheSameFiles(t *testing.T) {
	dir := t.TempDir()
	bin, out := filepath.Join(dir, "hello"), filepath.Join(dir, "image.tar")
	image := func(label string) (gzipped []byte, diffID string) {
		t.Helper()
		must(t, build("example.local/hello:1", out, "65532:65532", nil, []string{label}, nil, []string{bin + "=/bin/hello"}))
		files, err := readTar(out)
		must(t, err)
		var index struct {
			Manifests []descriptor `json:"manifests"`
		}
		var manifest struct {
			Layers []descriptor `json:"layers"`
		}
		must(t, json.Unmarshal(files["index.json"], &index))
		must(t, json.Unmarshal(files[blobName(index.Manifests[0].Digest)], &manifest))
		gzipped = files[blobName(manifest.Layers[0].Digest)]
		layer, err := gunzip(gzipped)
		must(t, err)
		return gzipped, digest(layer)
	}
	must(t, os.WriteFile(bin, []byte("#!/bin/true\n"), 0o755))
	first, diffID := image("a=1")
	if kept, ok := layerOf(out, diffID); !ok || !bytes.Equal(kept.Bytes(), first) {
		t.Fatal("the stored layer is not found by its diff ID")
	}
	if _, ok := layerOf(out, digest([]byte("other"))); ok {
		t.Error("another diff ID found the stored layer")
	}
	if again, _ := image("a=2"); !bytes.Equal(again, first) {
		t.Error("the same files gave another layer")
	}
	must(t, os.WriteFile(bin, []byte("#!/bin/false\n"), 0o755))
	changed, changedID := image("a=2")
	layer, err := gunzip(changed)
	must(t, err)
	if changedID == diffID || !bytes.Contains(layer, []byte("#!/bin/false")) {
		t.Error("a changed file kept the old layer")
	}
}

// gunzip is the layer uncompressed.
func gunzip(b []byte) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if _, err := out.ReadFrom(r); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
