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

// Package e2ekit is what the end-to-end suites (tests/e2e and its real and
// olm suites) share: commands run from the repository against a suite's
// cluster, and the timings of setup steps kept with the suite's artifacts.
package e2ekit

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Run runs name with args in dir, with the process environment plus env
// and stdin (nil for none), and returns its standard output; its standard
// error is part of the error.
func Run(dir string, env []string, stdin io.Reader, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = stdin
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, stderr.String())
	}
	return string(out), nil
}

// AppendArtifact appends line to the file name in the artifacts directory.
func AppendArtifact(artifacts, name, line string) error {
	f, err := os.OpenFile(filepath.Join(artifacts, name), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteString(line)
	return err
}

// Timed runs a setup step and appends how long it took to timings.txt in
// the artifacts directory; it returns that line.
func Timed(artifacts, what string, step func()) (string, error) {
	t0 := time.Now()
	step()
	line := fmt.Sprintf("%s: %.1fs\n", what, time.Since(t0).Seconds())
	return line, AppendArtifact(artifacts, "timings.txt", line)
}

// ClusterUp starts a suite's cluster with hack/cluster.sh up, run in dir
// with env, and returns its kubeconfig's path. A cluster of the same name
// that an earlier run left (kept, interrupted, or in a machine's snapshot)
// is deleted first, so that its objects never meet this run's; with the
// environment variable reuse set (E2E_REUSE_CLUSTER, PERF_REUSE_CLUSTER), a
// kept cluster is used as it is, which saves a developer its start.
func ClusterUp(dir string, env []string, reuse string) (string, error) {
	if os.Getenv(reuse) == "" {
		env = append(env, "CLUSTER_FRESH=1")
	}
	out, err := Run(dir, env, nil, "hack/cluster.sh", "up")
	return strings.TrimSpace(out), err
}
