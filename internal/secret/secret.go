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

// Package secret makes the values kubeforge generates for its users:
// random passwords from crypto/rand, and the argon2id hashes an IDE
// checks them against.
package secret

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"math/big"
	"strings"

	"golang.org/x/crypto/argon2"
)

// alphabet has no character that needs quoting anywhere: in SQL, in a
// URL, in a shell.
const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// Random is a string of n letters and digits from crypto/rand: about 5.95
// bits each.
func Random(n int) (string, error) {
	b := make([]byte, n)
	max := big.NewInt(int64(len(alphabet)))
	for i := range b {
		k, err := rand.Int(rand.Reader, max)
		if err != nil {
			return "", fmt.Errorf("generating a secret: %w", err)
		}
		b[i] = alphabet[k.Int64()]
	}
	return string(b), nil
}

// Argon2id parameters of Hash. A slow hash protects a password a person
// chose, which can be guessed; Hash is given only generated passwords (a
// Workspace's: 24 letters and digits from crypto/rand, ≈ 143 bits), which
// no speed of hashing lets anyone guess, and the hash sits beside the
// password in the same Secret (code-server's session cookie is the hash
// itself). So the cost is low (1 MiB, one pass, one lane: ≈ 1 ms of CPU),
// not OWASP's set for chosen passwords (19 MiB, two passes: ≈ 30–40 ms per
// Workspace, on the manager's cores). code-server reads the parameters
// from the hash, so the Secrets made with the earlier ones keep working.
const (
	argonMemoryKiB = 1024
	argonTime      = 1
	argonThreads   = 1
	argonKeyLen    = 32
	argonSaltLen   = 16
)

// Hash is the argon2id hash of password in the PHC string format
// ($argon2id$v=19$m=…,t=…,p=…$salt$hash, unpadded base64) that
// code-server's HASHED_PASSWORD takes.
func Hash(password string) (string, error) {
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("generating a salt: %w", err)
	}
	return hashWith(password, salt), nil
}

func hashWith(password string, salt []byte) string {
	key := argon2.IDKey([]byte(password), salt, argonTime, argonMemoryKiB, argonThreads, argonKeyLen)
	enc := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemoryKiB, argonTime, argonThreads,
		enc.EncodeToString(salt), enc.EncodeToString(key))
}

// Verify reports whether phc, an argon2id hash in the PHC string format
// (as Hash writes it, with its parameters or others), is the hash of
// password.
func Verify(password, phc string) bool {
	parts := strings.Split(phc, "$")
	if len(parts) != 6 || parts[1] != "argon2id" || parts[2] != fmt.Sprintf("v=%d", argon2.Version) {
		return false
	}
	var m, t uint32
	var p uint8
	// Within what argon2id allows, and no more than any hash kubeforge made
	// (19 MiB and two passes before 1 MiB and one): a hash that asks for
	// gigabytes is refused, not computed.
	if n, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil || n != 3 ||
		t == 0 || t > 4 || p == 0 || m < 8*uint32(p) || m > 64*1024 {
		return false
	}
	salt, err1 := base64.RawStdEncoding.DecodeString(parts[4])
	want, err2 := base64.RawStdEncoding.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(want) == 0 {
		return false
	}
	got := argon2.IDKey([]byte(password), salt, t, m, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}
