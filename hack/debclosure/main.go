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

// Command debclosure prints the packages an image needs, from a Debian
// Packages index: the ones named and everything they depend on (Depends
// and Pre-Depends), one name per line, sorted. Of alternatives (a | b) the
// first that is a package, or is provided by one, is taken; version
// constraints are not checked (one suite's index is consistent). The
// scripts unpack the list without running maintainer scripts
// (hack/image-lib.sh).
//
//	debclosure -index Packages [-exclude name,...] PACKAGE...
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

type index struct {
	deps     map[string][]string // package → its dependency groups, "a|b" each
	provides map[string][]string // virtual name → packages providing it
}

// parse reads the stanzas of a Packages file.
func parse(r io.Reader) (*index, error) {
	idx := &index{deps: map[string][]string{}, provides: map[string][]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	var name string
	var groups []string
	flush := func() {
		if name != "" {
			if _, dup := idx.deps[name]; !dup {
				idx.deps[name] = groups
			}
		}
		name, groups = "", nil
	}
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			flush()
			continue
		}
		key, value, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		switch key {
		case "Package":
			name = value
		case "Depends", "Pre-Depends":
			groups = append(groups, strings.Split(value, ",")...)
		case "Provides":
			for _, p := range strings.Split(value, ",") {
				p = bare(p)
				idx.provides[p] = append(idx.provides[p], name)
			}
		}
	}
	flush()
	return idx, sc.Err()
}

// bare is a dependency's package name without version and architecture.
func bare(dep string) string {
	dep = strings.TrimSpace(dep)
	if i := strings.IndexAny(dep, " ("); i >= 0 {
		dep = dep[:i]
	}
	dep, _, _ = strings.Cut(dep, ":")
	return dep
}

// resolve picks the package for one dependency group.
func (idx *index) resolve(group string) (string, bool) {
	for _, alt := range strings.Split(group, "|") {
		n := bare(alt)
		if _, ok := idx.deps[n]; ok {
			return n, true
		}
		if ps := idx.provides[n]; len(ps) > 0 {
			return ps[0], true
		}
	}
	return "", false
}

func (idx *index) closure(roots []string, exclude map[string]bool) ([]string, error) {
	seen := map[string]bool{}
	queue := append([]string(nil), roots...)
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if seen[n] || exclude[n] {
			continue
		}
		groups, ok := idx.deps[n]
		if !ok {
			return nil, fmt.Errorf("package %s is not in the index", n)
		}
		seen[n] = true
		for _, g := range groups {
			if strings.TrimSpace(g) == "" {
				continue
			}
			p, ok := idx.resolve(g)
			if !ok {
				return nil, fmt.Errorf("%s depends on %q, which nothing in the index is or provides", n, strings.TrimSpace(g))
			}
			queue = append(queue, p)
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}

func main() {
	indexPath := flag.String("index", "", "the Packages file")
	excludeList := flag.String("exclude", "", "comma-separated packages to leave out with what only they need")
	flag.Parse()
	if *indexPath == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: debclosure -index Packages [-exclude a,b] PACKAGE...")
		os.Exit(2)
	}
	f, err := os.Open(*indexPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "debclosure:", err)
		os.Exit(1)
	}
	defer f.Close()
	idx, err := parse(f)
	if err != nil {
		fmt.Fprintln(os.Stderr, "debclosure:", err)
		os.Exit(1)
	}
	exclude := map[string]bool{}
	for _, e := range strings.Split(*excludeList, ",") {
		if e = strings.TrimSpace(e); e != "" {
			exclude[e] = true
		}
	}
	pkgs, err := idx.closure(flag.Args(), exclude)
	if err != nil {
		fmt.Fprintln(os.Stderr, "debclosure:", err)
		os.Exit(1)
	}
	fmt.Println(strings.Join(pkgs, "\n"))
}
