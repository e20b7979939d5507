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

package e2e

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// The manager runs as two replicas, as config/manager deploys it: both
// serve webhooks and metrics, one holds the Lease and reconciles. The API
// server reaches the webhooks through an nginx TCP proxy over both
// replicas — what the webhook Service does in a cluster.

// replica is one manager process.
type replica struct {
	name                                string
	webhookPort, metricsPort, probePort int
	apiPort                             int
	starts                              int
	cmd                                 *exec.Cmd
	done                                chan struct{}
	log                                 string
}

var (
	replicas       []*replica
	managerConfig  string // the manager ServiceAccount's kubeconfig
	webhookCertDir string
	// apiCertDir holds the API's certificate, signed by a local CA whose
	// ca.crt the API specs trust.
	apiCertDir       string
	webhookFrontPort int
	nginx            *exec.Cmd
)

// start runs the replica's manager (again), logging to a file of its own
// per start.
func (r *replica) start() {
	r.starts++
	r.log = filepath.Join(artifacts, fmt.Sprintf("manager-%s-%d.log", r.name, r.starts))
	logFile, err := os.Create(r.log)
	Expect(err).NotTo(HaveOccurred())
	r.cmd = exec.Command(filepath.Join(root, "bin", "manager"),
		"--kubeconfig", managerConfig,
		"--leader-elect", "--leader-election-namespace", managerNS,
		"--webhook-cert-path", webhookCertDir, "--webhook-port", fmt.Sprint(r.webhookPort),
		"--metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", r.metricsPort),
		"--health-probe-bind-address", fmt.Sprintf("127.0.0.1:%d", r.probePort),
		"--api-bind-address", fmt.Sprintf("127.0.0.1:%d", r.apiPort),
		"--api-cert-path", apiCertDir,
		// As under OLM: the manager applies the owner-record policy itself.
		"--ensure-admission-policy",
	)
	r.cmd.Stdout, r.cmd.Stderr = logFile, logFile
	Expect(r.cmd.Start()).To(Succeed())
	r.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) {
		_ = cmd.Wait()
		_ = logFile.Close()
		close(done)
	}(r.cmd, r.done)
	Eventually(func() (int, error) {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", r.probePort))
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		return resp.StatusCode, nil
	}, "60s").Should(Equal(http.StatusOK), "replica %s ready", r.name)
}

func (r *replica) alive() bool {
	if r.cmd == nil {
		return false
	}
	select {
	case <-r.done:
		return false
	default:
		return true
	}
}

// stop sends sig and waits for the process to end.
func (r *replica) stop(sig syscall.Signal) {
	if !r.alive() {
		return
	}
	_ = r.cmd.Process.Signal(sig)
	select {
	case <-r.done:
	case <-time.After(30 * time.Second):
		_ = r.cmd.Process.Kill()
		<-r.done
	}
}

func (r *replica) logText() string {
	b, _ := os.ReadFile(r.log)
	return string(b)
}

// leads reports whether this run of the replica acquired the Lease.
func (r *replica) leads() bool {
	return r.alive() && strings.Contains(strings.ToLower(r.logText()), "successfully acquired lease")
}

// leader is the replica that holds the Lease, waiting for one.
func leader() *replica {
	var l *replica
	Eventually(func() *replica {
		l = nil
		for _, r := range replicas {
			if r.leads() {
				l = r
			}
		}
		return l
	}, "60s", "100ms").ShouldNot(BeNil(), "a replica holds the Lease")
	return l
}

// follower is an alive replica that is not the leader.
func follower(l *replica) *replica {
	for _, r := range replicas {
		if r != l && r.alive() {
			return r
		}
	}
	Fail("no follower is running")
	return nil
}

// liveAPIPort is the API port of a running replica.
func liveAPIPort() int {
	for _, r := range replicas {
		if r.alive() {
			return r.apiPort
		}
	}
	return replicas[0].apiPort
}

// liveMetricsPort is the metrics port of the leader (only it runs the
// controllers, so only it has their metrics), or of any running replica.
func liveMetricsPort() int {
	for _, r := range replicas {
		if r.leads() {
			return r.metricsPort
		}
	}
	for _, r := range replicas {
		if r.alive() {
			return r.metricsPort
		}
	}
	return replicas[0].metricsPort
}

var nginxOnce sync.Once

// startWebhookFront runs nginx as a TCP proxy on webhookFrontPort over the
// replicas' webhook ports; TLS passes through to the replicas.
func startWebhookFront() {
	dir := filepath.Join(artifacts, "nginx")
	Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
	var upstreams, modules string
	for _, r := range replicas {
		upstreams += fmt.Sprintf("    server 127.0.0.1:%d max_fails=1 fail_timeout=2s;\n", r.webhookPort)
	}
	if out, err := exec.Command("nginx", "-V").CombinedOutput(); err == nil && strings.Contains(string(out), "--with-stream=dynamic") {
		modules = "load_module /usr/lib/nginx/modules/ngx_stream_module.so;\n"
	}
	conf := modules + `daemon off;
worker_processes 1;
pid ` + filepath.Join(dir, "nginx.pid") + `;
error_log ` + filepath.Join(dir, "error.log") + ` info;
events { worker_connections 256; }
stream {
  upstream webhooks {
` + upstreams + `  }
  server {
    listen 127.0.0.1:` + fmt.Sprint(webhookFrontPort) + `;
    proxy_pass webhooks;
    proxy_connect_timeout 1s;
    proxy_next_upstream on;
    proxy_next_upstream_tries 2;
  }
}
`
	Expect(os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(conf), 0o644)).To(Succeed())
	nginx = exec.Command("nginx", "-p", dir, "-c", filepath.Join(dir, "nginx.conf"))
	out, err := os.Create(filepath.Join(dir, "nginx.out"))
	Expect(err).NotTo(HaveOccurred())
	nginx.Stdout, nginx.Stderr = out, out
	Expect(nginx.Start()).To(Succeed(), "nginx (hack/test-deps.sh installs it)")
}

func stopWebhookFront() {
	nginxOnce.Do(func() {
		if nginx != nil && nginx.Process != nil {
			_ = nginx.Process.Signal(syscall.SIGQUIT)
			done := make(chan struct{})
			go func() { _ = nginx.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				_ = nginx.Process.Kill()
			}
		}
	})
}

// managerLogs are every log file of every replica run.
func managerLogs() []string {
	logs, _ := filepath.Glob(filepath.Join(artifacts, "manager-*.log"))
	return logs
}
