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

// Command localca writes a local CA and a serving certificate it signs
// (ca.crt, tls.crt, tls.key) into a directory, for the manager's API on a
// local cluster (make demo): go run ./hack/localca -dir DIR localhost 127.0.0.1.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/kubeforge/kubeforge/internal/localca"
)

func main() {
	dir := flag.String("dir", "", "the directory to write ca.crt, tls.crt and tls.key into")
	flag.Parse()
	if *dir == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: localca -dir DIR HOST...")
		os.Exit(2)
	}
	ca, err := localca.New("kubeforge local CA")
	if err == nil {
		err = ca.WriteServing(*dir, flag.Args()...)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "localca:", err)
		os.Exit(1)
	}
}
