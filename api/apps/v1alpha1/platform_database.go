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

package v1alpha1

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

const (
	// RotateDatabasePasswordAnnotation on a Platform names the components
	// (comma-separated) whose database password the operator replaces: a
	// new password goes into the component's Secret and onto the server,
	// the component rolls, and the operator removes the annotation.
	RotateDatabasePasswordAnnotation = "kubeforge.io/rotate-db-password"

	// DatabaseFinalizer holds a Platform with database.dropOnDelete until
	// its components' databases and users are dropped.
	DatabaseFinalizer = "apps.kubeforge.io/drop-databases"

	// DatabaseSecretVersionAnnotation on a component's pod template is the
	// resourceVersion of its database Secret that the server was last
	// provisioned with: a new password rolls the component.
	DatabaseSecretVersionAnnotation = "apps.kubeforge.io/database-secret-version"

	// DatabaseConditionType is the Platform condition that reports the
	// database server and the components' databases.
	DatabaseConditionType = "DatabaseReady"

	// MaxMySQLUser is the longest user name MySQL accepts.
	MaxMySQLUser = 32
	// MaxDatabaseIdentifier is the longest database or user name kubeforge
	// accepts for either engine (PostgreSQL's limit; MySQL's is 64).
	MaxDatabaseIdentifier = 63
)

// DefaultDatabasePort is the port of an engine's server when spec.database.port is unset.
func DefaultDatabasePort(engine DatabaseEngine) int32 {
	if engine == DatabasePostgreSQL {
		return 5432
	}
	return 3306
}

// DatabaseName is the name of a component's database: database.name, or
// <namespace>_<platform>_<component> sanitised and shortened, followed by
// a digest of the three names. Sanitising alone is not one-to-one (a-b/c
// and a/b-c both read a_b_c, and long names are cut), so without the
// digest two Platforms could be given one name; with it, two Platforms of
// one name in two namespaces, or of two names that read alike, never share
// a database.
func DatabaseName(p *Platform, c *PlatformComponent) string {
	if c.Database != nil && c.Database.Name != "" {
		return c.Database.Name
	}
	return withDigest(SanitizeDatabaseIdentifier(p.Namespace+"_"+p.Name+"_"+c.Name), p.Namespace+"/"+p.Name+"/"+c.Name, MaxDatabaseIdentifier)
}

// DatabaseUser is the user of a component's database: database.user, or
// the database's name, shortened with a digest of it to fit MySQL's limit.
func DatabaseUser(p *Platform, c *PlatformComponent) string {
	if c.Database != nil && c.Database.User != "" {
		return c.Database.User
	}
	name := DatabaseName(p, c)
	if p.Spec.Database != nil && p.Spec.Database.Engine == DatabaseMySQL && len(name) > MaxMySQLUser {
		return withDigest(name, name, MaxMySQLUser)
	}
	return name
}

// nameDigestLength is how many hex digits of SHA-256 a generated name
// carries: 48 bits, so that finding names of one's own that collide with
// another Platform's costs far more than it could win (a NameConflict:
// the records on the server let nobody take over what is not theirs).
const nameDigestLength = 12

// withDigest is readable cut to leave room, "_", and the digest of source,
// at most max characters.
func withDigest(readable, source string, max int) string {
	sum := sha256.Sum256([]byte(source))
	digest := hex.EncodeToString(sum[:])[:nameDigestLength]
	if keep := max - 1 - nameDigestLength; len(readable) > keep {
		readable = readable[:keep]
	}
	return readable + "_" + digest
}

// SanitizeDatabaseIdentifier turns s into a name both engines accept
// unquoted: a-z, 0-9 and _, not starting with a digit, at most 63
// characters.
func SanitizeDatabaseIdentifier(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	out := b.String()
	if out == "" || out[0] >= '0' && out[0] <= '9' {
		out = "_" + out
	}
	if len(out) > MaxDatabaseIdentifier {
		out = out[:MaxDatabaseIdentifier]
	}
	return out
}

// HasDatabase reports whether a component asks for a database.
func (c *PlatformComponent) HasDatabase() bool { return c.Database != nil && c.Database.Enabled }
