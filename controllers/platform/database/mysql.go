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

package database

import (
	"context"
	"crypto/sha1"
	"crypto/tls"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// mysqlAdmin provisions on MySQL and MariaDB. User names and passwords are
// string literals there ('user'@'%'): they go in as placeholders that the
// driver interpolates with the server's escaping rules. Database names are
// identifiers: QuoteMySQLIdentifier.
type mysqlAdmin struct {
	db *sql.DB
	// self is the admin's own login.
	self string
	// ready: the claims table exists and mariadb is known, once per
	// connection.
	ready   bool
	mariadb bool
}

func connectMySQL(ctx context.Context, s Server, tlsConfig *tls.Config) (Admin, error) {
	cfg := mysql.NewConfig()
	cfg.Net, cfg.Addr, cfg.User, cfg.Passwd = "tcp", s.Addr(), s.Username, s.Password
	cfg.TLS = tlsConfig
	cfg.Timeout, cfg.ReadTimeout, cfg.WriteTimeout = s.Timeout, 30*time.Second, 30*time.Second
	cfg.InterpolateParams = true
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(connector)
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, &Error{Reason: classify(err), Err: fmt.Errorf("connecting to %s as %s: %w", s.Addr(), s.Username, err)}
	}
	return &mysqlAdmin{db: db, self: s.Username}, nil
}

// QuoteMySQLIdentifier quotes a database name for MySQL: in backticks,
// a backtick doubled. (NUL and invalid UTF-8 are refused before.)
func QuoteMySQLIdentifier(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

// QuoteMySQLGrantDatabase quotes a database name for the ON clause of a
// GRANT, where _ and % are wildcards and \ escapes them: unescaped,
// granting acme_api would grant acme1api too.
func QuoteMySQLGrantDatabase(name string) string {
	r := strings.NewReplacer(`\`, `\\`, `_`, `\_`, `%`, `\%`)
	return QuoteMySQLIdentifier(r.Replace(name))
}

// ClaimsDatabase is where kubeforge records, on a MySQL/MariaDB server,
// which databases and users it created and for whom (table claims). No
// component may be given this name.
const ClaimsDatabase = "kubeforge"

// prepare makes the claims table exist and learns whether the server is
// MariaDB, once per connection.
func (a *mysqlAdmin) prepare(ctx context.Context) error {
	if a.ready {
		return nil
	}
	var version string
	if err := a.db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version); err != nil {
		return &Error{Reason: classify(err), Err: err}
	}
	a.mariadb = strings.Contains(strings.ToLower(version), "mariadb")
	for _, q := range []string{
		"CREATE DATABASE IF NOT EXISTS " + QuoteMySQLIdentifier(ClaimsDatabase),
		"CREATE TABLE IF NOT EXISTS " + QuoteMySQLIdentifier(ClaimsDatabase) + ".claims (" +
			"kind VARCHAR(16) NOT NULL, name VARCHAR(64) NOT NULL, owner VARCHAR(512) NOT NULL, PRIMARY KEY (kind, name)) " +
			"DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin",
	} {
		if _, err := a.db.ExecContext(ctx, q); err != nil {
			return &Error{Reason: classify(err), Err: fmt.Errorf("making kubeforge's claims table: %w", err)}
		}
	}
	a.ready = true
	return nil
}

// claimOf returns the owner a claim records for kind/name, "" if none.
func (a *mysqlAdmin) claimOf(ctx context.Context, kind, name string) (string, error) {
	var owner string
	err := a.db.QueryRowContext(ctx, "SELECT owner FROM "+QuoteMySQLIdentifier(ClaimsDatabase)+".claims WHERE kind = ? AND name = ?", kind, name).Scan(&owner)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", &Error{Reason: classify(err), Err: err}
	}
	return owner, nil
}

// claim records kind/name as owner's, unless it exists without a claim
// (made by someone else) or is another owner's: then NameConflict. A
// claim is written before the object is created, so a crash in between
// leaves a claim for an object that is created on the next try. A claim
// in owner's earlier form is rewritten.
func (a *mysqlAdmin) claim(ctx context.Context, kind, name string, owner Owner, existsQuery, fix string) error {
	held, err := a.claimOf(ctx, kind, name)
	if err != nil {
		return err
	}
	what := "the " + kind + " " + name
	switch mine, legacy := owner.holds(held); {
	case mine && legacy:
		if _, err := a.db.ExecContext(ctx, "UPDATE "+QuoteMySQLIdentifier(ClaimsDatabase)+".claims SET owner = ? WHERE kind = ? AND name = ? AND owner = ?",
			owner.Record, kind, name, held); err != nil {
			return &Error{Reason: classify(err), Err: fmt.Errorf("recording %s as %s's: %w", what, owner.Name, err)}
		}
		return nil
	case mine:
		return nil
	case held != "":
		return conflict(what, owner.Name, fix)
	}
	var one int
	switch err := a.db.QueryRowContext(ctx, existsQuery, name).Scan(&one); {
	case err == nil:
		return conflict(what, owner.Name, fix)
	case !errors.Is(err, sql.ErrNoRows):
		return &Error{Reason: classify(err), Err: err}
	}
	if _, err := a.db.ExecContext(ctx, "INSERT INTO "+QuoteMySQLIdentifier(ClaimsDatabase)+".claims (kind, name, owner) VALUES (?, ?, ?)", kind, name, owner.Record); err != nil {
		var my *mysql.MySQLError
		if errors.As(err, &my) && my.Number == 1062 { // duplicate key: claimed meanwhile
			return conflict(what, owner.Name, fix)
		}
		return &Error{Reason: classify(err), Err: err}
	}
	return nil
}

const (
	// A user is a name at any host: 'app'@'localhost' made by hand makes
	// the name someone else's, though kubeforge's would be 'app'@'%'.
	userExists     = "SELECT 1 FROM mysql.user WHERE User = ? LIMIT 1"
	databaseExists = "SELECT 1 FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?"
)

func (a *mysqlAdmin) Provision(ctx context.Context, database, user, password string, owner Owner) error {
	if err := checkProvision(database, user, password, a.self); err != nil {
		return err
	}
	if database == ClaimsDatabase {
		return &Error{Reason: ReasonProvisioningFailed, Err: fmt.Errorf("the database %s is where kubeforge records what it created", database)}
	}
	if err := a.prepare(ctx); err != nil {
		return err
	}
	if err := a.claim(ctx, "user", user, owner, userExists, "drop it, or name another in components[].database.user"); err != nil {
		return err
	}
	if err := a.claim(ctx, "database", database, owner, databaseExists, "drop it, or name another in components[].database.name"); err != nil {
		return err
	}
	// The password reaches the server as a hash where the server takes one
	// (MariaDB: mysql_native_password's double SHA-1), so its general log
	// shows nothing to log in with; MySQL rewrites IDENTIFIED BY in its
	// logs itself (unless started with log-raw).
	identified, secret := "IDENTIFIED BY ?", password
	if a.mariadb {
		identified, secret = "IDENTIFIED BY PASSWORD ?", NativePasswordHash(password)
	}
	db := QuoteMySQLIdentifier(database)
	steps := []struct {
		what     string
		query    string
		args     []any
		password bool // the statement holds it: the server's message is withheld
	}{
		{"creating database " + database, "CREATE DATABASE IF NOT EXISTS " + db, nil, false},
		{"creating user " + user, "CREATE USER IF NOT EXISTS ?@'%' " + identified, []any{user, secret}, true},
		{"setting the password of " + user, "ALTER USER ?@'%' " + identified, []any{user, secret}, true},
		{"granting " + user + " its database", "GRANT ALL PRIVILEGES ON " + QuoteMySQLGrantDatabase(database) + ".* TO ?@'%'", []any{user}, false},
	}
	for _, st := range steps {
		if _, err := a.db.ExecContext(ctx, st.query, st.args...); err != nil {
			if st.password {
				return withheld(st.what, err)
			}
			return &Error{Reason: classify(err), Err: fmt.Errorf("%s: %w", st.what, err)}
		}
	}
	return nil
}

// NativePasswordHash is mysql_native_password's stored form of password:
// "*" and the upper-case hex of SHA1(SHA1(password)).
func NativePasswordHash(password string) string {
	first := sha1.Sum([]byte(password)) //nolint:gosec // the server's own scheme, not our choice
	second := sha1.Sum(first[:])        //nolint:gosec // as above
	return "*" + strings.ToUpper(hex.EncodeToString(second[:]))
}

func (a *mysqlAdmin) Drop(ctx context.Context, database, user string, owner Owner) error {
	if err := checkIdentifier("database", database); err != nil {
		return &Error{Reason: ReasonProvisioningFailed, Err: err}
	}
	if err := errors.Join(checkIdentifier("user", user), notAdmin(user, a.self)); err != nil {
		return &Error{Reason: ReasonProvisioningFailed, Err: err}
	}
	if err := a.prepare(ctx); err != nil {
		return err
	}
	// Only what is recorded as owner's; the claim goes after the object.
	claims := QuoteMySQLIdentifier(ClaimsDatabase) + ".claims"
	if held, err := a.claimOf(ctx, "database", database); err != nil {
		return err
	} else if mine, _ := owner.holds(held); mine {
		if _, err := a.db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+QuoteMySQLIdentifier(database)); err != nil {
			return &Error{Reason: classify(err), Err: fmt.Errorf("dropping database %s: %w", database, err)}
		}
		if _, err := a.db.ExecContext(ctx, "DELETE FROM "+claims+" WHERE kind = 'database' AND name = ?", database); err != nil {
			return &Error{Reason: classify(err), Err: err}
		}
	}
	if held, err := a.claimOf(ctx, "user", user); err != nil {
		return err
	} else if mine, _ := owner.holds(held); mine {
		if _, err := a.db.ExecContext(ctx, "DROP USER IF EXISTS ?@'%'", user); err != nil {
			return &Error{Reason: classify(err), Err: fmt.Errorf("dropping user %s: %w", user, err)}
		}
		if _, err := a.db.ExecContext(ctx, "DELETE FROM "+claims+" WHERE kind = 'user' AND name = ?", user); err != nil {
			return &Error{Reason: classify(err), Err: err}
		}
	}
	return nil
}

func (a *mysqlAdmin) Close() error { return a.db.Close() }
