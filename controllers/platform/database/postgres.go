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
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// postgresAdmin provisions on PostgreSQL. Statements are built by the
// server: format('... %I ... %L', ...) with the names and the password as
// bound parameters, so the server's own quoting rules apply, whatever its
// standard_conforming_strings.
type postgresAdmin struct {
	conn *pgx.Conn
	// self is the admin's own login.
	self string
}

func connectPostgres(ctx context.Context, s Server, tlsConfig *tls.Config) (Admin, error) {
	cfg, err := pgx.ParseConfig("")
	if err != nil {
		return nil, err
	}
	cfg.Host, cfg.Port, cfg.User, cfg.Password, cfg.Database = s.Host, uint16(s.Port), s.Username, s.Password, "postgres"
	cfg.TLSConfig, cfg.Fallbacks, cfg.ConnectTimeout = tlsConfig, nil, s.Timeout
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, &Error{Reason: classify(err), Err: fmt.Errorf("connecting to %s as %s: %w", s.Addr(), s.Username, err)}
	}
	return &postgresAdmin{conn: conn, self: s.Username}, nil
}

// execf builds a statement with the server's format() and runs it.
func (a *postgresAdmin) execf(ctx context.Context, what, template string, args ...string) error {
	if err := a.run(ctx, template, args); err != nil {
		return &Error{Reason: classify(err), Err: fmt.Errorf("%s: %w", what, err)}
	}
	return nil
}

// execfWithPassword is execf for a statement that holds a password's
// verifier: a failure does not carry the server's message (withheld).
func (a *postgresAdmin) execfWithPassword(ctx context.Context, what, template string, args ...string) error {
	if err := a.run(ctx, template, args); err != nil {
		return withheld(what, err)
	}
	return nil
}

func (a *postgresAdmin) run(ctx context.Context, template string, args []string) error {
	var statement string
	if err := a.conn.QueryRow(ctx, "SELECT format($1::text, VARIADIC $2::text[])", template, args).Scan(&statement); err != nil {
		return err
	}
	_, err := a.conn.Exec(ctx, statement)
	return err
}

func (a *postgresAdmin) exists(ctx context.Context, query, name string) (bool, error) {
	var one int
	err := a.conn.QueryRow(ctx, query, name).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, &Error{Reason: classify(err), Err: err}
	}
	return true, nil
}

// ownerComment is what a role kubeforge created carries as its comment.
func ownerComment(owner string) string { return "created by kubeforge for " + owner }

// roleOwner returns whether user exists, and its comment.
func (a *postgresAdmin) roleOwner(ctx context.Context, user string) (bool, string, error) {
	var comment *string
	err := a.conn.QueryRow(ctx, "SELECT shobj_description(oid, 'pg_authid') FROM pg_roles WHERE rolname = $1", user).Scan(&comment)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, "", nil
	}
	if err != nil {
		return false, "", &Error{Reason: classify(err), Err: err}
	}
	if comment == nil {
		return true, "", nil
	}
	return true, *comment, nil
}

// databaseOwner returns whether database exists, and its owner's name.
func (a *postgresAdmin) databaseOwner(ctx context.Context, database string) (bool, string, error) {
	var owner string
	err := a.conn.QueryRow(ctx, "SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = $1", database).Scan(&owner)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, "", nil
	}
	if err != nil {
		return false, "", &Error{Reason: classify(err), Err: err}
	}
	return true, owner, nil
}

// ownedRole reports whether comment records owner (legacy: in its
// earlier form).
func ownedRole(comment string, owner Owner) (mine, legacy bool) {
	record, ok := strings.CutPrefix(comment, ownerComment(""))
	if !ok {
		return false, false
	}
	return owner.holds(record)
}

func (a *postgresAdmin) Provision(ctx context.Context, database, user, password string, owner Owner) error {
	if err := checkProvision(database, user, password, a.self); err != nil {
		return err
	}
	roleExists, comment, err := a.roleOwner(ctx, user)
	if err != nil {
		return err
	}
	mine, legacy := ownedRole(comment, owner)
	if roleExists && !mine {
		return conflict("the user "+user, owner.Name, "drop it, or name another in components[].database.user")
	}
	dbExists, dbOwner, err := a.databaseOwner(ctx, database)
	if err != nil {
		return err
	}
	if dbExists && (!roleExists || dbOwner != user) {
		return conflict("the database "+database, owner.Name, "drop it, or name another in components[].database.name")
	}
	if legacy {
		if err := a.execf(ctx, "recording "+user+" as "+owner.Name+"'s", "COMMENT ON ROLE %I IS %L", user, ownerComment(owner.Record)); err != nil {
			return err
		}
	}
	// The server gets the SCRAM verifier, never the password: a statement
	// log (log_statement = all) or pg_stat_statements shows nothing to log
	// in with.
	verifier, err := scramVerifier(password)
	if err != nil {
		return &Error{Reason: ReasonProvisioningFailed, Err: err}
	}
	if roleExists {
		err = a.execfWithPassword(ctx, "setting the password of "+user, "ALTER ROLE %I WITH LOGIN PASSWORD %L", user, verifier)
	} else {
		// One simple-protocol query: the role and the record that it is
		// ours commit together, or neither does.
		err = a.execfWithPassword(ctx, "creating user "+user, "CREATE ROLE %I WITH LOGIN PASSWORD %L; COMMENT ON ROLE %I IS %L",
			user, verifier, user, ownerComment(owner.Record))
	}
	if err != nil {
		return err
	}
	// An admin that is not a superuser (CREATEDB and CREATEROLE) must be
	// a member of a role to make it a database's owner.
	var super bool
	if err := a.conn.QueryRow(ctx, "SELECT rolsuper FROM pg_roles WHERE rolname = current_user").Scan(&super); err != nil {
		return &Error{Reason: classify(err), Err: err}
	}
	if !super {
		member, err := a.exists(ctx, "SELECT 1 WHERE pg_has_role(current_user, $1, 'MEMBER')", user)
		if err != nil {
			return err
		}
		if !member {
			if err := a.execf(ctx, "letting the admin hand "+database+" to "+user, "GRANT %I TO current_user", user); err != nil {
				return err
			}
		}
	}
	if !dbExists {
		// Owned by the role from the start: the owner is the record.
		if err := a.execf(ctx, "creating database "+database, "CREATE DATABASE %I OWNER %I", database, user); err != nil {
			return err
		}
	}
	// PUBLIC may connect to every database by default: not to this one.
	if err := a.execf(ctx, "closing "+database+" to other users", "REVOKE ALL ON DATABASE %I FROM PUBLIC", database); err != nil {
		return err
	}
	return a.execf(ctx, "granting "+user+" its database", "GRANT ALL PRIVILEGES ON DATABASE %I TO %I", database, user)
}

func (a *postgresAdmin) Drop(ctx context.Context, database, user string, owner Owner) error {
	if err := checkIdentifier("database", database); err != nil {
		return &Error{Reason: ReasonProvisioningFailed, Err: err}
	}
	if err := errors.Join(checkIdentifier("user", user), notAdmin(user, a.self)); err != nil {
		return &Error{Reason: ReasonProvisioningFailed, Err: err}
	}
	roleExists, comment, err := a.roleOwner(ctx, user)
	if err != nil {
		return err
	}
	if mine, _ := ownedRole(comment, owner); !roleExists || !mine {
		return nil // not ours (or gone): neither it nor a database it would own is dropped
	}
	dbExists, dbOwner, err := a.databaseOwner(ctx, database)
	if err != nil {
		return err
	}
	if dbExists && dbOwner == user {
		// FORCE ends the component's sessions (PostgreSQL 13 and later).
		if err := a.execf(ctx, "dropping database "+database, "DROP DATABASE IF EXISTS %I WITH (FORCE)", database); err != nil {
			return err
		}
	}
	return a.execf(ctx, "dropping user "+user, "DROP ROLE IF EXISTS %I", user)
}

func (a *postgresAdmin) Close() error { return a.conn.Close(context.Background()) }

// scramIterations is PostgreSQL's own default for SCRAM-SHA-256.
const scramIterations = 4096

// scramVerifier is the SCRAM-SHA-256 verifier PostgreSQL stores for
// password (RFC 5802, RFC 7677): given as a role's PASSWORD, the server
// takes it as already hashed.
func scramVerifier(password string) (string, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("salting the password: %w", err)
	}
	salted, err := pbkdf2.Key(sha256.New, password, salt, scramIterations, sha256.Size)
	if err != nil {
		return "", fmt.Errorf("hashing the password: %w", err)
	}
	mac := func(key []byte, msg string) []byte {
		h := hmac.New(sha256.New, key)
		h.Write([]byte(msg))
		return h.Sum(nil)
	}
	stored := sha256.Sum256(mac(salted, "Client Key"))
	b64 := base64.StdEncoding.EncodeToString
	return fmt.Sprintf("SCRAM-SHA-256$%d:%s$%s:%s", scramIterations, b64(salt), b64(stored[:]), b64(mac(salted, "Server Key"))), nil
}
