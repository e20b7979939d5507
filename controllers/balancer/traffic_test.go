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
	opts := RenderOptions{Resolve: resolve}

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
	write()
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatalf("reloading nginx: %v", err)
	}
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
