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
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	networkingv1alpha1 "github.com/kubeforge/kubeforge/api/networking/v1alpha1"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// balancerWith builds a defaulted Balancer: what admit.Prepare gives the
// builders.
func balancerWith(ports []networkingv1alpha1.BalancerPort, backends ...networkingv1alpha1.BalancerBackend) *networkingv1alpha1.Balancer {
	b := &networkingv1alpha1.Balancer{
		ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: "team-a"},
		Spec: networkingv1alpha1.BalancerSpec{
			Selector: map[string]string{"app": "shop"},
			Backends: backends,
			Ports:    ports,
		},
	}
	networkingv1alpha1.DefaultBalancer(b)
	return b
}

func backend(name string, weight int32) networkingv1alpha1.BalancerBackend {
	return networkingv1alpha1.BalancerBackend{Name: name, Weight: ptr.To(weight), Selector: map[string]string{"version": name}}
}

func tcp(name string, port, target int32) networkingv1alpha1.BalancerPort {
	return networkingv1alpha1.BalancerPort{Name: name, Protocol: corev1.ProtocolTCP, Port: port, TargetPort: new(intstr.FromInt32(target))}
}

var goldenCases = []struct {
	name string
	b    *networkingv1alpha1.Balancer
}{
	{"one-tcp-port", balancerWith([]networkingv1alpha1.BalancerPort{tcp("http", 80, 8080)}, backend("v1", 90), backend("v2", 10))},
	{"tcp-and-udp", balancerWith([]networkingv1alpha1.BalancerPort{
		tcp("dns-tcp", 53, 5353),
		{Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53, TargetPort: new(intstr.FromInt32(5353))},
	}, backend("blue", 1), backend("green", 1))},
	{"several-ports", balancerWith([]networkingv1alpha1.BalancerPort{
		tcp("http", 80, 8080), tcp("https", 443, 8443), {Name: "metrics", Port: 9090},
	}, backend("a", 40), backend("b", 20), backend("c", 40))},
	{"weight-zero-backend", balancerWith([]networkingv1alpha1.BalancerPort{tcp("http", 80, 8080)}, backend("old", 0), backend("new", 100))},
	{"client-ip-affinity", with(balancerWith([]networkingv1alpha1.BalancerPort{tcp("http", 80, 8080)}, backend("a", 70), backend("b", 30)),
		func(b *networkingv1alpha1.Balancer) {
			b.Spec.SessionAffinity = networkingv1alpha1.SessionAffinityClientIP
			b.Spec.PassiveHealth.MaxFails = ptr.To[int32](5)
			b.Spec.PassiveHealth.FailTimeout = &metav1.Duration{Duration: 30 * time.Second}
		})},
	{"passive-health-off", with(balancerWith([]networkingv1alpha1.BalancerPort{tcp("http", 80, 8080)}, backend("a", 1), backend("b", 1)),
		func(b *networkingv1alpha1.Balancer) { b.Spec.PassiveHealth.MaxFails = ptr.To[int32](0) })},
}

func with(b *networkingv1alpha1.Balancer, mutate func(*networkingv1alpha1.Balancer)) *networkingv1alpha1.Balancer {
	mutate(b)
	return b
}

func TestNginxConfMatchesGoldenFiles(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			got := NginxConf(tc.b, RenderOptions{Resolve: ClusterDNS("cluster.local")})
			path := filepath.Join("testdata", tc.name+".conf")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("reading golden file (run go test -update to write it): %v", err)
			}
			if got != string(want) {
				t.Errorf("nginx.conf differs from %s:\n--- got\n%s\n--- want\n%s", path, got, want)
			}
		})
	}
}

func TestNginxConfSkipsDrainedBackendsAndListensUDP(t *testing.T) {
	b := balancerWith([]networkingv1alpha1.BalancerPort{
		tcp("http", 80, 8080), {Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53},
	}, backend("old", 0), backend("new", 7))
	conf := NginxConf(b, RenderOptions{Resolve: ClusterDNS("example.org")})
	if strings.Contains(conf, "shop-old.") {
		t.Errorf("a weight-0 backend must not be an upstream server:\n%s", conf)
	}
	for _, want := range []string{
		"server shop-new.team-a.svc.example.org:80 weight=7 max_fails=3 fail_timeout=10s;",
		"server shop-new.team-a.svc.example.org:53 weight=7 max_fails=3 fail_timeout=10s;",
		// The proxy's own ports, by position: 80 and 53 are the
		// front-end Service's.
		"listen 10000;",
		"listen 10001 udp;",
	} {
		if !strings.Contains(conf, want) {
			t.Errorf("nginx.conf lacks %q:\n%s", want, conf)
		}
	}
}

func TestConfigHashChangesWithTheWeights(t *testing.T) {
	a := balancerWith([]networkingv1alpha1.BalancerPort{tcp("http", 80, 8080)}, backend("v1", 90), backend("v2", 10))
	b := a.DeepCopy()
	b.Spec.Backends[1].Weight = ptr.To[int32](20)
	opts := RenderOptions{Resolve: ClusterDNS("cluster.local")}
	if ConfigHash(NginxConf(a, opts)) == ConfigHash(NginxConf(b, opts)) {
		t.Error("a weight change must change the config hash")
	}
	if ConfigHash(NginxConf(a, opts)) != ConfigHash(NginxConf(a.DeepCopy(), opts)) {
		t.Error("the same spec must give the same config hash")
	}
}

// The golden files name the backends by their cluster DNS names. nginx
// resolves upstream names when it reads its configuration, so `nginx -t`
// runs with nss_wrapper answering those names with 127.0.0.1: the files
// are checked exactly as the proxy would read them.
func TestNginxAcceptsEveryGoldenFile(t *testing.T) {
	nginx := findNginx(t)
	hostRe := regexp.MustCompile(`server ([a-z0-9.-]+\.svc\.cluster\.local):\d+`)
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			conf, err := os.ReadFile(filepath.Join("testdata", tc.name+".conf"))
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			var hosts strings.Builder
			for _, m := range hostRe.FindAllStringSubmatch(string(conf), -1) {
				fmt.Fprintf(&hosts, "127.0.0.1 %s\n", m[1])
			}
			if hosts.Len() == 0 {
				t.Fatal("the golden file names no backend")
			}
			hostsFile := filepath.Join(dir, "hosts")
			if err := os.WriteFile(hostsFile, []byte(hosts.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			confFile := filepath.Join(dir, "nginx.conf")
			nginx.prefix(t, dir)
			if err := os.WriteFile(confFile, conf, 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(nginx.path, "-t", "-q", "-p", dir, "-e", "stderr", "-c", confFile, "-g", "pid "+filepath.Join(dir, "nginx.pid")+";")
			cmd.Env = append(os.Environ(), "LD_PRELOAD="+nssWrapper(t), "NSS_WRAPPER_HOSTS="+hostsFile)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("nginx -t rejects %s: %v\n%s", tc.name, err, out)
			}
		})
	}
}

// nginxBinary is Debian's nginx, installed by hack/test-deps.sh.
type nginxBinary struct {
	path string
	// streamModule is the dynamic stream module to load, when nginx was
	// built with the stream module as a dynamic one (Debian's is).
	streamModule string
}

// prefix readies dir as nginx's prefix (-p): Debian's modules-enabled
// files, which the rendered configuration includes, name the stream module
// relative to the prefix.
func (n nginxBinary) prefix(t *testing.T, dir string) {
	t.Helper()
	if n.streamModule == "" {
		return
	}
	if err := os.Symlink(filepath.Dir(n.streamModule), filepath.Join(dir, "modules")); err != nil {
		t.Fatal(err)
	}
}

func findNginx(t *testing.T) nginxBinary {
	t.Helper()
	path, err := exec.LookPath("nginx")
	if err != nil {
		path = "/usr/sbin/nginx"
		if _, err := os.Stat(path); err != nil {
			t.Fatal("nginx is not installed: run hack/test-deps.sh (make test does)")
		}
	}
	out, err := exec.Command(path, "-V").CombinedOutput()
	if err != nil {
		t.Fatalf("nginx -V: %v\n%s", err, out)
	}
	n := nginxBinary{path: path}
	if strings.Contains(string(out), "--with-stream=dynamic") {
		n.streamModule = "/usr/lib/nginx/modules/ngx_stream_module.so"
		if _, err := os.Stat(n.streamModule); err != nil {
			t.Fatal("nginx's stream module is not installed (Debian package libnginx-mod-stream): run hack/test-deps.sh")
		}
	} else if !strings.Contains(string(out), "--with-stream") {
		t.Fatalf("%s has no stream module", path)
	}
	return n
}

func nssWrapper(t *testing.T) string {
	t.Helper()
	matches, _ := filepath.Glob("/usr/lib/*/libnss_wrapper.so")
	if len(matches) == 0 {
		t.Fatal("libnss_wrapper.so is not installed (Debian package libnss-wrapper): run hack/test-deps.sh")
	}
	return matches[0]
}

func TestNginxConfReResolvesBackendsThroughClusterDNS(t *testing.T) {
	b := balancerWith([]networkingv1alpha1.BalancerPort{tcp("http", 80, 8080)}, backend("a", 3), backend("b", 1))
	for server, want := range map[string]string{"10.96.0.10": "resolver 10.96.0.10 valid=5s;", "fd00::a": "resolver [fd00::a] valid=5s;"} {
		conf := NginxConf(b, RenderOptions{Resolve: ClusterDNS("cluster.local"), DNSServer: server})
		for _, w := range []string{want, "server shop-a.team-a.svc.cluster.local:80 weight=3 max_fails=3 fail_timeout=10s resolve;", "server shop-b.team-a.svc.cluster.local:80 weight=1 max_fails=3 fail_timeout=10s resolve;"} {
			if !strings.Contains(conf, w) {
				t.Errorf("nginx.conf with DNS server %s lacks %q:\n%s", server, w, conf)
			}
		}
	}
	if conf := NginxConf(b, RenderOptions{Resolve: ClusterDNS("cluster.local")}); strings.Contains(conf, "resolve") {
		t.Errorf("without a DNS server nginx must not be told to re-resolve:\n%s", conf)
	}
}

func TestNginxRunsOneWorkerPerCPUOfItsLimit(t *testing.T) {
	for limit, want := range map[string]string{"": "auto", "500m": "1", "1": "1", "1500m": "2", "4": "4", "1000": "64"} {
		b := balancerWith([]networkingv1alpha1.BalancerPort{tcp("http", 80, 8080)}, backend("v1", 1))
		if limit != "" {
			b.Spec.Resources = &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(limit)}}
		}
		if conf := NginxConf(b, RenderOptions{Resolve: ClusterDNS("example.org")}); !strings.Contains(conf, "worker_processes "+want+";\n") {
			t.Errorf("CPU limit %q: want worker_processes %s in:\n%s", limit, want, conf)
		}
	}
}
