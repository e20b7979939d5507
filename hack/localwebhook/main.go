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

// Command localwebhook prepares the admission webhooks of a manager that
// runs on this machine, outside the cluster (make demo, the e2e tests): it
// writes a CA and a serving certificate for 127.0.0.1 into a directory and
// turns config/webhook/manifests.yaml into webhook configurations that call
// https://127.0.0.1:<port><path> with that CA.
package main

import (
	"bytes"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kubeforge/kubeforge/internal/localca"

	"sigs.k8s.io/yaml"
)

func main() {
	certDir := flag.String("cert-dir", "", "Directory for ca.crt, tls.crt and tls.key (reused when still valid).")
	in := flag.String("in", "config/webhook/manifests.yaml", "The generated webhook configurations.")
	out := flag.String("out", "", "Where to write the local webhook configurations.")
	host := flag.String("host", "127.0.0.1", "The address the API server reaches the manager at.")
	port := flag.Int("port", 9443, "The manager's webhook port.")
	flag.Parse()
	if *certDir == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: localwebhook --cert-dir DIR --out FILE [--in FILE] [--host IP] [--port N]")
		os.Exit(2)
	}
	if err := run(*certDir, *in, *out, *host, *port); err != nil {
		fmt.Fprintln(os.Stderr, "localwebhook:", err)
		os.Exit(1)
	}
}

func run(certDir, in, out, host string, port int) error {
	caPEM, err := ensureCerts(certDir, host)
	if err != nil {
		return err
	}
	raw, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	base := fmt.Sprintf("https://%s", net.JoinHostPort(host, fmt.Sprint(port)))
	var docs [][]byte
	for _, doc := range strings.Split(string(raw), "\n---") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			return fmt.Errorf("reading %s: %w", in, err)
		}
		if k := obj["kind"]; k != "MutatingWebhookConfiguration" && k != "ValidatingWebhookConfiguration" {
			return fmt.Errorf("unexpected kind %v in %s", k, in)
		}
		md, _ := obj["metadata"].(map[string]any)
		if md == nil {
			return fmt.Errorf("a %v in %s has no metadata", obj["kind"], in)
		}
		md["name"] = fmt.Sprintf("kubeforge-%v", md["name"])
		webhooks, _ := obj["webhooks"].([]any)
		for _, w := range webhooks {
			if wh, ok := w.(map[string]any); ok {
				wh["clientConfig"] = local(wh["clientConfig"], base, caPEM)
			}
		}
		b, err := yaml.Marshal(obj)
		if err != nil {
			return err
		}
		docs = append(docs, b)
	}
	return os.WriteFile(out, bytes.Join(docs, []byte("---\n")), 0o644)
}

// local turns a clientConfig that names the webhook Service into one
// that calls base + the Service's path, trusting ca.
func local(clientConfig any, base string, ca []byte) map[string]any {
	path := "/"
	if cc, ok := clientConfig.(map[string]any); ok {
		if svc, ok := cc["service"].(map[string]any); ok {
			if p, ok := svc["path"].(string); ok {
				path = p
			}
		}
	}
	return map[string]any{"url": base + path, "caBundle": base64.StdEncoding.EncodeToString(ca)}
}

// ensureCerts returns the CA, creating a CA and a serving certificate for
// host unless valid ones exist in dir.
func ensureCerts(dir, host string) ([]byte, error) {
	caFile, crtFile, keyFile := filepath.Join(dir, "ca.crt"), filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if ca, err := os.ReadFile(caFile); err == nil {
		if crt, err := os.ReadFile(crtFile); err == nil && stillValid(crt, host) {
			if _, err := os.Stat(keyFile); err == nil {
				return ca, nil
			}
		}
	}
	ca, err := localca.New("kubeforge-local-webhook-ca")
	if err != nil {
		return nil, err
	}
	if err := ca.WriteServing(dir, "localhost", host); err != nil {
		return nil, err
	}
	return ca.PEM, nil
}

func stillValid(crtPEM []byte, host string) bool {
	block, _ := pem.Decode(crtPEM)
	if block == nil {
		return false
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return false
	}
	return time.Now().Add(24*time.Hour).Before(c.NotAfter) && c.VerifyHostname(host) == nil
}
