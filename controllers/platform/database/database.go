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

// Package database provisions a Platform component's database and user on
// a MySQL/MariaDB or PostgreSQL server: created when missing, the user's
// password set to what its Secret holds, all privileges on its own
// database and none on another's; and drops them on request.
//
// Every identifier reaches SQL quoted by the rules of its engine and every
// password as a string literal escaped by the driver (MySQL) or by the
// server itself (PostgreSQL's format('%I', '%L')); names are validated at
// admission as well, so quoting is the second line, not the only one.
package database

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/kubeforge/kubeforge/internal/secret"
)

// Engines.
const (
	MySQL      = "mysql"
	PostgreSQL = "postgresql"
)

// TLS modes.
const (
	TLSDisable    = "disable"
	TLSRequire    = "require"
	TLSVerifyFull = "verify-full"
)

// Reasons a server can fail for; they become the Platform's DatabaseReady
// condition reason.
const (
	ReasonServerUnreachable    = "ServerUnreachable"
	ReasonAuthenticationFailed = "AuthenticationFailed"
	ReasonTLSFailed            = "TLSFailed"
	ReasonProvisioningFailed   = "ProvisioningFailed"
	// ReasonNameConflict: the database or user exists on the server and
	// was not created for this owner; kubeforge does not take it over.
	ReasonNameConflict = "NameConflict"
)

// Server says how to reach a database server as its admin.
type Server struct {
	Engine string
	Host   string
	Port   int32
	// Username and Password of the admin.
	Username, Password string
	// TLSMode is disable, require or verify-full; CACert (PEM) is the
	// authority verify-full checks the server's certificate against, the
	// system's trusted authorities when empty.
	TLSMode string
	CACert  []byte
	// Timeout bounds connecting; 5 s when zero.
	Timeout time.Duration
}

// Addr is host:port.
func (s Server) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(int(s.Port))) }

// TLSConfig is the client TLS configuration of the mode, nil for disable.
// No mode is verify-full: the certificate is checked unless asked not to.
func (s Server) TLSConfig() (*tls.Config, error) {
	switch s.TLSMode {
	case TLSDisable:
		return nil, nil
	case TLSVerifyFull, "":
		var pool *x509.CertPool // nil: the system's authorities
		if len(s.CACert) > 0 {
			pool = x509.NewCertPool()
			if !pool.AppendCertsFromPEM(s.CACert) {
				return nil, errors.New("the CA Secret's ca.crt holds no PEM certificate")
			}
		}
		return &tls.Config{RootCAs: pool, ServerName: s.Host, MinVersion: tls.VersionTLS12}, nil
	case TLSRequire:
		// Encrypted, the certificate not checked: what libpq's sslmode=require does.
		return &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}, nil //nolint:gosec // the documented meaning of require
	default:
		return nil, fmt.Errorf("unknown TLS mode %q", s.TLSMode)
	}
}

// Admin is a connection to a server as its admin.
//
// Ownership: every database and user kubeforge creates is recorded on the
// server itself as created for owner (Owner.Record), in the same step that
// creates it — PostgreSQL: a comment on the role, and the database owned by
// that role; MySQL/MariaDB: a row in the table kubeforge.claims. A
// database or user that exists without that record — made by hand, by
// another tool, for another Platform, or for an earlier Platform of the
// same name — is never changed, granted to, or dropped: Provision answers
// ReasonNameConflict. The record lives on the server, so it holds across
// manager restarts, reinstalls and lost status.
type Admin interface {
	// Provision makes database and user exist for owner, sets the user's
	// password, and grants the user all privileges on database, and no one
	// else any. It is idempotent.
	Provision(ctx context.Context, database, user, password string, owner Owner) error
	// Drop drops database and user if they exist and were created for
	// owner; what was not is left alone.
	Drop(ctx context.Context, database, user string, owner Owner) error
	// Close closes the connection.
	Close() error
}

// Connect logs in to the server as its admin.
func Connect(ctx context.Context, s Server) (Admin, error) {
	if s.Timeout == 0 {
		s.Timeout = 5 * time.Second
	}
	tlsConfig, err := s.TLSConfig()
	if err != nil {
		return nil, &Error{Reason: ReasonTLSFailed, Err: err}
	}
	switch s.Engine {
	case MySQL:
		return connectMySQL(ctx, s, tlsConfig)
	case PostgreSQL:
		return connectPostgres(ctx, s, tlsConfig)
	}
	return nil, fmt.Errorf("unknown database engine %q", s.Engine)
}

// Owner is whom databases and users are recorded as created for.
type Owner struct {
	// Name says whom to people, in messages: "Platform shop/acme".
	Name string
	// Record is what the server records: Name and what makes it this
	// owner alone (the API-server-assigned UIDs of the Platform and of
	// the cluster), so that neither a later Platform of the same name nor
	// one of another cluster sharing the server is taken for it.
	Record string
	// Formerly is a record an earlier kubeforge wrote for this owner,
	// taken as its own and rewritten to Record; "" when none may be.
	Formerly string
}

// holds reports whether a record on the server is owner's; legacy when
// it is the earlier form, to be rewritten.
func (o Owner) holds(record string) (mine, legacy bool) {
	switch {
	case record != "" && record == o.Record:
		return true, false
	case record != "" && record == o.Formerly:
		return true, true
	}
	return false, false
}

// Error is a failure with the reason a condition reports.
type Error struct {
	Reason string
	Err    error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// withheld is the failure of a statement that carries a password (or
// its hash or verifier): what failed, as the caller says, and the
// server's error number, but not the server's message, which may quote
// the statement (MySQL's "near '… IDENTIFIED BY …'"), and from an error
// goes to status, events and the log. The reason is err's.
func withheld(what string, err error) error {
	reason := classify(err)
	var my *mysql.MySQLError
	var pg *pgconn.PgError
	switch {
	case errors.As(err, &my):
		err = fmt.Errorf("the server refused it: MySQL error %d (SQLSTATE %s); its message is not shown, as it may quote the statement, which holds the password", my.Number, string(my.SQLState[:]))
	case errors.As(err, &pg):
		err = fmt.Errorf("the server refused it: SQLSTATE %s (%s); its message is not shown, as it may quote the statement, which holds the password", pg.Code, pg.Severity)
	}
	// Anything else (the connection's) did not come back from the
	// statement's text.
	return &Error{Reason: reason, Err: fmt.Errorf("%s: %w", what, err)}
}

// conflict is the NameConflict error for what (e.g. "the database acme")
// that exists and was not created for owner.
func conflict(what, owner, fix string) error {
	return &Error{Reason: ReasonNameConflict, Err: fmt.Errorf(
		"%s exists on the server and was not created for %s; kubeforge does not take it over: %s", what, owner, fix)}
}

// Reason classifies an error of this package: ServerUnreachable,
// AuthenticationFailed, TLSFailed or ProvisioningFailed.
func Reason(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return classify(err)
}

func classify(err error) string {
	var my *mysql.MySQLError
	if errors.As(err, &my) {
		switch my.Number {
		case 1045, 1044, 1698: // access denied (for user, to database, without password)
			return ReasonAuthenticationFailed
		}
		return ReasonProvisioningFailed
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		switch pg.Code {
		case "28P01", "28000": // invalid_password, invalid_authorization_specification
			return ReasonAuthenticationFailed
		}
		return ReasonProvisioningFailed
	}
	var certErr *tls.CertificateVerificationError
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	if errors.As(err, &certErr) || errors.As(err, &unknownCA) || errors.As(err, &hostErr) ||
		strings.Contains(err.Error(), "TLS requested but server does not support TLS") ||
		strings.Contains(err.Error(), "server refused TLS connection") || strings.Contains(err.Error(), "tls:") {
		return ReasonTLSFailed
	}
	var netErr net.Error
	var dnsErr *net.DNSError
	var opErr *net.OpError
	if errors.As(err, &netErr) || errors.As(err, &dnsErr) || errors.As(err, &opErr) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, mysql.ErrInvalidConn) || strings.Contains(err.Error(), "connection refused") ||
		strings.Contains(err.Error(), "failed to connect") {
		return ReasonServerUnreachable
	}
	return ReasonProvisioningFailed
}

// PasswordLength is the length of a generated password: 32 characters of
// 62, about 190 bits.
const PasswordLength = 32

// GeneratePassword returns PasswordLength characters from crypto/rand.
func GeneratePassword() (string, error) {
	return secret.Random(PasswordLength)
}

// URL is the connection URL of a component's database, as its Secret
// holds it: mysql://user:password@host:port/database?ssl-mode=... or
// postgresql://user:password@host:port/database?sslmode=...
func URL(s Server, database, user, password string) string {
	u := url.URL{Scheme: s.Engine, User: url.UserPassword(user, password), Host: s.Addr(), Path: "/" + database}
	q := url.Values{}
	if s.Engine == PostgreSQL {
		q.Set("sslmode", s.TLSMode)
	} else {
		q.Set("ssl-mode", map[string]string{TLSDisable: "DISABLED", TLSRequire: "REQUIRED", TLSVerifyFull: "VERIFY_IDENTITY"}[s.TLSMode])
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// checkIdentifier refuses what no engine stores: an empty name, a NUL,
// invalid UTF-8, more than 63 bytes. Everything else is quoted.
// checkProvision checks a Provision call's names and password before any
// statement is sent.
func checkProvision(database, user, password, self string) error {
	for _, err := range []error{checkIdentifier("database", database), checkIdentifier("user", user), checkPassword(password), notAdmin(user, self)} {
		if err != nil {
			return &Error{Reason: ReasonProvisioningFailed, Err: err}
		}
	}
	return nil
}

// notAdmin refuses the admin's own login as a component's user: kubeforge
// would set its password, or drop it.
func notAdmin(user, self string) error {
	if strings.EqualFold(user, self) {
		return fmt.Errorf("the user %s is the login kubeforge provisions with; it neither changes nor drops it", user)
	}
	return nil
}

func checkIdentifier(kind, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("empty %s name", kind)
	case len(name) > 63:
		return fmt.Errorf("%s name %q is longer than 63 bytes", kind, name)
	case strings.ContainsRune(name, 0) || !utf8.ValidString(name):
		return fmt.Errorf("%s name %q holds a NUL or invalid UTF-8", kind, name)
	}
	return nil
}

func checkPassword(password string) error {
	if password == "" || strings.ContainsRune(password, 0) || !utf8.ValidString(password) {
		return errors.New("the password is empty or holds a NUL or invalid UTF-8")
	}
	return nil
}
