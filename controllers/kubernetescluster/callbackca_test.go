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
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An operation starts only with the API's CA in hand when the API has
// one: a CA file not written yet is waited for, never replaced by none.
func TestCallbackCAIsWaitedForWhenNotThereYet(t *testing.T) {
	if ca, err := callbackCA(""); err != nil || ca != nil {
		t.Fatalf("no CA file: got %q, %v; want none and no error", ca, err)
	}
	path := filepath.Join(t.TempDir(), "ca.crt")
	if _, err := callbackCA(path); err == nil || !strings.Contains(err.Error(), "the operation starts once it is there") {
		t.Fatalf("a CA file not there yet: got %v, want an error that says the operation waits", err)
	}
	if err := os.WriteFile(path, []byte("PEM"), 0o600); err != nil {
		t.Fatal(err)
	}
	if ca, err := callbackCA(path); err != nil || string(ca) != "PEM" {
		t.Fatalf("the CA file: got %q, %v", ca, err)
	}
}
