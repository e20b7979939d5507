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
// Docker: an OCI image layout tarball that `ctr images import` reads, and,
// with -push, the same image pushed to a registry on loopback over plain
// HTTP (the distribution registry of the local cluster). It is how the real
// node of the local cluster gets its images (the pause image, test
// backends, the manager) where no registry on the internet can be reached.
//
//	go run ./hack/ociimage -ref ghcr.io/kubeforge/kubeforge:v0.1.0 -out manager.tar \
//	    -user 65532:65532 -entrypoint /manager -label org.opencontainers.image.source=... bin/manager=/manager
//	go run ./hack/ociimage -ref kubeforge/hello:1 -out hello.tar -push 127.0.0.1:5000 bin/hello=/hello
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
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
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
	push := flag.String("push", "", "also push the image to this registry (host:port, plain HTTP, loopback only)")
	flag.Parse()
	if *ref == "" || *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: ociimage -ref REF -out FILE [-entrypoint ARG]... [-label K=V]... SRC=DEST...")
		os.Exit(2)
	}
	err := build(*ref, *out, *user, entrypoint, labels, env, flag.Args())
	if err == nil && *push != "" {
		err = pushLayout(*out, *push, *ref)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ociimage:", err)
		os.Exit(1)
	}
}

// pushLayout pushes the image in the layout tarball to registry as ref's
// repository and tag (the registry host of ref is replaced by registry),
// with the distribution API: each blob by a monolithic upload, then the
// manifest. Only loopback registries: the local cluster's.
func pushLayout(layout, registry, ref string) error {
	host, _, err := net.SplitHostPort(registry)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("%s is not a loopback registry", registry)
	}
	repo, tag := splitRef(ref)
	if repo == "" || tag == "" {
		return fmt.Errorf("%q: want REPOSITORY[:TAG]", ref)
	}
	files, err := readTar(layout)
	if err != nil {
		return err
	}
	var index struct {
		Manifests []descriptor `json:"manifests"`
	}
	if err := json.Unmarshal(files["index.json"], &index); err != nil || len(index.Manifests) != 1 {
		return fmt.Errorf("reading index.json: %v", err)
	}
	manifest := files[blobPath(index.Manifests[0].Digest)]
	base := "http://" + registry + "/v2/" + repo
	c := &http.Client{Timeout: time.Minute}
	for name, b := range files {
		if !strings.HasPrefix(name, "blobs/sha256/") || bytes.Equal(b, manifest) {
			continue
		}
		// A blob the registry has (an image pushed again) is not sent again.
		if resp, err := c.Head(base + "/blobs/" + digest(b)); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				continue
			}
		}
		resp, err := c.Post(base+"/blobs/uploads/", "application/octet-stream", nil)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			return fmt.Errorf("starting an upload: %s", resp.Status)
		}
		loc, err := resp.Location()
		if err != nil {
			return err
		}
		q := loc.Query()
		q.Set("digest", digest(b))
		loc.RawQuery = q.Encode()
		req, _ := http.NewRequest(http.MethodPut, loc.String(), bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/octet-stream")
		if err := expect(c, req, http.StatusCreated); err != nil {
			return fmt.Errorf("uploading %s: %w", name, err)
		}
	}
	req, _ := http.NewRequest(http.MethodPut, base+"/manifests/"+tag, bytes.NewReader(manifest))
	req.Header.Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
	if err := expect(c, req, http.StatusCreated); err != nil {
		return fmt.Errorf("putting the manifest: %w", err)
	}
	fmt.Printf("pushed %s/%s:%s\n", registry, repo, tag)
	return nil
}

func expect(c *http.Client, req *http.Request, code int) error {
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != code {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("%s: %s", resp.Status, b)
	}
	return nil
}

// splitRef returns the repository (without a registry host) and the tag.
func splitRef(ref string) (string, string) {
	repo, tag := ref, "latest"
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		repo, tag = ref[:i], ref[i+1:]
	}
	if first, rest, ok := strings.Cut(repo, "/"); ok && (strings.ContainsAny(first, ".:") || first == "localhost") {
		repo = rest
	}
	return repo, tag
}

func readTar(path string) (map[string][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files, nil
		}
		if err != nil {
			return nil, err
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		files[h.Name] = b
	}
}

func build(ref, out, user string, entrypoint, labels, env, files []string) error {
	epoch := time.Unix(0, 0)
	sort.Strings(files)
	var all []entry
	for _, f := range files {
		src, dest, ok := strings.Cut(f, "=")
		if !ok || !strings.HasPrefix(dest, "/") {
			return fmt.Errorf("%q: want SRC=/DEST", f)
		}
		entries, err := walk(src, dest)
		if err != nil {
			return err
		}
		all = append(all, entries...)
	}
	// The uncompressed digest (diff ID) of the layer, for the config.
	hash := sha256.New()
	if err := writeLayer(hash, all); err != nil {
		return err
	}
	diffID := "sha256:" + hex.EncodeToString(hash.Sum(nil))
	// Compressing is most of the time an image takes (code-server's
	// 475 MB: ≈ 6 s of 8): the layer of the image out already holds,
	// when its diff ID is the same, is the same content, and is kept.
	layer, ok := layerOf(out, diffID)
	if !ok {
		layer = &bytes.Buffer{}
		// The fastest level: the image goes to a registry on this machine.
		gz, err := gzip.NewWriterLevel(layer, gzip.BestSpeed)
		if err != nil {
			return err
		}
		if err := writeLayer(gz, all); err != nil {
			return err
		}
		if err := gz.Close(); err != nil {
			return err
		}
	}

	labelMap := map[string]string{}
	for _, l := range labels {
		k, v, _ := strings.Cut(l, "=")
		labelMap[k] = v
	}
	config := map[string]any{
		"architecture": "amd64", "os": "linux", "created": epoch.UTC().Format(time.RFC3339),
		"config": map[string]any{"User": user, "Entrypoint": entrypoint, "Env": withPath(env), "Labels": labelMap},
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

// writeLayer writes the layer's tar: each entry at its destination, the
// directories above it made, stable timestamps so that the same inputs
// give the same digest.
func writeLayer(w io.Writer, entries []entry) error {
	tw := tar.NewWriter(w)
	epoch := time.Unix(0, 0)
	dirs := map[string]bool{}
	parents := func(dest string) error {
		for _, d := range ancestors(dest) {
			if dirs[d] {
				continue
			}
			dirs[d] = true
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: strings.TrimPrefix(d, "/") + "/", Mode: 0o755, ModTime: epoch}); err != nil {
				return err
			}
		}
		return nil
	}
	for _, e := range entries {
		if err := parents(e.dest); err != nil {
			return err
		}
		h := &tar.Header{Name: strings.TrimPrefix(e.dest, "/"), Mode: e.mode, ModTime: epoch}
		switch {
		case e.dir:
			if dirs[e.dest] || e.dest == "/" {
				continue
			}
			dirs[e.dest] = true
			h.Typeflag, h.Name = tar.TypeDir, h.Name+"/"
		case e.link != "":
			h.Typeflag, h.Linkname = tar.TypeSymlink, e.link
		default:
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := tw.Write(e.data); err != nil {
			return err
		}
	}
	return tw.Close()
}

// withPath puts PATH=/ first unless the image's environment sets PATH.
func withPath(env []string) []string {
	for _, e := range env {
		if strings.HasPrefix(e, "PATH=") {
			return env
		}
	}
	return append([]string{"PATH=/"}, env...)
}

// ancestors lists the directories above dest, outermost first, without "/".
func ancestors(dest string) []string {
	var out []string
	for d := path.Dir(dest); d != "/" && d != "."; d = path.Dir(d) {
		out = append([]string{d}, out...)
	}
	return out
}

type entry struct {
	dest string
	mode int64
	dir  bool
	link string
	data []byte
}

// walk lists what SRC puts at DEST: a file (mode 0755, as the binaries it
// was made for), or a directory tree with its files' modes and symlinks as
// they are (a root file system assembled from packages).
func walk(src, dest string) ([]entry, error) {
	fi, err := os.Lstat(src)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		b, err := os.ReadFile(src)
		return []entry{{dest: dest, mode: 0o755, data: b}}, err
	}
	var out []entry
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		e := entry{dest: path.Join(dest, filepath.ToSlash(rel))}
		info, err := d.Info()
		if err != nil {
			return err
		}
		e.mode = int64(info.Mode().Perm())
		switch {
		case d.IsDir():
			e.dir = true
		case info.Mode()&fs.ModeSymlink != 0:
			if e.link, err = os.Readlink(p); err != nil {
				return err
			}
		case info.Mode().IsRegular():
			if e.data, err = os.ReadFile(p); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%s: only files, directories and symlinks go into an image", p)
		}
		out = append(out, e)
		return nil
	})
	return out, err
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func blob(b []byte) string { return blobPath(digest(b)) }

func blobPath(d string) string { return "blobs/sha256/" + strings.TrimPrefix(d, "sha256:") }

// layerOf returns the compressed layer of the image in the layout tarball
// out when its config names diffID as the layer's uncompressed digest and
// the blob is the one its manifest names; nothing when out is missing or
// is another image.
func layerOf(out, diffID string) (*bytes.Buffer, bool) {
	files, err := readTar(out)
	if err != nil {
		return nil, false
	}
	var index struct {
		Manifests []descriptor `json:"manifests"`
	}
	var manifest struct {
		Config descriptor   `json:"config"`
		Layers []descriptor `json:"layers"`
	}
	var config struct {
		RootFS struct {
			DiffIDs []string `json:"diff_ids"`
		} `json:"rootfs"`
	}
	if json.Unmarshal(files["index.json"], &index) != nil || len(index.Manifests) != 1 ||
		json.Unmarshal(files[blobPath(index.Manifests[0].Digest)], &manifest) != nil || len(manifest.Layers) != 1 ||
		json.Unmarshal(files[blobPath(manifest.Config.Digest)], &config) != nil ||
		len(config.RootFS.DiffIDs) != 1 || config.RootFS.DiffIDs[0] != diffID {
		return nil, false
	}
	b, ok := files[blobPath(manifest.Layers[0].Digest)]
	if !ok || digest(b) != manifest.Layers[0].Digest {
		return nil, false
	}
	return bytes.NewBuffer(b), true
}
