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
	"crypto/tls"
	"database/sql"
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

func (a *mysqlAdmin) Provision(ctx context.Context, database, user, password string) error {
	if err := checkProvision(database, user, password, a.self); err != nil {
		return err
	}
	db := QuoteMySQLIdentifier(database)
	steps := []struct {
		what  string
		query string
		args  []any
	}{
		{"creating database " + database, "CREATE DATABASE IF NOT EXISTS " + db, nil},
		{"creating user " + user, "CREATE USER IF NOT EXISTS ?@'%' IDENTIFIED BY ?", []any{user, password}},
		{"setting the password of " + user, "ALTER USER ?@'%' IDENTIFIED BY ?", []any{user, password}},
		{"granting " + user + " its database", "GRANT ALL PRIVILEGES ON " + QuoteMySQLGrantDatabase(database) + ".* TO ?@'%'", []any{user}},
	}
	for _, st := range steps {
		if _, err := a.db.ExecContext(ctx, st.query, st.args...); err != nil {
			return &Error{Reason: classify(err), Err: fmt.Errorf("%s: %w", st.what, err)}
		}
	}
	return nil
}

func (a *mysqlAdmin) Drop(ctx context.Context, database, user string) error {
	if err := checkIdentifier("database", database); err != nil {
		return &Error{Reason: ReasonProvisioningFailed, Err: err}
	}
	if err := errors.Join(checkIdentifier("user", user), notAdmin(user, a.self)); err != nil {
		return &Error{Reason: ReasonProvisioningFailed, Err: err}
	}
	if _, err := a.db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+QuoteMySQLIdentifier(database)); err != nil {
		return &Error{Reason: classify(err), Err: fmt.Errorf("dropping database %s: %w", database, err)}
	}
	if _, err := a.db.ExecContext(ctx, "DROP USER IF EXISTS ?@'%'", user); err != nil {
		return &Error{Reason: classify(err), Err: fmt.Errorf("dropping user %s: %w", user, err)}
	}
	return nil
}

func (a *mysqlAdmin) Close() error { return a.db.Close() }
