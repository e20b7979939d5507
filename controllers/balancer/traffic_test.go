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

package balancer

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	networkingv1alpha1 "github.com/kubeforge/kubeforge/api/networking/v1alpha1"
)

// The renderer's output drives a real nginx (Debian's) in front of three
// real HTTP backends on 127.0.0.1; the backend Services are resolved to
// the backends' loopback ports. Every request is a new connection, which
// is what the stream proxy balances.
func TestNginxSplitsRealTrafficByWeight(t *testing.T) {
	nginx := findNginx(t)

	backends := map[string]*httptest.Server{}
	for _, name := range []string{"a", "b", "c"} {
		body := name
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, _ = io.WriteString(w, body)
		}))
		t.Cleanup(srv.Close)
		backends[name] = srv
	}
	resolve := func(service, _ string, _ int32) string {
		for name, srv := range backends {
			if service == "shop-"+name {
				return srv.Listener.Addr().String()
			}
		}
		t.Fatalf("no backend for Service %s", service)
		return ""
	}
	port := freePort(t)
	b := balancerWith([]networkingv1alpha1.BalancerPort{tcp("http", int32(port), 8080)},
		backend("a", 40), backend("b", 20), backend("c", 40))
	front, reload := runNginx(t, nginx, b, RenderOptions{Resolve: resolve, ListenBase: int32(port)}, port)

	const n = 1000
	shares := count(t, front, n)
	t.Logf("weights 40/20/40, %d requests: a %.1f%%, b %.1f%%, c %.1f%%", n, pct(shares["a"], n), pct(shares["b"], n), pct(shares["c"], n))
	for name, want := range map[string]float64{"a": 40, "b": 20, "c": 40} {
		if got := pct(shares[name], n); got < want-3 || got > want+3 {
			t.Errorf("backend %s got %.1f%% of the requests, want %.0f%% ± 3", name, got, want)
		}
	}

	// Drain a and split the rest evenly; nginx reloads on SIGHUP. Old
	// workers finish their connections, so wait until the new
	// configuration answers before counting.
	b.Spec.Backends[0].Weight = ptr.To[int32](0)
	b.Spec.Backends[1].Weight = ptr.To[int32](50)
	b.Spec.Backends[2].Weight = ptr.To[int32](50)
	reload()
	waitFor(t, func() bool {
		for range 30 {
			if body, err := get(front); err != nil || body == "a" {
				return false
			}
		}
		return true
	}, "nginx to reload")

	shares = count(t, front, n)
	t.Logf("weights 0/50/50, %d requests: a %.1f%%, b %.1f%%, c %.1f%%", n, pct(shares["a"], n), pct(shares["b"], n), pct(shares["c"], n))
	if shares["a"] != 0 {
		t.Errorf("the drained backend a got %d requests, want 0", shares["a"])
	}
	for _, name := range []string{"b", "c"} {
		if got := pct(shares[name], n); got < 47 || got > 53 {
			t.Errorf("backend %s got %.1f%% of the requests, want 50%% ± 3", name, got)
		}
	}
}

// runNginx starts nginx with b's configuration rendered with opts, its
// front end on 127.0.0.1:port, and returns the front end's URL and a
// function that renders b again and reloads nginx (SIGHUP).
func runNginx(t *testing.T, nginx nginxBinary, b *networkingv1alpha1.Balancer, opts RenderOptions, port int) (string, func()) {
	t.Helper()
	dir := t.TempDir()
	nginx.prefix(t, dir)
	confFile := filepath.Join(dir, "nginx.conf")
	write := func() {
		t.Helper()
		if err := os.WriteFile(confFile, []byte(NginxConf(b, opts)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write()
	cmd := exec.Command(nginx.path, "-p", dir, "-e", "stderr", "-c", confFile,
		"-g", "daemon off; pid "+filepath.Join(dir, "nginx.pid")+";")
	var nginxLog bytes.Buffer
	cmd.Stdout, cmd.Stderr = &nginxLog, &nginxLog
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting nginx: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGQUIT)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("nginx's log:\n%s", nginxLog.String())
		}
	})
	front := "http://127.0.0.1:" + strconv.Itoa(port) + "/"
	waitFor(t, func() bool { _, err := get(front); return err == nil }, "nginx to accept connections")
	return front, func() {
		t.Helper()
		write()
		if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatalf("reloading nginx: %v", err)
		}
	}
}

var httpClient = &http.Client{
	Transport: &http.Transport{DisableKeepAlives: true},
	Timeout:   5 * time.Second,
}

func get(url string) (string, error) {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("status %d", resp.StatusCode)
	}
	return string(body), nil
}

func count(t *testing.T, url string, n int) map[string]int {
	t.Helper()
	got := map[string]int{}
	for range n {
		body, err := get(url)
		if err != nil {
			t.Fatalf("request through nginx: %v", err)
		}
		got[body]++
	}
	return got
}

func pct(k, n int) float64 { return 100 * float64(k) / float64(n) }

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// backendServer is an HTTP backend that answers its name and can stop
// answering (its listener closed: connections are refused) and start again
// on the same address.
type backendServer struct {
	name, addr string
	srv        *http.Server
}

func startBackend(t *testing.T, name, addr string) *backendServer {
	t.Helper()
	b := &backendServer{name: name, addr: addr}
	b.start(t)
	t.Cleanup(b.stop)
	return b
}

func (b *backendServer) start(t *testing.T) {
	t.Helper()
	l, err := net.Listen("tcp", b.addr)
	if err != nil {
		t.Fatalf("backend %s listening on %s: %v", b.name, b.addr, err)
	}
	b.addr = l.Addr().String()
	name := b.name
	b.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, name)
	}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = b.srv.Serve(l) }()
}

func (b *backendServer) stop() {
	if b.srv != nil {
		_ = b.srv.Close()
		b.srv = nil
	}
}

func backendResolver(t *testing.T, backends ...*backendServer) Resolver {
	return func(service, _ string, _ int32) string {
		for _, be := range backends {
			if service == "shop-"+be.name {
				return be.addr
			}
		}
		t.Fatalf("no backend for Service %s", service)
		return ""
	}
}

// Passive health: a backend that stops answering loses its share to the
// others without a failed request, and gets it back once it answers again
// and failTimeout has passed.
func TestNginxTakesABackendThatStopsAnsweringOutAndBack(t *testing.T) {
	nginx := findNginx(t)
	a := startBackend(t, "a", "127.0.0.1:0")
	bb := startBackend(t, "b", "127.0.0.1:0")
	c := startBackend(t, "c", "127.0.0.1:0")
	port := freePort(t)
	b := balancerWith([]networkingv1alpha1.BalancerPort{tcp("http", int32(port), 8080)},
		backend("a", 40), backend("b", 20), backend("c", 40))
	const failTimeout = 2 * time.Second
	b.Spec.PassiveHealth.MaxFails = ptr.To[int32](2)
	b.Spec.PassiveHealth.FailTimeout = &metav1.Duration{Duration: failTimeout}
	front, _ := runNginx(t, nginx, b, RenderOptions{Resolve: backendResolver(t, a, bb, c), ListenBase: int32(port)}, port)

	const n = 500
	bb.stop()
	shares := count(t, front, n) // fails the test on any failed request
	t.Logf("b stopped answering, %d requests, 0 failed: a %.1f%%, b %.1f%%, c %.1f%%", n, pct(shares["a"], n), pct(shares["b"], n), pct(shares["c"], n))
	if shares["b"] != 0 {
		t.Fatalf("the stopped backend b answered %d requests", shares["b"])
	}
	for _, name := range []string{"a", "c"} {
		if got := pct(shares[name], n); got < 45 || got > 55 {
			t.Errorf("backend %s got %.1f%% with b out, want b's share split by weight: 50%% ± 5", name, got)
		}
	}

	bb.start(t)
	back := time.Now()
	waitFor(t, func() bool { body, err := get(front); return err == nil && body == "b" }, "b to get traffic again")
	t.Logf("b answers again: it got its first request %.1fs later (failTimeout %s)", time.Since(back).Seconds(), failTimeout)
	if d := time.Since(back); d > failTimeout+3*time.Second {
		t.Errorf("b got traffic back after %s, want within failTimeout %s (+3s)", d, failTimeout)
	}
	shares = count(t, front, n)
	t.Logf("b back, %d requests: a %.1f%%, b %.1f%%, c %.1f%%", n, pct(shares["a"], n), pct(shares["b"], n), pct(shares["c"], n))
	if got := pct(shares["b"], n); got < 15 || got > 25 {
		t.Errorf("b got %.1f%% after it came back, want its weight's 20%% ± 5", got)
	}
}

// ClientIP affinity: every connection of one client address goes to one
// backend, and the client addresses are spread by weight. 200 clients on
// 127.0.0.2–127.0.0.201 (all of 127/8 is this machine's loopback).
func TestNginxKeepsAClientOnOneBackendAndSpreadsClientsByWeight(t *testing.T) {
	nginx := findNginx(t)
	a := startBackend(t, "a", "127.0.0.1:0")
	bb := startBackend(t, "b", "127.0.0.1:0")
	port := freePort(t)
	b := balancerWith([]networkingv1alpha1.BalancerPort{tcp("http", int32(port), 8080)}, backend("a", 70), backend("b", 30))
	b.Spec.SessionAffinity = networkingv1alpha1.SessionAffinityClientIP
	front, reload := runNginx(t, nginx, b, RenderOptions{Resolve: backendResolver(t, a, bb), ListenBase: int32(port)}, port)

	const clients, perClient = 200, 5
	// where sends each client's requests; strict, a client that changes
	// backend fails the test (not while nginx reloads: old workers serve
	// the old configuration until they finish).
	where := func(strict bool) map[int]string {
		t.Helper()
		got := map[int]string{}
		for i := range clients {
			src := net.IPv4(127, 0, byte((i+2)/256), byte((i+2)%256))
			cl := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
				DisableKeepAlives: true,
				DialContext:       (&net.Dialer{LocalAddr: &net.TCPAddr{IP: src}}).DialContext,
			}}
			for range perClient {
				resp, err := cl.Get(front)
				if err != nil {
					t.Fatalf("client %s: %v", src, err)
				}
				body, _ := io.ReadAll(resp.Body)
				_ = resp.Body.Close()
				if strict && got[i] != "" && got[i] != string(body) {
					t.Fatalf("client %s went to %s and then to %s; ClientIP affinity keeps it on one backend", src, got[i], body)
				}
				got[i] = string(body)
			}
		}
		return got
	}
	share := func(m map[int]string, name string) float64 {
		k := 0
		for _, v := range m {
			if v == name {
				k++
			}
		}
		return pct(k, len(m))
	}

	before := where(true)
	t.Logf("weights 70/30, %d clients × %d requests, each on one backend: clients on a %.1f%%, on b %.1f%%", clients, perClient, share(before, "a"), share(before, "b"))
	if got := share(before, "a"); got < 60 || got > 80 {
		t.Errorf("%.1f%% of the clients on a, want its weight's 70%% ± 10", got)
	}

	// A weight change moves only clients from the backend that lost weight.
	b.Spec.Backends[0].Weight = ptr.To[int32](50)
	b.Spec.Backends[1].Weight = ptr.To[int32](50)
	reload()
	waitFor(t, func() bool {
		after := where(false)
		return share(after, "b") > share(before, "b")
	}, "nginx to reload")
	after := where(true)
	moved, backToA := 0, 0
	for i := range clients {
		if before[i] != after[i] {
			moved++
			if before[i] == "b" {
				backToA++
			}
		}
	}
	t.Logf("weights 50/50: clients on a %.1f%%, on b %.1f%%; %d of %d clients moved, %d of them from b to a", share(after, "a"), share(after, "b"), moved, clients, backToA)
	if backToA != 0 {
		t.Errorf("%d clients moved from b to a although b gained weight", backToA)
	}
	if got := share(after, "b"); got < 38 || got > 62 {
		t.Errorf("%.1f%% of the clients on b, want 50%% ± 12", got)
	}
}
