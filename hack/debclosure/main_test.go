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

package main

import (
	"reflect"
	"strings"
	"testing"
)

const packages = `Package: app
Depends: libc6 (>= 2.38), python3:any, mail-transport-agent | postfix
Pre-Depends: init-system-helpers (>= 1.54~)

Package: libc6
Depends: libgcc-s1

Package: libgcc-s1
Depends: libc6

Package: python3
Depends: python3.13 (>= 3.13.1-1~)

Package: python3.13
Depends: libc6

Package: exim4-daemon-light
Provides: mail-transport-agent

Package: init-system-helpers
Depends: perl-base

Package: perl-base

Package: broken
Depends: nowhere
`

func TestClosure(t *testing.T) {
	idx, err := parse(strings.NewReader(packages))
	if err != nil {
		t.Fatal(err)
	}
	got, err := idx.closure([]string{"app"}, map[string]bool{"init-system-helpers": true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"app", "exim4-daemon-light", "libc6", "libgcc-s1", "python3", "python3.13"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("closure = %v, want %v (versions and :any dropped, a virtual package by its provider, a cycle once, the excluded left out)", got, want)
	}
	if _, err := idx.closure([]string{"broken"}, nil); err == nil || !strings.Contains(err.Error(), "nowhere") {
		t.Fatalf("a dependency nothing provides: err %v", err)
	}
	if _, err := idx.closure([]string{"missing"}, nil); err == nil {
		t.Fatal("a package not in the index must be an error")
	}
}
