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

// Package testdb starts real MariaDB and PostgreSQL servers for tests, from
// the Debian packages that hack/test-deps.sh installs: each in a data
// directory under a temporary directory, listening on loopback only, with
// TLS (a certificate authority of its own) and an admin user with a
// password. They are processes of the test, not system services: Stop and
// Start stop and restart one (on the same port, with the same data), Close
// removes it.
package testdb

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"time"

	"github.com/kubeforge/kubeforge/internal/localca"
	"github.com/kubeforge/kubeforge/internal/test/ports"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// The engines a Server runs.
const (
	MariaDB    = "mysql"
	PostgreSQL = "postgresql"
)

// Server is a running (or stopped) database server.
type Server struct {
	// Engine is MariaDB ("mysql") or PostgreSQL ("postgresql").
	Engine string
	// Host and Port the server listens on.
	Host string
	Port int
	// AdminUser and AdminPassword log in with every privilege.
	AdminUser, AdminPassword string
	// CACert is the PEM certificate authority that signed the server's
	// certificate (for 127.0.0.1 and localhost).
	CACert []byte

	dir  string
	cmd  *exec.Cmd
	done chan error
	cred *syscall.Credential
}

// Start initialises a data directory and starts a server of the engine.
func Start(engine string) (*Server, error) {
	dir, err := os.MkdirTemp("", "kubeforge-"+engine+"-")
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &Server{Engine: engine, Host: "127.0.0.1", Port: port, AdminUser: "kfadmin", AdminPassword: "admin-" + strconv.Itoa(port), dir: dir}
	if err := s.writeCertificates(); err != nil {
		return nil, err
	}
	switch engine {
	case MariaDB:
		err = s.initMariaDB()
	case PostgreSQL:
		err = s.initPostgres()
	default:
		err = fmt.Errorf("unknown engine %q", engine)
	}
	if err == nil {
		err = s.Start()
	}
	if err == nil && engine == MariaDB {
		err = s.bootstrapMariaDB()
	}
	if err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

// Addr is host:port.
func (s *Server) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

// Start starts the (stopped) server and waits until it accepts the admin.
func (s *Server) Start() error {
	if s.cmd != nil {
		return errors.New("already running")
	}
	var args []string
	var bin string
	switch s.Engine {
	case MariaDB:
		bin = "mariadbd"
		args = []string{"--no-defaults", "--datadir=" + s.path("data"), "--tmpdir=" + s.path("tmp"), "--socket=" + s.path("mysqld.sock"),
			"--port=" + strconv.Itoa(s.Port), "--bind-address=127.0.0.1", "--pid-file=" + s.path("mysqld.pid"),
			"--skip-name-resolve", "--innodb-buffer-pool-size=16M", "--skip-log-bin", "--max-connections=100",
			"--ssl-ca=" + s.path("ca.crt"), "--ssl-cert=" + s.path("tls.crt"), "--ssl-key=" + s.path("tls.key"),
			// Every statement in the general log: tests check that no
			// password reaches it.
			"--general-log=1", "--general-log-file=" + s.path("general.log")}
		if os.Geteuid() == 0 {
			args = append(args, "--user=mysql")
		}
	case PostgreSQL:
		var err error
		if bin, err = postgresBin("postgres"); err != nil {
			return err
		}
		args = []string{"-D", s.path("data"), "-p", strconv.Itoa(s.Port), "-k", s.dir,
			"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "full_page_writes=off",
			"-c", "shared_buffers=16MB", "-c", "max_connections=100",
			// Every statement in the log, with its parameters: tests check
			// that no password reaches it.
			"-c", "log_statement=all",
			"-c", "ssl=on", "-c", "ssl_cert_file=" + s.path("tls.crt"), "-c", "ssl_key_file=" + s.path("tls.key")}
	}
	log, err := os.OpenFile(s.path("server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		return fmt.Errorf("starting %s: %w", bin, err)
	}
	s.cmd, s.done = cmd, make(chan error, 1)
	go func() { s.done <- cmd.Wait(); _ = log.Close() }()

	deadline := time.Now().Add(90 * time.Second)
	for {
		select {
		case err := <-s.done:
			s.cmd = nil
			return fmt.Errorf("%s exited (%v); its log:\n%s", bin, err, s.logTail())
		default:
		}
		err := s.ping()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			_ = s.Stop()
			return fmt.Errorf("%s did not accept connections in 90s (%v); its log:\n%s", bin, err, s.logTail())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Stop stops the server, keeping its data.
func (s *Server) Stop() error {
	if s.cmd == nil {
		return nil
	}
	sig := syscall.SIGTERM
	if s.Engine == PostgreSQL {
		sig = syscall.SIGINT // fast shutdown: disconnect clients
	}
	_ = s.cmd.Process.Signal(sig)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
	}
	s.cmd = nil
	return nil
}

// Close stops the server and removes its data.
func (s *Server) Close() error {
	err := s.Stop()
	return errors.Join(err, os.RemoveAll(s.dir))
}

// Open connects as user to database (empty: none) over TCP without TLS.
func (s *Server) Open(user, password, database string) (*sql.DB, error) {
	switch s.Engine {
	case MariaDB:
		cfg := mysql.NewConfig()
		cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = user, password, "tcp", s.Addr(), database
		cfg.Timeout = 5 * time.Second
		c, err := mysql.NewConnector(cfg)
		if err != nil {
			return nil, err
		}
		return sql.OpenDB(c), nil
	default:
		cfg, err := pgx.ParseConfig("")
		if err != nil {
			return nil, err
		}
		cfg.Host, cfg.Port, cfg.User, cfg.Password, cfg.Database = s.Host, uint16(s.Port), user, password, database
		cfg.TLSConfig, cfg.Fallbacks, cfg.ConnectTimeout = nil, nil, 5*time.Second
		if database == "" {
			cfg.Database = "postgres"
		}
		return stdlib.OpenDB(*cfg), nil
	}
}

// Exec runs statements as user in database, on one connection.
func (s *Server) Exec(user, password, database string, statements ...string) error {
	db, err := s.Open(user, password, database)
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	for _, st := range statements {
		if _, err := conn.ExecContext(ctx, st); err != nil {
			return err
		}
	}
	return nil
}

// QueryStrings runs a query as the admin and returns the first column of
// every row.
func (s *Server) QueryStrings(query string, args ...any) ([]string, error) {
	db, err := s.Open(s.AdminUser, s.AdminPassword, "")
	if err != nil {
		return nil, err
	}
	defer func() { _ = db.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// Databases lists the databases on the server.
func (s *Server) Databases() ([]string, error) {
	if s.Engine == MariaDB {
		return s.QueryStrings("SELECT schema_name FROM information_schema.schemata")
	}
	return s.QueryStrings("SELECT datname FROM pg_database")
}

// Users lists the users (roles that can log in) on the server.
func (s *Server) Users() ([]string, error) {
	if s.Engine == MariaDB {
		return s.QueryStrings("SELECT DISTINCT user FROM mysql.user")
	}
	return s.QueryStrings("SELECT rolname FROM pg_roles")
}

func (s *Server) ping() error {
	if s.Engine == MariaDB && s.AdminPassword != "" {
		// Before bootstrap the admin does not exist yet: the socket answers.
		if _, err := os.Stat(s.path("bootstrapped")); err != nil {
			return s.execSocket("SELECT 1")
		}
	}
	return s.Exec(s.AdminUser, s.AdminPassword, "", "SELECT 1")
}

func (s *Server) path(name string) string { return filepath.Join(s.dir, name) }

// Log is what the server has logged so far, with every statement it
// received (PostgreSQL: log_statement = all; MariaDB: its general log).
func (s *Server) Log() (string, error) {
	b, err := os.ReadFile(s.path("server.log"))
	if err != nil || s.Engine != MariaDB {
		return string(b), err
	}
	general, err := os.ReadFile(s.path("general.log"))
	return string(b) + string(general), err
}

func (s *Server) logTail() string {
	b, _ := os.ReadFile(s.path("server.log"))
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// runAs makes the files of the server belong to the engine's system user
// when the tests run as root (neither server runs as root).
func (s *Server) runAs(name string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		return fmt.Errorf("the %s system user (from the Debian package) is missing: %w", name, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if name == "postgres" {
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	return filepath.Walk(s.dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Chown(p, uid, gid)
	})
}

func (s *Server) initMariaDB() error {
	// A temporary directory of its own: servers of test packages that run
	// at once (go test -p) shared /tmp, where one bootstrap failed on
	// temporary tables it could not find ("Unknown table mysql.tmp_user_nopasswd").
	if err := os.MkdirAll(s.path("tmp"), 0o700); err != nil {
		return err
	}
	if err := s.runAs("mysql"); err != nil {
		return err
	}
	args := []string{"--no-defaults", "--datadir=" + s.path("data"), "--tmpdir=" + s.path("tmp"), "--auth-root-authentication-method=normal",
		"--skip-test-db", "--skip-name-resolve"}
	if os.Geteuid() == 0 {
		args = append(args, "--user=mysql")
	}
	out, err := exec.Command("mariadb-install-db", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("mariadb-install-db: %w\n%s", err, out)
	}
	return nil
}

// bootstrapMariaDB creates the admin, reachable over TCP with a password,
// through the socket, where root logs in without one.
func (s *Server) bootstrapMariaDB() error {
	q := func(v string) string { return "'" + v + "'" } // our own constants
	if err := s.execSocket(
		"CREATE USER "+q(s.AdminUser)+"@'%' IDENTIFIED BY "+q(s.AdminPassword),
		"GRANT ALL PRIVILEGES ON *.* TO "+q(s.AdminUser)+"@'%' WITH GRANT OPTION",
	); err != nil {
		return fmt.Errorf("creating the MariaDB admin: %w", err)
	}
	if err := os.WriteFile(s.path("bootstrapped"), nil, 0o600); err != nil {
		return err
	}
	return s.Exec(s.AdminUser, s.AdminPassword, "", "SELECT 1")
}

func (s *Server) execSocket(statements ...string) error {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.Timeout = "root", "unix", s.path("mysqld.sock"), 5*time.Second
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		return err
	}
	db := sql.OpenDB(c)
	defer func() { _ = db.Close() }()
	for _, st := range statements {
		if _, err := db.Exec(st); err != nil {
			return err
		}
	}
	return nil
}

func (s *Server) initPostgres() error {
	initdb, err := postgresBin("initdb")
	if err != nil {
		return err
	}
	if err := os.WriteFile(s.path("pwfile"), []byte(s.AdminPassword+"\n"), 0o600); err != nil {
		return err
	}
	if err := s.runAs("postgres"); err != nil {
		return err
	}
	cmd := exec.Command(initdb, "-D", s.path("data"), "-U", s.AdminUser, "--pwfile="+s.path("pwfile"),
		"--auth-host=scram-sha-256", "--auth-local=scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb: %w\n%s", err, out)
	}
	return nil
}

// postgresBin finds a PostgreSQL server program in Debian's versioned
// directories, the newest first.
func postgresBin(name string) (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if p := filepath.Join(d, name); fileExists(p) {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%s not found: install Debian's postgresql (hack/test-deps.sh does)", name)
}

func version(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func freePort() (int, error) { return ports.Free() }

// writeCertificates writes ca.crt, tls.crt and tls.key: a CA of the
// server's own and a certificate it signed for 127.0.0.1 and localhost.
func (s *Server) writeCertificates() error {
	ca, err := localca.New("kubeforge test CA")
	if err != nil {
		return err
	}
	s.CACert = ca.PEM
	return ca.WriteServing(s.dir, "localhost", "127.0.0.1")
}

// TLSConfig trusts the server's CA, for tests that check a client's TLS.
func (s *Server) TLSConfig() *tls.Config {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.CACert)
	return &tls.Config{RootCAs: pool, ServerName: s.Host, MinVersion: tls.VersionTLS12}
}
