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

// Command ociimage packs static binaries into a one-layer OCI image, without
// Docker: an OCI image layout tarball that `ctr images import` reads. It is
// how the real node of the local cluster gets its images (the pause image,
// test backends, the manager) where no registry can be reached.
//
//	go run ./hack/ociimage -ref ghcr.io/kubeforge/kubeforge:v0.1.0 -out manager.tar \
//	    -user 65532:65532 -entrypoint /manager -label org.opencontainers.image.source=... bin/manager=/manager
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"
	"time"
)

type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Platform    map[string]string `json:"platform,omitempty"`
}

func main() {
	ref := flag.String("ref", "", "the image reference the image is imported as")
	out := flag.String("out", "", "the OCI layout tarball to write")
	user := flag.String("user", "65532:65532", "the user the image runs as")
	var entrypoint, labels, env list
	flag.Var(&entrypoint, "entrypoint", "the entrypoint, one flag per argument")
	flag.Var(&labels, "label", "a label key=value (repeatable)")
	flag.Var(&env, "env", "an environment variable KEY=value (repeatable)")
	flag.Parse()
	if *ref == "" || *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: ociimage -ref REF -out FILE [-entrypoint ARG]... [-label K=V]... SRC=DEST...")
		os.Exit(2)
	}
	if err := build(*ref, *out, *user, entrypoint, labels, env, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "ociimage:", err)
		os.Exit(1)
	}
}

func build(ref, out, user string, entrypoint, labels, env, files []string) error {
	// The layer: each file at its destination, directories made, stable
	// timestamps so that the same inputs give the same digest.
	var layer bytes.Buffer
	gz := gzip.NewWriter(&layer)
	tw := tar.NewWriter(gz)
	epoch := time.Unix(0, 0)
	dirs := map[string]bool{}
	sort.Strings(files)
	for _, f := range files {
		src, dest, ok := strings.Cut(f, "=")
		if !ok || !strings.HasPrefix(dest, "/") {
			return fmt.Errorf("%q: want SRC=/DEST", f)
		}
		b, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		for d := path.Dir(dest); d != "/" && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: strings.TrimPrefix(d, "/") + "/", Mode: 0o755, ModTime: epoch}); err != nil {
				return err
			}
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: strings.TrimPrefix(dest, "/"), Mode: 0o755, Size: int64(len(b)), ModTime: epoch}); err != nil {
			return err
		}
		if _, err := tw.Write(b); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := gz.Close(); err != nil {
		return err
	}
	// The uncompressed digest (diff ID) of the layer, for the config.
	raw, err := gunzip(layer.Bytes())
	if err != nil {
		return err
	}
	diffID := digest(raw)

	labelMap := map[string]string{}
	for _, l := range labels {
		k, v, _ := strings.Cut(l, "=")
		labelMap[k] = v
	}
	config := map[string]any{
		"architecture": "amd64", "os": "linux", "created": epoch.UTC().Format(time.RFC3339),
		"config": map[string]any{"User": user, "Entrypoint": entrypoint, "Env": append([]string{"PATH=/"}, env...), "Labels": labelMap},
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{diffID}},
	}
	configJSON, _ := json.Marshal(config)
	manifest := map[string]any{
		"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
		"config": descriptor{MediaType: "application/vnd.oci.image.config.v1+json", Digest: digest(configJSON), Size: int64(len(configJSON))},
		"layers": []descriptor{{MediaType: "application/vnd.oci.image.layer.v1.tar+gzip", Digest: digest(layer.Bytes()), Size: int64(layer.Len())}},
	}
	manifestJSON, _ := json.Marshal(manifest)
	index := map[string]any{
		"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
		"manifests": []descriptor{{MediaType: "application/vnd.oci.image.manifest.v1+json", Digest: digest(manifestJSON), Size: int64(len(manifestJSON)),
			Annotations: map[string]string{"org.opencontainers.image.ref.name": ref, "io.containerd.image.name": ref},
			Platform:    map[string]string{"architecture": "amd64", "os": "linux"}}},
	}
	indexJSON, _ := json.Marshal(index)

	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	ot := tar.NewWriter(f)
	put := func(name string, b []byte) error {
		if err := ot.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(b)), ModTime: epoch}); err != nil {
			return err
		}
		_, err := ot.Write(b)
		return err
	}
	for _, e := range []struct {
		name string
		b    []byte
	}{
		{"oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{"index.json", indexJSON},
		{blob(configJSON), configJSON},
		{blob(layer.Bytes()), layer.Bytes()},
		{blob(manifestJSON), manifestJSON},
	} {
		if err := put(e.name, e.b); err != nil {
			return err
		}
	}
	if err := ot.Close(); err != nil {
		return err
	}
	fmt.Printf("%s %s\n", ref, digest(manifestJSON))
	return nil
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func blob(b []byte) string { return "blobs/sha256/" + strings.TrimPrefix(digest(b), "sha256:") }

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
