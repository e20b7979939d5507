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
	"maps"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
)

// sshd is OpenSSH's sshd (Debian package openssh-server), started for one
// test on loopback addresses with a host key, a config and an authorized
// key of its own, all in a temporary directory.
type sshd struct {
	log        string // path of its log
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
		"PermitRootLogin prohibit-password\nSubsystem sftp internal-sftp\nLogLevel INFO\n" +
		// Room for the connections ansible opens at once.
		"MaxStartups 100\nMaxSessions 100\n")
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
	return &sshd{log: logFile.Name(), port: port, clientKey: write("id_ed25519", clientPEM), knownHosts: write("known_hosts", []byte(known.String()))}
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

// Each operation's own ConfigMap — the inventory and run.sh the Job runs —
// against the e2e installer image's stand-in playbooks
// (hack/installer/kubespray), over real SSH to sshd on three loopback
// addresses, host keys pinned by a known_hosts in the "SSH Secret". The
// paths the Job mounts become temporary ones; everything else is as
// generated. After each operation the hosts' markers say what it did:
// create (two hosts at v1.31.4, the admin kubeconfig), scale-up (the third
// host, prechecked first, and only it), upgrade (every host at v1.32.0),
// scale-down (worker1's marker gone), reset (none left).
func TestOperationsOverRealSSH(t *testing.T) {
	ansibleTool(t, "ansible-playbook")
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	standIns, err := filepath.Abs("../../hack/installer/kubespray")
	if err != nil {
		t.Fatal(err)
	}
	d := startSSHD(t, "127.0.0.1", "127.0.0.2", "127.0.0.3")
	dir := t.TempDir()
	markers, artifacts, given, work := filepath.Join(dir, "markers"), filepath.Join(dir, "artifacts"), filepath.Join(dir, "given"), filepath.Join(dir, "work")
	for _, p := range []string{markers, artifacts, given, work} {
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	known, err := os.ReadFile(d.knownHosts)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(given, KnownHostsKey), known, 0o600); err != nil {
		t.Fatal(err)
	}
	kc := cluster(func(kc *clusterv1alpha1.KubernetesCluster) {
		kc.Spec.Masters = []clusterv1alpha1.Host{{Address: "127.0.0.1", Name: "cp1"}}
		kc.Spec.Nodes = []clusterv1alpha1.Host{{Address: "127.0.0.2", Name: "worker1"}}
		kc.Spec.SSHSecretRef.User = me.Username
		kc.Spec.Installer.ExtraVars = map[string]string{"ansible_port": fmt.Sprint(d.port),
			"ansible_python_interpreter": "/usr/bin/python3", "marker_dir": markers}
	})

	operation := func(op clusterv1alpha1.Operation) {
		t.Helper()
		objs, err := OperationObjects(kc, op)
		if err != nil {
			t.Fatal(err)
		}
		cm := objs[0].(*corev1.ConfigMap)
		config := filepath.Join(dir, op.ID)
		if err := os.MkdirAll(config, 0o700); err != nil {
			t.Fatal(err)
		}
		mounted := strings.NewReplacer(configDir+"/", config+"/", sshKeyPath, d.clientKey, artifactsDir, artifacts, "cd /kubespray", "cd "+standIns)
		for name, content := range cm.Data {
			if err := os.WriteFile(filepath.Join(config, name), []byte(mounted.Replace(content)), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		// The kubeconfig upload goes to the API, which is not here: the
		// admin.conf it would send is checked below instead.
		script, _ := os.ReadFile(filepath.Join(config, "run.sh"))
		var kept []string
		for _, l := range strings.Split(string(script), "\n") {
			if !strings.Contains(l, "store-secret.py") || strings.Contains(l, "trap") {
				kept = append(kept, l)
			}
		}
		if err := os.WriteFile(filepath.Join(config, "run.sh"), []byte(strings.Join(kept, "\n")), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("sh", filepath.Join(config, "run.sh"))
		cmd.Env = append(ansibleEnv(t), "ANSIBLE_PIPELINING=True", "KUBEFORGE_GIVEN_HOSTS_DIR="+given, "KUBEFORGE_SSH_WORK_DIR="+work)
		log, err := os.Create(filepath.Join(dir, op.ID+".log"))
		if err != nil {
			t.Fatal(err)
		}
		defer log.Close()
		cmd.Stdout, cmd.Stderr = log, log
		t0 := time.Now()
		err = cmd.Run()
		out, _ := os.ReadFile(log.Name())
		if err != nil {
			sshdLog, _ := os.ReadFile(d.log)
			t.Fatalf("%s: %v\n%s\nsshd:\n%s", op.ID, err, out, sshdLog)
		}
		t.Logf("%s: %s", op.ID, time.Since(t0).Round(time.Millisecond))
		if !strings.Contains(string(out), "checking host keys against the SSH Secret's known_hosts") {
			t.Errorf("%s did not check host keys strictly:\n%s", op.ID, out)
		}
		// What the controller records when the Job succeeds.
		now := metav1.Now()
		finish(kc, &op, true, "", "", &now)
	}
	marks := func() map[string]string {
		t.Helper()
		out := map[string]string{}
		entries, err := os.ReadDir(markers)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(markers, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			out[e.Name()] = string(b)
		}
		return out
	}
	expect := func(step string, want map[string]string) {
		t.Helper()
		got := marks()
		if len(got) != len(want) {
			t.Fatalf("after %s: markers on %v, want on %v", step, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
		}
		for host, version := range want {
			if !strings.Contains(got[host], "kube_version="+version+"\n") {
				t.Fatalf("after %s: host %s's marker %q, want kube_version=%s", step, host, got[host], version)
			}
		}
	}

	operation(clusterv1alpha1.Operation{ID: "precheck-1", Type: clusterv1alpha1.OpPrecheck})
	expect("precheck", map[string]string{})
	operation(clusterv1alpha1.Operation{ID: "create-2", Type: clusterv1alpha1.OpCreate, Version: "v1.31.4", Hosts: []string{"127.0.0.2"}})
	expect("create", map[string]string{"cp1": "v1.31.4", "worker1": "v1.31.4"})
	if m := marks()["cp1"]; !strings.Contains(m, "role=control-plane") || !strings.Contains(m, "address=127.0.0.1") {
		t.Errorf("cp1's marker: %q", m)
	}
	admin, err := os.ReadFile(filepath.Join(artifacts, "admin.conf"))
	if err != nil || !strings.Contains(string(admin), "server: https://127.0.0.1:6443") || !strings.Contains(string(admin), "name: prod") {
		t.Fatalf("admin.conf (%v):\n%s", err, admin)
	}

	kc.Spec.Nodes = append(kc.Spec.Nodes, clusterv1alpha1.Host{Address: "127.0.0.3", Name: "worker2"})
	operation(clusterv1alpha1.Operation{ID: "scale-up-3", Type: clusterv1alpha1.OpScaleUp, Hosts: []string{"127.0.0.3"}})
	expect("scale-up", map[string]string{"cp1": "v1.31.4", "worker1": "v1.31.4", "worker2": "v1.31.4"})
	if log, _ := os.ReadFile(filepath.Join(dir, "scale-up-3.log")); !strings.Contains(string(log), "precheck.yml --limit=worker2") {
		t.Errorf("the scale-up did not precheck worker2:\n%s", log)
	}

	operation(clusterv1alpha1.Operation{ID: "upgrade-4", Type: clusterv1alpha1.OpUpgrade, Version: "v1.32.0"})
	expect("upgrade", map[string]string{"cp1": "v1.32.0", "worker1": "v1.32.0", "worker2": "v1.32.0"})

	// worker1 leaves the spec, and its name with it: it is removed under
	// the name it was installed under (status.nodeNames).
	kc.Spec.Nodes = kc.Spec.Nodes[1:]
	operation(clusterv1alpha1.Operation{ID: "scale-down-5", Type: clusterv1alpha1.OpScaleDown, Hosts: []string{"127.0.0.2"}})
	expect("scale-down", map[string]string{"cp1": "v1.32.0", "worker2": "v1.32.0"})
	if kc.Status.NodeNames["127.0.0.2"] != "" || kc.Status.NodeNames["127.0.0.3"] != "worker2" {
		t.Errorf("status.nodeNames after the scale-down: %v", kc.Status.NodeNames)
	}

	operation(clusterv1alpha1.Operation{ID: "reset-6", Type: clusterv1alpha1.OpReset})
	expect("reset", map[string]string{})
}
