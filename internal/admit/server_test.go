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

package admit

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/kubeforge/kubeforge/internal/localca"
	"github.com/kubeforge/kubeforge/internal/test/ports"
)

// The webhook server keeps an idle connection longer than the API server
// does, so that the API server always closes it first; it serves what is
// registered with the certificate in its directory, reports started only
// once it accepts TLS, and keeps a connection exactly as long as its idle
// timeout (shortened here to 1 s to watch it).
func TestWebhookServerOutlastsTheAPIServersIdleConnections(t *testing.T) {
	if IdleTimeout <= APIServerIdleTimeout {
		t.Fatalf("idle timeout %s: not longer than the API server's %s", IdleTimeout, APIServerIdleTimeout)
	}
	ca, dir, port := servingSetup(t)
	srv := NewWebhookServer(webhook.Options{Host: "127.0.0.1", Port: port, CertDir: dir})
	if got := srv.(*webhookServer).idle; got != IdleTimeout {
		t.Fatalf("a new server's idle timeout is %s, want %s", got, IdleTimeout)
	}
	srv.(*webhookServer).idle = time.Second
	srv.Register("/hello", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "hello") }))
	if err := srv.StartedChecker()(nil); err == nil {
		t.Fatal("started before Start")
	}
	start(t, srv)

	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.PEM)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	url := "https://127.0.0.1:" + strconv.Itoa(port) + "/hello"
	// get reports whether the request went over a connection used before.
	get := func() bool {
		t.Helper()
		reused := false
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
			GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused },
		}))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "hello" {
			t.Fatalf("answered %q", b)
		}
		return reused
	}
	get()
	time.Sleep(300 * time.Millisecond)
	if !get() {
		t.Error("an idle connection was closed before the idle timeout")
	}
	time.Sleep(2 * time.Second)
	// The server closed it; the client finds out on its next request
	// (which then dials anew) or sees it closed: either way not reused.
	if get() {
		t.Error("an idle connection outlived the idle timeout")
	}
}

// Told to stop, the webhook server goes on answering for its drain time,
// each answer closing its connection so the API server never sends on
// one the server is about to close, with requests that run to their end;
// then it stops.
func TestWebhookServerDrainsItsConnectionsBeforeItStops(t *testing.T) {
	ca, dir, port := servingSetup(t)
	srv := NewWebhookServer(webhook.Options{Host: "127.0.0.1", Port: port, CertDir: dir})
	if got := srv.(*webhookServer).drain; got != 0 {
		t.Fatalf("a new server drains for %s, want 0 unless told", got)
	}
	Drain(srv, time.Second)
	srv.Register("/hello", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.Context().Err(); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "hello")
	}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()
	for deadline := time.Now().Add(10 * time.Second); srv.StartedChecker()(nil) != nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("not started")
		}
	}

	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.PEM)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	url := "https://127.0.0.1:" + strconv.Itoa(port) + "/hello"
	// post answers whether the request reused a connection and whether
	// the answer closed it.
	post := func() (reused, closes bool, err error) {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader("{}"))
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
			GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused },
		}))
		resp, err := c.Do(req)
		if err != nil {
			return reused, false, err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if string(b) != "hello" {
			return reused, resp.Close, fmt.Errorf("answered %d %q", resp.StatusCode, b)
		}
		return reused, resp.Close, nil
	}
	if _, closes, err := post(); err != nil || closes {
		t.Fatalf("before the stop: closes %v, %v", closes, err)
	}
	cancel()
	time.Sleep(100 * time.Millisecond)
	reused, closes, err := post()
	if err != nil || !reused || !closes {
		t.Errorf("draining, on the connection held: reused %v, closes %v, %v; want an answer that closes it", reused, closes, err)
	}
	reused, closes, err = post()
	if err != nil || reused || !closes {
		t.Errorf("draining, next: reused %v, closes %v, %v; want a new connection, answered and closed", reused, closes, err)
	}
	select {
	case err := <-done:
		t.Fatalf("stopped before its drain time: %v", err)
	default:
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Start: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("still serving 5 s after its drain time")
	}
	if _, _, err := post(); err == nil {
		t.Error("answered after it stopped")
	}
}

// With a client CA the webhook server takes requests only from a client
// that presents a certificate that CA signed (the API server, configured
// to): no certificate, or one of another CA, is refused in the handshake.
func TestWebhookServerWithAClientCATakesOnlyClientsWithItsCertificates(t *testing.T) {
	serving, dir, port := servingSetup(t)
	clients, err := localca.New("api-server-clients")
	if err != nil {
		t.Fatal(err)
	}
	other, err := localca.New("someone-else")
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(t.TempDir(), "clients.crt")
	if err := os.WriteFile(caFile, clients.PEM, 0o600); err != nil {
		t.Fatal(err)
	}
	srv := NewWebhookServer(webhook.Options{Host: "127.0.0.1", Port: port, CertDir: dir, ClientCAName: caFile})
	srv.Register("/hello", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "hello") }))
	start(t, srv)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(serving.PEM)
	get := func(from *localca.CA) (string, error) {
		cfg := &tls.Config{RootCAs: pool}
		if from != nil {
			certPEM, keyPEM, err := from.Client(time.Hour, "kube-apiserver")
			if err != nil {
				t.Fatal(err)
			}
			cert, err := tls.X509KeyPair(certPEM, keyPEM)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Certificates = []tls.Certificate{cert}
		}
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}
		resp, err := c.Get("https://127.0.0.1:" + strconv.Itoa(port) + "/hello")
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	if got, err := get(clients); err != nil || got != "hello" {
		t.Errorf("a client with the CA's certificate: %q, %v", got, err)
	}
	if got, err := get(nil); err == nil {
		t.Errorf("a client without a certificate was answered %q", got)
	}
	if got, err := get(other); err == nil {
		t.Errorf("a client with another CA's certificate was answered %q", got)
	}
}

// servingSetup makes a CA, a serving certificate for 127.0.0.1 in a
// directory of the test's, and a free port.
func servingSetup(t *testing.T) (*localca.CA, string, int) {
	t.Helper()
	ca, err := localca.New("test")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := ca.WriteServing(dir, "127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	port, err := ports.Free()
	if err != nil {
		t.Fatal(err)
	}
	return ca, dir, port
}

// start starts srv until the test ends, and waits until it serves.
func start(t *testing.T, srv webhook.Server) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Start: %v", err)
		}
	})
	for deadline := time.Now().Add(10 * time.Second); srv.StartedChecker()(nil) != nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not started: %v", srv.StartedChecker()(nil))
		}
	}
}
