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
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
)

// sshd is OpenSSH's sshd (Debian package openssh-server), started for one
// test on loopback addresses with a host key, a config and an authorized
// key of its own, all in a temporary directory.
type sshd struct {
	port       int
	clientKey  string // path of the client's private key
	knownHosts string // path of a known_hosts file that pins its host key
}

func startSSHD(t *testing.T, addrs ...string) *sshd {
	t.Helper()
	bin, err := exec.LookPath("sshd")
	if err != nil {
		if bin, err = exec.LookPath("/usr/sbin/sshd"); err != nil {
			t.Fatal("sshd is not installed (Debian package openssh-server): run hack/test-deps.sh (make test does)")
		}
	}
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	newKey := func() (ed25519.PrivateKey, []byte) {
		_, key, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		block, err := ssh.MarshalPrivateKey(key, "")
		if err != nil {
			t.Fatal(err)
		}
		return key, pem.EncodeToMemory(block)
	}
	hostKey, hostPEM := newKey()
	clientKey, clientPEM := newKey()
	hostPub, _ := ssh.NewPublicKey(hostKey.Public())
	clientPub, _ := ssh.NewPublicKey(clientKey.Public())

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	var cfg, known strings.Builder
	fmt.Fprintf(&cfg, "Port %d\n", port)
	for _, a := range addrs {
		fmt.Fprintf(&cfg, "ListenAddress %s\n", a)
		fmt.Fprintf(&known, "[%s]:%d %s", a, port, ssh.MarshalAuthorizedKey(hostPub))
	}
	fmt.Fprintf(&cfg, "HostKey %s\nAuthorizedKeysFile %s\nPidFile %s\n", write("host_key", hostPEM),
		write("authorized_keys", ssh.MarshalAuthorizedKey(clientPub)), filepath.Join(dir, "sshd.pid"))
	cfg.WriteString("UsePAM no\nStrictModes no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n" +
		"PermitRootLogin prohibit-password\nSubsystem sftp internal-sftp\nLogLevel ERROR\n")
	config := write("sshd_config", []byte(cfg.String()))

	// As root, sshd wants its privilege separation directory; made here
	// only if missing, and removed again.
	if os.Geteuid() == 0 {
		if _, err := os.Stat("/run/sshd"); errors.Is(err, os.ErrNotExist) {
			if err := os.Mkdir("/run/sshd", 0o755); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = os.Remove("/run/sshd") })
		}
	}
	// Its log goes to a file, not a pipe that its sessions would hold open.
	logFile, err := os.Create(filepath.Join(dir, "sshd.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd := exec.Command(bin, "-D", "-e", "-f", config)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("%s:%d", addrs[0], port), time.Second)
		if err == nil {
			_ = c.Close()
			break
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(logFile.Name())
			t.Fatalf("sshd did not listen on %s:%d: %v\n%s", addrs[0], port, err, log)
		}
	}
	return &sshd{port: port, clientKey: write("id_ed25519", clientPEM), knownHosts: write("known_hosts", []byte(known.String()))}
}

// The precheck playbook over real SSH to real sshd: two hosts on two
// loopback addresses, host keys pinned (StrictHostKeyChecking=yes), the
// inventory the operator renders. It passes; each threshold it checks
// (memory, free disk, clock) fails on every host it is given, naming the
// host and the figure; a scale-up's precheck (--limit) checks the new host
// only.
func TestPrecheckOverRealSSH(t *testing.T) {
	playbook := ansibleTool(t, "ansible-playbook")
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	d := startSSHD(t, "127.0.0.1", "127.0.0.2")
	kc := cluster(func(kc *clusterv1alpha1.KubernetesCluster) {
		kc.Spec.Masters = []clusterv1alpha1.Host{{Address: "127.0.0.1", Name: "cp1"}}
		kc.Spec.Nodes = []clusterv1alpha1.Host{{Address: "127.0.0.2", Name: "worker1"}}
		kc.Spec.SSHSecretRef.User = me.Username
		kc.Spec.Installer.ExtraVars = map[string]string{"ansible_port": fmt.Sprint(d.port), "ansible_python_interpreter": "/usr/bin/python3"}
	})
	inv := writeInventory(t, kc)
	play := filepath.Join(t.TempDir(), "precheck.yml")
	if err := os.WriteFile(play, []byte(PrecheckPlaybook), 0o644); err != nil {
		t.Fatal(err)
	}
	// As kubespray's ansible.cfg runs ansible: pipelining, and one SSH
	// connection per host kept open between tasks. The output goes to a
	// file: the connection a task leaves open holds a pipe until it ends.
	control := t.TempDir()
	run := func(args ...string) (string, error) {
		cmd := exec.Command(playbook, append([]string{"-i", inv, "--private-key", d.clientKey, "-u", me.Username, play}, args...)...)
		cmd.Env = append(ansibleEnv(t), "ANSIBLE_HOST_KEY_CHECKING=True", "ANSIBLE_PIPELINING=True",
			"ANSIBLE_SSH_ARGS=-o ControlMaster=auto -o ControlPersist=10s -o UserKnownHostsFile="+d.knownHosts+" -o StrictHostKeyChecking=yes -o ConnectTimeout=10",
			"ANSIBLE_SSH_CONTROL_PATH_DIR="+control)
		f, err := os.CreateTemp(t.TempDir(), "ansible-*.log")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd.Stdout, cmd.Stderr = f, f
		t0 := time.Now()
		err = cmd.Run()
		t.Logf("ansible-playbook %v: %s", args, time.Since(t0).Round(time.Millisecond))
		out, _ := os.ReadFile(f.Name())
		return string(out), err
	}
	recap := func(out string) string {
		if i := strings.Index(out, "PLAY RECAP"); i >= 0 {
			return out[i:]
		}
		return ""
	}

	out, err := run()
	if err != nil {
		t.Fatalf("precheck over SSH: %v\n%s", err, out)
	}
	for _, h := range []string{"cp1", "worker1"} {
		if !strings.Contains(recap(out), h) || !strings.Contains(out, "ok: ["+h+"]") {
			t.Fatalf("host %s was not checked over SSH:\n%s", h, out)
		}
	}

	// Every threshold missed, on every host, reported at once.
	out, err = run("-e", "minimal_master_memory_mb=100000000 minimal_node_memory_mb=100000000 kubeforge_min_disk_gb=100000000 kubeforge_max_clock_skew_seconds=-1")
	if err == nil {
		t.Fatalf("the precheck passed with thresholds no host meets:\n%s", out)
	}
	for _, h := range []string{"cp1", "worker1"} {
		line := ""
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, `"msg": "`+h+": ") {
				line = l
			}
		}
		for _, says := range []string{"MB of memory, at least 100000000 MB needed", "GiB free on /", "at least 100000000 GiB needed", "clock off by"} {
			if !strings.Contains(line, says) {
				t.Errorf("host %s: its failure %q does not say %q\n%s", h, line, says, out)
			}
		}
	}

	// A scale-up's precheck: the new host only.
	out, err = run("--limit", "worker1", "-e", "kubeforge_min_disk_gb=100000000")
	if err == nil || !strings.Contains(out, "worker1: ") || strings.Contains(recap(out), "cp1") {
		t.Fatalf("the precheck limited to worker1 (err %v):\n%s", err, out)
	}
	script := Script(kc, clusterv1alpha1.Operation{ID: "scale-up-2", Type: clusterv1alpha1.OpScaleUp, Hosts: []string{"127.0.0.2"}})
	pre := strings.Index(script, "precheck.yml --limit='worker1'")
	scale := strings.Index(script, "scale.yml --limit='worker1'")
	if pre < 0 || scale < 0 || pre > scale {
		t.Fatalf("a scale-up must precheck its new hosts before scale.yml:\n%s", script)
	}
}
