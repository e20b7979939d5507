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
	"os"
	"path/filepath"
	"testing"
)

func TestResolveClusterDNS(t *testing.T) {
	dir := t.TempDir()
	pod := filepath.Join(dir, "pod")
	if err := os.WriteFile(pod, []byte("search ns.svc.cluster.local svc.cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("# no servers\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		flag      string
		inCluster bool
		file      string
		want      string
		wantErr   bool
	}{
		{flag: "auto", inCluster: true, file: pod, want: "10.96.0.10"},
		{flag: "auto", inCluster: false, file: pod, want: ""},
		{flag: "auto", inCluster: true, file: empty, wantErr: true},
		{flag: "auto", inCluster: true, file: filepath.Join(dir, "missing"), wantErr: true},
		{flag: "none", inCluster: true, file: pod, want: ""},
		{flag: "10.0.0.10", inCluster: false, file: pod, want: "10.0.0.10"},
		{flag: "fd00::a", inCluster: true, file: pod, want: "fd00::a"},
		{flag: "kube-dns", inCluster: true, file: pod, wantErr: true},
	} {
		got, err := ResolveClusterDNS(tc.flag, tc.inCluster, tc.file)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("ResolveClusterDNS(%q, %v, %s) = %q, %v; want %q, error %v", tc.flag, tc.inCluster, filepath.Base(tc.file), got, err, tc.want, tc.wantErr)
		}
	}
}
