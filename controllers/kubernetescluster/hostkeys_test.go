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

package kubernetescluster

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/crypto/ssh"
)

// sshHost is an SSH server on loopback whose host key can change: it
// accepts any client key and answers every command with exit status 0.
type sshHost struct {
	port int
	key  atomic.Pointer[ssh.Signer]
}

func newSSHHost(t *testing.T) *sshHost {
	t.Helper()
	h := &sshHost{}
	h.rotate(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	h.port = l.Addr().(*net.TCPAddr).Port
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go h.serve(c)
		}
	}()
	return h
}

// rotate gives the host a new key, as a reinstalled (or impersonated)
// machine would have.
func (h *sshHost) rotate(t *testing.T) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	h.key.Store(&signer)
}

func (h *sshHost) publicKey() string {
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey((*h.key.Load()).PublicKey())))
}

func (h *sshHost) serve(c net.Conn) {
	cfg := &ssh.ServerConfig{PublicKeyCallback: func(ssh.ConnMetadata, ssh.PublicKey) (*ssh.Permissions, error) { return nil, nil }}
	cfg.AddHostKey(*h.key.Load())
	_, chans, reqs, err := ssh.NewServerConn(c, cfg)
	if err != nil {
		_ = c.Close()
		return
	}
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		ch, chReqs, err := nc.Accept()
		if err != nil {
			continue
		}
		go func() {
			for req := range chReqs {
				_ = req.Reply(true, nil)
				if req.Type == "exec" || req.Type == "shell" {
					_, _ = ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{0}))
					_ = ch.Close()
				}
			}
		}()
	}
}

// The operation script's host-key setup, run for real with OpenSSH's
// client against a loopback SSH server: trust on first use records the
// host's key into the known-hosts Secret (through store-secret.py and the
// API); with the key recorded, the same host connects and a changed key is
// refused; a known_hosts the user gave is checked strictly, and a host it
// does not list is refused.
func TestHostKeysAreTrustedOnFirstUseThenPinned(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is not installed: run hack/test-deps.sh (make test does)")
	}
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Fatal("ssh is not installed (Debian package openssh-client): run hack/test-deps.sh (make test does)")
	}
	host := newSSHHost(t)

	// The API the script records the keys through.
	stored := make(chan map[string]string, 4)
	api := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var patch struct {
			Data map[string]string `json:"data"`
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &patch)
		patch.Data["path"] = r.URL.Path
		stored <- patch.Data
		_, _ = io.WriteString(w, `{"kind":"Secret"}`)
	}))
	defer api.Close()

	dir := t.TempDir()
	for _, d := range []string{"sa", "config", "given", "recorded", "work"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	write := func(path, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, path), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("sa/token", "sa-token")
	write("sa/namespace", "infra")
	write("sa/ca.crt", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: api.Certificate().Raw})))
	write("config/store-secret.py", StoreSecret)
	_, clientKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(clientKey, "")
	if err != nil {
		t.Fatal(err)
	}
	write("id_ed25519", string(pem.EncodeToMemory(block)))

	apiHost, apiPort, _ := net.SplitHostPort(api.Listener.Addr().String())
	// The setup, then what ansible does with its arguments: ssh to the host.
	connect := func() (string, error) {
		script := HostKeySetup + fmt.Sprintf("ssh $ANSIBLE_SSH_ARGS -o ControlMaster=no -o BatchMode=yes -o ConnectTimeout=5 -i %s -p %d root@127.0.0.1 true\n",
			filepath.Join(dir, "id_ed25519"), host.port)
		cmd := exec.Command("sh", "-eu", "-c", script)
		cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(python)+":"+os.Getenv("PATH"),
			"KUBEFORGE_GIVEN_HOSTS_DIR="+filepath.Join(dir, "given"), "KUBEFORGE_RECORDED_HOSTS_DIR="+filepath.Join(dir, "recorded"),
			"KUBEFORGE_SSH_WORK_DIR="+filepath.Join(dir, "work"), "KUBEFORGE_CONFIG_DIR="+filepath.Join(dir, "config"),
			"KUBEFORGE_KNOWN_HOSTS_SECRET=prod-known-hosts", "KUBEFORGE_SA_DIR="+filepath.Join(dir, "sa"),
			"KUBERNETES_SERVICE_HOST="+apiHost, "KUBERNETES_SERVICE_PORT="+apiPort)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	recorded := func() string {
		t.Helper()
		select {
		case data := <-stored:
			if data["path"] != "/api/v1/namespaces/infra/secrets/prod-known-hosts" {
				t.Fatalf("stored into %s", data["path"])
			}
			b, err := base64.StdEncoding.DecodeString(data[KnownHostsKey])
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		default:
			t.Fatal("nothing was recorded")
			return ""
		}
	}
	hostEntry := fmt.Sprintf("[127.0.0.1]:%d", host.port)

	// First use: accepted, and the key recorded.
	if out, err := connect(); err != nil {
		t.Fatalf("first contact: %v\n%s", err, out)
	}
	keys := recorded()
	if !strings.Contains(keys, hostEntry+" "+host.publicKey()) {
		t.Fatalf("the recorded known_hosts %q lacks the host's key %s", keys, host.publicKey())
	}

	// The next operation starts from the recorded keys: the same host
	// connects; one whose key changed is refused.
	write("recorded/"+KnownHostsKey, keys)
	if out, err := connect(); err != nil {
		t.Fatalf("the same host again: %v\n%s", err, out)
	}
	_ = recorded()
	host.rotate(t)
	out, err := connect()
	if err == nil {
		t.Fatalf("a host whose key changed was accepted:\n%s", out)
	}
	if !strings.Contains(out, "REMOTE HOST IDENTIFICATION HAS CHANGED") && !strings.Contains(out, "Host key verification failed") {
		t.Fatalf("refused for another reason: %s", out)
	}
	if again := recorded(); again != keys {
		t.Fatalf("the changed key was recorded: %q", again)
	}

	// The user's known_hosts: strict. Its key for the host works; a host it
	// does not list is refused, and nothing is recorded.
	write("given/"+KnownHostsKey, hostEntry+" "+host.publicKey()+"\n")
	if out, err := connect(); err != nil {
		t.Fatalf("the key the user gave: %v\n%s", err, out)
	}
	write("given/"+KnownHostsKey, "[127.0.0.1]:1 "+host.publicKey()+"\n")
	if out, err := connect(); err == nil {
		t.Fatalf("a host the user's known_hosts does not list was accepted:\n%s", out)
	}
	select {
	case data := <-stored:
		t.Fatalf("recorded with the user's known_hosts: %v", data)
	default:
	}
}
