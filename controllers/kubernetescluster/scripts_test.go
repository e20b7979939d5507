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
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
)

// Every operation's script is valid POSIX shell.
func TestScriptsParseAsShell(t *testing.T) {
	kc := cluster(func(kc *clusterv1alpha1.KubernetesCluster) { kc.Spec.SSHSecretRef.User = "o'brien" })
	for _, typ := range []clusterv1alpha1.OperationType{
		clusterv1alpha1.OpPrecheck, clusterv1alpha1.OpCreate, clusterv1alpha1.OpScaleUp,
		clusterv1alpha1.OpScaleDown, clusterv1alpha1.OpUpgrade, clusterv1alpha1.OpReset,
	} {
		path := filepath.Join(t.TempDir(), "run.sh")
		script := Script(kc, clusterv1alpha1.Operation{ID: string(typ) + "-1", Type: typ, Hosts: []string{"10.0.0.21"}, Version: "v1.32.0"})
		if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("sh", "-n", path).CombinedOutput(); err != nil {
			t.Errorf("%s script does not parse: %v\n%s\n%s", typ, err, out, script)
		}
	}
}

// The create Job's uploader PATCHes the kubeconfig into its Secret with the
// ServiceAccount's token, over TLS verified with the ServiceAccount's CA.
func TestStoreKubeconfigPatchesTheSecret(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is not installed: run hack/test-deps.sh (make test does)")
	}
	type request struct {
		method, path, auth, contentType string
		body                            []byte
	}
	got := make(chan request, 1)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- request{r.Method, r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("Content-Type"), body}
		_, _ = io.WriteString(w, `{"kind":"Secret"}`)
	}))
	defer srv.Close()

	dir := t.TempDir()
	sa := filepath.Join(dir, "sa")
	if err := os.MkdirAll(sa, 0o755); err != nil {
		t.Fatal(err)
	}
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	for name, content := range map[string][]byte{"token": []byte("sa-token"), "namespace": []byte("infra"), "ca.crt": ca} {
		if err := os.WriteFile(filepath.Join(sa, name), content, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	script := filepath.Join(dir, "store-secret.py")
	admin := filepath.Join(dir, "admin.conf")
	kubeconfig := []byte("apiVersion: v1\nkind: Config\n")
	if err := os.WriteFile(script, []byte(StoreSecret), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(admin, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	cmd := exec.Command(python, script, "prod-kubeconfig", "kubeconfig", admin)
	cmd.Env = append(os.Environ(), "KUBEFORGE_SA_DIR="+sa, "KUBERNETES_SERVICE_HOST="+host, "KUBERNETES_SERVICE_PORT="+port)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("store-secret.py: %v\n%s", err, out)
	}
	r := <-got
	if r.method != http.MethodPatch || r.path != "/api/v1/namespaces/infra/secrets/prod-kubeconfig" {
		t.Errorf("request %s %s", r.method, r.path)
	}
	if r.auth != "Bearer sa-token" || r.contentType != "application/merge-patch+json" {
		t.Errorf("auth %q content type %q", r.auth, r.contentType)
	}
	var patch struct {
		Data map[string]string `json:"data"`
	}
	if err := json.Unmarshal(r.body, &patch); err != nil {
		t.Fatal(err)
	}
	if patch.Data["kubeconfig"] != base64.StdEncoding.EncodeToString(kubeconfig) {
		t.Errorf("patch %s does not carry the kubeconfig", r.body)
	}
}

// The deadline's SIGTERM reaches the step that runs: the script passes it
// on to ansible-playbook (here a stand-in that records it), waits for it to
// end, and exits 143. Without that, a shell ends (or, as PID 1, ignores the
// signal) and leaves ansible running until SIGKILL.
func TestScriptPassesSIGTERMToTheStep(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	for _, d := range []string{bin, filepath.Join(dir, "given"), filepath.Join(dir, "work")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	got := filepath.Join(dir, "got")
	fake := "#!/bin/sh\ntrap 'echo TERM > " + got + "; exit 143' TERM\necho started > " + got + "\nwhile :; do sleep 0.1; done\n"
	if err := os.WriteFile(filepath.Join(bin, "ansible-playbook"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	// A known_hosts in the SSH Secret: strict checking, nothing to record.
	if err := os.WriteFile(filepath.Join(dir, "given", KnownHostsKey), []byte("[10.0.0.10]:22 ssh-ed25519 AAAA\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "run.sh")
	if err := os.WriteFile(script, []byte(Script(cluster(nil), clusterv1alpha1.Operation{ID: "create-2", Type: clusterv1alpha1.OpCreate})), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", script)
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"),
		"KUBEFORGE_GIVEN_HOSTS_DIR="+filepath.Join(dir, "given"), "KUBEFORGE_SSH_WORK_DIR="+filepath.Join(dir, "work"))
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	// Its own process group, so that nothing it started outlives the test.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	read := func() string { b, _ := os.ReadFile(got); return strings.TrimSpace(string(b)) }
	for deadline := time.Now().Add(10 * time.Second); read() != "started"; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("the step did not start:\n%s", out.String())
		}
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 143 {
			t.Fatalf("the script ended with %v, want exit status 143:\n%s", err, out.String())
		}
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("the script did not end after SIGTERM:\n%s", out.String())
	}
	if read() != "TERM" {
		t.Fatalf("ansible-playbook did not get SIGTERM (it wrote %q):\n%s", read(), out.String())
	}
	if !strings.Contains(out.String(), "kubeforge: stopping the operation (SIGTERM)") {
		t.Errorf("the script did not say why it stopped:\n%s", out.String())
	}
}

// The installer runs an operation's files only when they are exactly the
// ones kubeforge made: the digests in the Job, no file more, none changed.
func TestInstallerRunsOnlyTheFilesKubeforgeMade(t *testing.T) {
	files := map[string]string{"run.sh": "echo ran-the-operation\n", "hosts.yaml": "all: {}\n"}
	sums := OperationSums(files)
	run := func(t *testing.T, mutate func(dir string)) (string, error) {
		dir := t.TempDir()
		for n, c := range files {
			if err := os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		mutate(dir)
		// Only what an installer image is sure to have: a shell and the
		// coreutils it names (the stand-in image has no grep, say).
		bin := t.TempDir()
		for _, tool := range []string{"sh", "wc", "sha256sum"} {
			path, err := exec.LookPath(tool)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(path, filepath.Join(bin, tool)); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command("/bin/sh", "-c", VerifyAndRun)
		cmd.Env = []string{"PATH=" + bin, "KUBEFORGE_CONFIG_DIR=" + dir, "KUBEFORGE_OPERATION_SUMS=" + sums}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run(t, func(string) {}); err != nil || !strings.Contains(out, "ran-the-operation") {
		t.Fatalf("the files kubeforge made did not run: %v\n%s", err, out)
	}
	for name, mutate := range map[string]func(dir string){
		"a changed script": func(dir string) { _ = os.WriteFile(filepath.Join(dir, "run.sh"), []byte("echo planted\n"), 0o644) },
		"a file more":      func(dir string) { _ = os.WriteFile(filepath.Join(dir, "ansible.cfg"), []byte("[defaults]\n"), 0o644) },
		"a file missing":   func(dir string) { _ = os.Remove(filepath.Join(dir, "hosts.yaml")) },
	} {
		t.Run(name, func(t *testing.T) {
			out, err := run(t, mutate)
			if err == nil || strings.Contains(out, "ran-the-operation") || strings.Contains(out, "planted") ||
				!strings.Contains(out, "not the ones kubeforge made") {
				t.Fatalf("ran with %s: %v\n%s", name, err, out)
			}
		})
	}
}
