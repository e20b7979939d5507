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

package secret

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/crypto/argon2"
)

func TestRandom(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		s, err := Random(32)
		if err != nil {
			t.Fatal(err)
		}
		if len(s) != 32 || strings.Trim(s, alphabet) != "" {
			t.Fatalf("Random(32) = %q: want 32 letters and digits", s)
		}
		if seen[s] {
			t.Fatalf("Random(32) repeated %q", s)
		}
		seen[s] = true
	}
}

// TestHash checks the PHC framing: the parameters as written, and a hash
// that argon2id with the salt read back from the string reproduces, as a
// verifier (code-server's) does; and a new salt each time.
func TestHash(t *testing.T) {
	got, err := Hash("password")
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(got, "$")
	if len(parts) != 6 || parts[1] != "argon2id" || parts[2] != "v=19" || parts[3] != "m=1024,t=1,p=1" {
		t.Fatalf("Hash = %q: want $argon2id$v=19$m=1024,t=1,p=1$<salt>$<hash>", got)
	}
	salt, err := base64.RawStdEncoding.DecodeString(parts[4])
	if err != nil || len(salt) != 16 {
		t.Fatalf("salt %q: want 16 bytes of unpadded base64 (%v)", parts[4], err)
	}
	want := base64.RawStdEncoding.EncodeToString(argon2.IDKey([]byte("password"), salt, 1, 1024, 1, 32))
	if parts[5] != want {
		t.Fatalf("hash %q, want %q", parts[5], want)
	}
	if wrong := base64.RawStdEncoding.EncodeToString(argon2.IDKey([]byte("passwore"), salt, 1, 1024, 1, 32)); wrong == parts[5] {
		t.Fatal("another password gives the same hash")
	}
	again, _ := Hash("password")
	if again == got {
		t.Fatalf("two hashes of one password are equal (%s): the salt is not random", got)
	}
}

// TestVerifyReadsTheParametersFromTheHash: a hash made with the earlier
// parameters (19 MiB, two passes) still verifies, a wrong password does
// not, and a hash asking for more than kubeforge ever used is refused.
func TestVerifyReadsTheParametersFromTheHash(t *testing.T) {
	salt := []byte("0123456789abcdef")
	enc := base64.RawStdEncoding
	phc := func(m, t uint32, key []byte) string {
		return fmt.Sprintf("$argon2id$v=19$m=%d,t=%d,p=1$%s$%s", m, t, enc.EncodeToString(salt), enc.EncodeToString(key))
	}
	earlier := phc(19456, 2, argon2.IDKey([]byte("pw"), salt, 2, 19456, 1, 32))
	if !Verify("pw", earlier) || Verify("px", earlier) {
		t.Fatalf("a hash with the earlier parameters: Verify(right) %v, Verify(wrong) %v", Verify("pw", earlier), Verify("px", earlier))
	}
	now, err := Hash("pw")
	if err != nil || !Verify("pw", now) || Verify("px", now) {
		t.Fatalf("a hash of Hash (%v): want it verified for its password only", err)
	}
	for _, bad := range []string{
		phc(1<<22, 1, make([]byte, 32)), // 4 GiB
		phc(1024, 100, make([]byte, 32)),
		"$argon2i$v=19$m=1024,t=1,p=1$" + enc.EncodeToString(salt) + "$" + enc.EncodeToString(make([]byte, 32)),
		"$argon2id$v=19$m=1024,t=1,p=1$" + enc.EncodeToString(salt) + "$",
	} {
		if Verify("pw", bad) {
			t.Errorf("Verify accepted %q", bad)
		}
	}
}

// BenchmarkHash prints what one generated password's hash costs: each
// new Workspace with a password makes one.
func BenchmarkHash(b *testing.B) {
	for b.Loop() {
		if _, err := Hash("aaaaaaaaaaaaaaaaaaaaaaaa"); err != nil {
			b.Fatal(err)
		}
	}
}
