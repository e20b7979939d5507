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

package perf

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// clockTicks is Linux's USER_HZ, the unit of /proc/<pid>/stat's times.
const clockTicks = 100

// cpuSeconds is the CPU time, user and system, that process pid has used.
func cpuSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name, in parentheses, may hold spaces: the fields
	// counted are those after it, the state first (field 3 of proc(5)).
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields after the name", pid, len(f))
	}
	utime, err1 := strconv.ParseFloat(f[11], 64)
	stime, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: utime %q, stime %q", pid, f[11], f[12])
	}
	return (utime + stime) / clockTicks, nil
}

// apiServerPID finds the kube-apiserver of the cluster named cluster
// (kwokctl runs it as a process whose flags name the cluster's directory).
func apiServerPID(t *testing.T, cluster string) int {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil || len(b) == 0 {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if filepath.Base(args[0]) != "kube-apiserver" || !strings.Contains(string(b), "/clusters/"+cluster+"/") {
			continue
		}
		pid, err := strconv.Atoi(filepath.Base(d))
		if err == nil {
			return pid
		}
	}
	t.Errorf("no kube-apiserver process of cluster %s", cluster)
	return 0
}

// cpuUse is the CPU seconds the API server and the manager had used at
// one moment; the difference of two is what a load cost them.
type cpuUse struct{ apiServer, manager float64 }

func (e *env) cpuUse(apiServer int) cpuUse {
	var u cpuUse
	var err error
	if apiServer != 0 {
		if u.apiServer, err = cpuSeconds(apiServer); err != nil {
			e.t.Errorf("the API server's CPU time: %v", err)
		}
	}
	if u.manager, err = cpuSeconds(e.manager.Process.Pid); err != nil {
		e.t.Errorf("the manager's CPU time: %v", err)
	}
	return u
}

func (u cpuUse) since(before cpuUse) cpuUse {
	return cpuUse{apiServer: u.apiServer - before.apiServer, manager: u.manager - before.manager}
}
