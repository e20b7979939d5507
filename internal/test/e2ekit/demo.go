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

package e2ekit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// UntilCtrlC ends a line make demo prints that runs until interrupted
// (a port-forward): a newcomer's script cannot run it line by line.
const UntilCtrlC = "# runs until Ctrl-C"

// TryLines are the indented command lines of make demo's closing message
// (from "The demo is running" to "Manager log:"), continuations joined.
func TryLines(out string) []string {
	start := strings.Index(out, "The demo is running")
	if start < 0 {
		return nil
	}
	var lines []string
	cont := false
	for _, l := range strings.Split(out[start:], "\n")[1:] {
		if strings.HasPrefix(l, "Manager log:") {
			break
		}
		if !cont && !strings.HasPrefix(l, "  ") {
			continue // prose
		}
		l = strings.TrimSpace(l)
		if cont {
			lines[len(lines)-1] = strings.TrimSuffix(lines[len(lines)-1], `\`) + " " + l
		} else {
			lines = append(lines, l)
		}
		cont = strings.HasSuffix(l, `\`)
	}
	return lines
}

// ReadmeDemoBlock is the first sh block of README.md's "make demo" section.
func ReadmeDemoBlock(root string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		return "", err
	}
	s := string(b)
	i := strings.Index(s, "### `make demo`")
	if i < 0 {
		return "", fmt.Errorf("README.md has no make demo section")
	}
	s = s[i:]
	start := strings.Index(s, "```sh\n")
	if start < 0 {
		return "", fmt.Errorf("README.md's make demo section has no sh block")
	}
	s = s[start+len("```sh\n"):]
	end := strings.Index(s, "```")
	if end < 0 {
		return "", fmt.Errorf("README.md's make demo block does not end")
	}
	return s[:end], nil
}
