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

package database_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubeforge/kubeforge/controllers/platform/database"
	"github.com/kubeforge/kubeforge/internal/test/testdb"
)

// These tests run against real servers: MariaDB and PostgreSQL from
// Debian's packages, started on loopback by internal/test/testdb.

var servers = map[string]*testdb.Server{}

func TestMain(m *testing.M) {
	code := func() int {
		for _, engine := range []string{testdb.MariaDB, testdb.PostgreSQL} {
			s, err := testdb.Start(engine)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			defer func() { _ = s.Close() }()
			servers[engine] = s
		}
		return m.Run()
	}()
	os.Exit(code)
}

func admin(s *testdb.Server, mode string) database.Server {
	ds := database.Server{Engine: s.Engine, Host: s.Host, Port: int32(s.Port), Username: s.AdminUser, Password: s.AdminPassword, TLSMode: mode}
	if mode == database.TLSVerifyFull {
		ds.CACert = s.CACert
	}
	return ds
}

func connect(t *testing.T, ds database.Server) database.Admin {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, err := database.Connect(ctx, ds)
	if err != nil {
		t.Fatalf("connecting as the admin: %v", err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a
}

func each(t *testing.T, f func(t *testing.T, s *testdb.Server)) {
	for _, engine := range []string{testdb.MariaDB, testdb.PostgreSQL} {
		t.Run(engine, func(t *testing.T) { f(t, servers[engine]) })
	}
}

// owner is whom the tests provision for.
var owner = platformOwner("test/acme", "uid-1", "cluster-1")

// platformOwner is the owner a Platform of that namespace/name and UID in
// that cluster is recorded as (as platform.DatabaseOwner makes it).
func platformOwner(name, uid, cluster string) database.Owner {
	return database.Owner{Name: "Platform " + name, Record: "Platform " + name + " uid=" + uid + " cluster=" + cluster}
}

func createTable(s *testdb.Server, user, password, db string) error {
	return s.Exec(user, password, db, "CREATE TABLE t_"+user+" (id INT)", "INSERT INTO t_"+user+" VALUES (1)")
}

func TestProvisionIsolatesComponents(t *testing.T) {
	each(t, func(t *testing.T, s *testdb.Server) {
		a := connect(t, admin(s, database.TLSRequire))
		ctx := context.Background()
		if err := a.Provision(ctx, "iso_api", "iso_api", "api-password-1", owner); err != nil {
			t.Fatal(err)
		}
		if err := a.Provision(ctx, "iso_worker", "iso_worker", "worker-password-1", owner); err != nil {
			t.Fatal(err)
		}
		// Idempotent: again, nothing fails and nothing changes.
		if err := a.Provision(ctx, "iso_api", "iso_api", "api-password-1", owner); err != nil {
			t.Fatalf("provisioning again: %v", err)
		}
		if err := createTable(s, "iso_api", "api-password-1", "iso_api"); err != nil {
			t.Fatalf("api in its own database: %v", err)
		}
		if err := createTable(s, "iso_worker", "worker-password-1", "iso_worker"); err != nil {
			t.Fatalf("worker in its own database: %v", err)
		}
		if err := createTable(s, "iso_api", "api-password-1", "iso_worker"); err == nil {
			t.Fatal("api created a table in worker's database")
		} else if !strings.Contains(strings.ToLower(err.Error()), "denied") {
			t.Fatalf("api in worker's database: want access denied, got %v", err)
		}
		if err := s.Exec("iso_worker", "worker-password-1", "iso_api", "SELECT * FROM t_iso_api"); err == nil {
			t.Fatal("worker read api's table")
		}
		// _ is a wildcard in MySQL's GRANT: iso_api's grant must not
		// reach isoXapi.
		if err := s.Exec(s.AdminUser, s.AdminPassword, "", "CREATE DATABASE isoXapi"); err != nil {
			t.Fatal(err)
		}
		if err := createTable(s, "iso_api", "api-password-1", "isoXapi"); err == nil {
			t.Fatal("api created a table in isoXapi: its grant's _ matched X")
		}
		if err := s.Exec(s.AdminUser, s.AdminPassword, "", "DROP DATABASE isoXapi"); err != nil {
			t.Fatal(err)
		}

		// A new password: the old one stops working, the new one works.
		if err := a.Provision(ctx, "iso_api", "iso_api", "api-password-2", owner); err != nil {
			t.Fatal(err)
		}
		if err := s.Exec("iso_api", "api-password-1", "iso_api", "SELECT 1"); err == nil {
			t.Fatal("the old password still logs in")
		}
		if err := s.Exec("iso_api", "api-password-2", "iso_api", "SELECT * FROM t_iso_api"); err != nil {
			t.Fatalf("the new password: %v", err)
		}

		for _, c := range []string{"iso_api", "iso_worker"} {
			if err := a.Drop(ctx, c, c, owner); err != nil {
				t.Fatal(err)
			}
			if err := a.Drop(ctx, c, c, owner); err != nil {
				t.Fatalf("dropping again: %v", err)
			}
		}
		dbs, _ := s.Databases()
		users, _ := s.Users()
		for _, c := range []string{"iso_api", "iso_worker"} {
			if slices.Contains(dbs, c) || slices.Contains(users, c) {
				t.Fatalf("%s survived Drop: databases %v, users %v", c, dbs, users)
			}
		}
	})
}

// Names no validator would let through still reach SQL quoted: each is
// created under exactly its name, and nothing else happens.
func TestHostileNamesAreQuoted(t *testing.T) {
	hostile := []string{
		"x`; DROP DATABASE canary; --",
		`x"; DROP DATABASE canary; --`,
		"x'; DROP DATABASE canary; --",
		`x\'; DROP USER kfadmin; --`,
		"ünï cödé ☃",
		"a$1 %s %I %L",
	}
	each(t, func(t *testing.T, s *testdb.Server) {
		a := connect(t, admin(s, database.TLSDisable))
		ctx := context.Background()
		if err := a.Provision(ctx, "canary", "canary", "canary-password", owner); err != nil {
			t.Fatal(err)
		}
		for i, name := range hostile {
			user := fmt.Sprintf("%s%d", name, i)
			if s.Engine == testdb.MariaDB && len(user) > 32 {
				user = user[:len(user)-(len(user)-32)]
			}
			password := `p'a"s\s` + "`;-- " + name
			if err := a.Provision(ctx, name, user, password, owner); err != nil {
				t.Fatalf("%q: %v", name, err)
			}
			dbs, err := s.Databases()
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(dbs, name) || !slices.Contains(dbs, "canary") {
				t.Fatalf("%q: databases now %q", name, dbs)
			}
			if err := s.Exec(user, password, name, "SELECT 1"); err != nil {
				t.Fatalf("%q logging in with its quoted password: %v", user, err)
			}
			if err := a.Drop(ctx, name, user, owner); err != nil {
				t.Fatalf("dropping %q: %v", name, err)
			}
		}
		dbs, _ := s.Databases()
		if !slices.Contains(dbs, "canary") {
			t.Fatal("the canary database is gone")
		}
		if err := s.Exec(s.AdminUser, s.AdminPassword, "", "SELECT 1"); err != nil {
			t.Fatalf("the admin: %v", err)
		}
		if err := a.Provision(ctx, "nul\x00db", "nul", "password", owner); err == nil {
			t.Fatal("a NUL in a name was accepted")
		}
		_ = a.Drop(ctx, "canary", "canary", owner)
	})
}

func TestConnectFailures(t *testing.T) {
	each(t, func(t *testing.T, s *testdb.Server) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cases := map[string]struct {
			server database.Server
			reason string
		}{
			"wrong password": {func() database.Server {
				ds := admin(s, database.TLSDisable)
				ds.Password = "wrong"
				return ds
			}(), database.ReasonAuthenticationFailed},
			"nothing listening": {func() database.Server {
				ds := admin(s, database.TLSDisable)
				ds.Port = 1
				return ds
			}(), database.ReasonServerUnreachable},
			"unknown CA": {func() database.Server {
				ds := admin(s, database.TLSVerifyFull)
				ds.CACert = foreignCA(t)
				return ds
			}(), database.ReasonTLSFailed},
			"no CA: the system's authorities, which did not sign it": {func() database.Server {
				ds := admin(s, database.TLSVerifyFull)
				ds.CACert = nil
				return ds
			}(), database.ReasonTLSFailed},
		}
		for name, c := range cases {
			a, err := database.Connect(ctx, c.server)
			if err == nil {
				_ = a.Close()
				t.Fatalf("%s: connected", name)
			}
			if got := database.Reason(err); got != c.reason {
				t.Errorf("%s: reason %s, want %s (%v)", name, got, c.reason, err)
			}
			if strings.Contains(err.Error(), s.AdminPassword) {
				t.Errorf("%s: the error shows the password: %v", name, err)
			}
		}
		// verify-full with the server's CA works.
		a := connect(t, admin(s, database.TLSVerifyFull))
		if err := a.Provision(ctx, "tls_ok", "tls_ok", "tls-password", owner); err != nil {
			t.Fatal(err)
		}
		_ = a.Drop(ctx, "tls_ok", "tls_ok", owner)
	})
}

// A PostgreSQL admin need not be a superuser: CREATEDB and CREATEROLE do.
func TestPostgresAdminWithoutSuperuser(t *testing.T) {
	s := servers[testdb.PostgreSQL]
	if err := s.Exec(s.AdminUser, s.AdminPassword, "", "CREATE ROLE kfcreator LOGIN CREATEDB CREATEROLE PASSWORD 'creator-pw'"); err != nil {
		t.Fatal(err)
	}
	ds := admin(s, database.TLSDisable)
	ds.Username, ds.Password = "kfcreator", "creator-pw"
	a := connect(t, ds)
	ctx := context.Background()
	if err := a.Provision(ctx, "nosuper", "nosuper", "nosuper-pw", owner); err != nil {
		t.Fatal(err)
	}
	if err := a.Provision(ctx, "nosuper", "nosuper", "nosuper-pw-2", owner); err != nil {
		t.Fatalf("again: %v", err)
	}
	if err := createTable(s, "nosuper", "nosuper-pw-2", "nosuper"); err != nil {
		t.Fatal(err)
	}
	if err := a.Drop(ctx, "nosuper", "nosuper", owner); err != nil {
		t.Fatal(err)
	}
}

func TestTheAdminsOwnLoginIsNeverProvisionedOrDropped(t *testing.T) {
	each(t, func(t *testing.T, s *testdb.Server) {
		a := connect(t, admin(s, database.TLSDisable))
		ctx := context.Background()
		if err := a.Provision(ctx, "adminsdb", s.AdminUser, "a-new-password", owner); err == nil {
			t.Fatal("the admin's own login was provisioned (its password changed)")
		}
		if err := a.Drop(ctx, "adminsdb", s.AdminUser, owner); err == nil {
			t.Fatal("the admin's own login was dropped")
		}
		if err := s.Exec(s.AdminUser, s.AdminPassword, "", "SELECT 1"); err != nil {
			t.Fatalf("the admin cannot log in any more: %v", err)
		}
	})
}

// Neither server ever receives a component's password: PostgreSQL gets
// the SCRAM verifier, MariaDB the mysql_native_password hash. Both log
// every statement they receive here.
func TestTheServerNeverReceivesThePassword(t *testing.T) {
	each(t, func(t *testing.T, s *testdb.Server) {
		password, err := database.GeneratePassword()
		if err != nil {
			t.Fatal(err)
		}
		a := connect(t, admin(s, database.TLSDisable))
		ctx := context.Background()
		for range 2 { // created, then set again
			if err := a.Provision(ctx, "hashed", "hashed", password, owner); err != nil {
				t.Fatal(err)
			}
		}
		if err := createTable(s, "hashed", password, "hashed"); err != nil {
			t.Fatalf("the user cannot log in with its password: %v", err)
		}
		log, err := s.Log()
		if err != nil {
			t.Fatal(err)
		}
		stored := map[string]string{testdb.PostgreSQL: "SCRAM-SHA-256$4096:", testdb.MariaDB: database.NativePasswordHash(password)}[s.Engine]
		if !strings.Contains(log, stored) {
			t.Fatalf("the server's statement log shows no %s: does it log every statement?", stored)
		}
		if strings.Contains(log, password) {
			t.Fatal("the password is in the server's statement log")
		}
		_ = a.Drop(ctx, "hashed", "hashed", owner)
	})
}

// What exists on the server and was not created for this owner — made by
// hand, or for another Platform — is not changed, granted to or dropped:
// NameConflict. The record is on the server: a new connection (a manager
// restart) still knows what is its own.
func TestProvisionNeverTakesOver(t *testing.T) {
	each(t, func(t *testing.T, s *testdb.Server) {
		ctx := context.Background()
		a := connect(t, admin(s, database.TLSDisable))
		// A user's own database and login, with other privileges.
		if err := s.Exec(s.AdminUser, s.AdminPassword, "", "CREATE DATABASE handmade", "CREATE DATABASE elsewhere"); err != nil {
			t.Fatal(err)
		}
		byHand := map[string][]string{
			testdb.MariaDB: {"CREATE USER 'handmade'@'%' IDENTIFIED BY 'theirs'", "GRANT ALL ON elsewhere.* TO 'handmade'@'%'"},
			testdb.PostgreSQL: {"CREATE ROLE handmade LOGIN PASSWORD 'theirs'", "GRANT ALL ON DATABASE elsewhere TO handmade",
				"ALTER DATABASE handmade OWNER TO handmade"},
		}[s.Engine]
		if err := s.Exec(s.AdminUser, s.AdminPassword, "", byHand...); err != nil {
			t.Fatal(err)
		}
		cases := []struct{ db, user string }{{"handmade", "handmade"}, {"handmade", "fresh_user"}, {"fresh_db", "handmade"}}
		if s.Engine == testdb.MariaDB {
			// A name is a user at whatever host: one made for localhost
			// only is someone's all the same.
			if err := s.Exec(s.AdminUser, s.AdminPassword, "", "CREATE USER 'local_only'@'localhost' IDENTIFIED BY 'theirs'"); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Exec(s.AdminUser, s.AdminPassword, "", "DROP USER 'local_only'@'localhost'") })
			cases = append(cases, struct{ db, user string }{"fresh_db", "local_only"})
		}
		for _, c := range cases {
			err := a.Provision(ctx, c.db, c.user, "kubeforges-password", owner)
			if database.Reason(err) != database.ReasonNameConflict {
				t.Fatalf("provisioning %s/%s over what a user made: %v, want NameConflict", c.db, c.user, err)
			}
			if err := a.Drop(ctx, c.db, c.user, owner); err != nil {
				t.Fatalf("dropping %s/%s: %v", c.db, c.user, err)
			}
		}
		if err := s.Exec("handmade", "theirs", "elsewhere", "SELECT 1"); err != nil {
			t.Fatalf("the user's login changed: %v", err)
		}
		dbs, _ := s.Databases()
		if !slices.Contains(dbs, "handmade") {
			t.Fatal("the user's database was dropped")
		}

		// Another Platform's database, seen from a new connection.
		shop, other := platformOwner("shop/acme", "uid-shop", "cluster-1"), platformOwner("other/acme", "uid-other", "cluster-1")
		if err := a.Provision(ctx, "shop_acme_api", "shop_acme_api", "pw-1", shop); err != nil {
			t.Fatal(err)
		}
		b := connect(t, admin(s, database.TLSDisable))
		if err := b.Provision(ctx, "shop_acme_api", "shop_acme_api", "pw-2", other); database.Reason(err) != database.ReasonNameConflict {
			t.Fatalf("another Platform's database: %v, want NameConflict", err)
		}
		if err := b.Drop(ctx, "shop_acme_api", "shop_acme_api", other); err != nil {
			t.Fatal(err)
		}
		if err := s.Exec("shop_acme_api", "pw-1", "shop_acme_api", "SELECT 1"); err != nil {
			t.Fatalf("another Platform's drop or provision touched it: %v", err)
		}
		if err := b.Provision(ctx, "shop_acme_api", "shop_acme_api", "pw-3", shop); err != nil {
			t.Fatalf("its own Platform, after a restart: %v", err)
		}
		if err := b.Drop(ctx, "shop_acme_api", "shop_acme_api", shop); err != nil {
			t.Fatal(err)
		}
		dbs, _ = s.Databases()
		if slices.Contains(dbs, "shop_acme_api") {
			t.Fatal("its own Platform's drop left the database")
		}
		_ = s.Exec(s.AdminUser, s.AdminPassword, "", "DROP DATABASE handmade", "DROP DATABASE elsewhere")
		_ = s.Exec(s.AdminUser, s.AdminPassword, "", map[string]string{testdb.MariaDB: "DROP USER 'handmade'@'%'", testdb.PostgreSQL: "DROP ROLE handmade"}[s.Engine])
	})
}

// The record names the Platform by its UID and the cluster by its own: a
// Platform created later under the same name, or one of another cluster
// sharing the server, is not the owner. A record of the earlier form (the
// name alone) is taken, and rewritten, only when the owner says it may be
// (a Platform made before the ownership key).
func TestOwnerRecordsCarryThePlatformsAndTheClustersIdentity(t *testing.T) {
	each(t, func(t *testing.T, s *testdb.Server) {
		ctx := context.Background()
		a := connect(t, admin(s, database.TLSDisable))
		first := platformOwner("shop/acme", "uid-first", "cluster-1")
		if err := a.Provision(ctx, "rec_api", "rec_api", "pw-1", first); err != nil {
			t.Fatal(err)
		}
		for what, o := range map[string]database.Owner{
			"a Platform of the same name created later":         platformOwner("shop/acme", "uid-later", "cluster-1"),
			"the same Platform name and UID in another cluster": platformOwner("shop/acme", "uid-first", "cluster-2"),
			"a record of the earlier form, the name alone":      {Name: "Platform shop/acme", Record: "Platform shop/acme"},
		} {
			if err := a.Provision(ctx, "rec_api", "rec_api", "pw-2", o); database.Reason(err) != database.ReasonNameConflict {
				t.Errorf("%s: %v, want NameConflict", what, err)
			}
			if err := a.Drop(ctx, "rec_api", "rec_api", o); err != nil {
				t.Fatal(err)
			}
			if err := s.Exec("rec_api", "pw-1", "rec_api", "SELECT 1"); err != nil {
				t.Fatalf("%s changed or dropped the owner's: %v", what, err)
			}
		}
		if err := a.Drop(ctx, "rec_api", "rec_api", first); err != nil {
			t.Fatal(err)
		}

		// What an earlier kubeforge recorded: the name alone.
		legacy := database.Owner{Name: "Platform shop/old", Record: "Platform shop/old"}
		if err := a.Provision(ctx, "old_api", "old_api", "pw-1", legacy); err != nil {
			t.Fatal(err)
		}
		now := platformOwner("shop/old", "uid-old", "cluster-1")
		if err := a.Provision(ctx, "old_api", "old_api", "pw-2", now); database.Reason(err) != database.ReasonNameConflict {
			t.Fatalf("an earlier record taken without leave: %v, want NameConflict", err)
		}
		now.Formerly = legacy.Record
		if err := a.Provision(ctx, "old_api", "old_api", "pw-2", now); err != nil {
			t.Fatalf("the earlier record with leave: %v", err)
		}
		now.Formerly = ""
		if err := a.Provision(ctx, "old_api", "old_api", "pw-3", now); err != nil {
			t.Fatalf("the record was not rewritten to the new form: %v", err)
		}
		if err := a.Provision(ctx, "old_api", "old_api", "pw-4", legacy); database.Reason(err) != database.ReasonNameConflict {
			t.Fatalf("the earlier form still holds after the rewrite: %v", err)
		}
		if err := s.Exec("old_api", "pw-3", "old_api", "SELECT 1"); err != nil {
			t.Fatalf("the owner's login: %v", err)
		}
		if err := a.Drop(ctx, "old_api", "old_api", now); err != nil {
			t.Fatal(err)
		}
		if dbs, _ := s.Databases(); slices.Contains(dbs, "old_api") {
			t.Fatal("the owner's drop left the database")
		}
	})
}

func TestGeneratePassword(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		p, err := database.GeneratePassword()
		if err != nil {
			t.Fatal(err)
		}
		if len(p) < 24 || strings.Trim(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") != "" {
			t.Fatalf("password %q", p)
		}
		if seen[p] {
			t.Fatalf("password %q twice", p)
		}
		seen[p] = true
	}
}

func TestURL(t *testing.T) {
	pg := database.URL(database.Server{Engine: "postgresql", Host: "db.example.com", Port: 5432, TLSMode: "verify-full"}, "acme_api", "acme_api", "p@ss/w:rd")
	if pg != "postgresql://acme_api:p%40ss%2Fw%3Ard@db.example.com:5432/acme_api?sslmode=verify-full" {
		t.Errorf("postgresql URL %s", pg)
	}
	my := database.URL(database.Server{Engine: "mysql", Host: "fd00::1", Port: 3306, TLSMode: "disable"}, "d", "u", "p")
	if my != "mysql://u:p@[fd00::1]:3306/d?ssl-mode=DISABLED" {
		t.Errorf("mysql URL %s", my)
	}
}

// foreignCA is a certificate authority that signed nothing the servers hold.
func foreignCA(t *testing.T) []byte {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "someone else"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// A statement that holds a password (its hash, its verifier) can fail
// with a message that quotes it — MySQL's syntax errors quote the
// statement from where it stopped — and a failure goes to status, events
// and the log. So its failure says what failed and the server's error
// number, never the server's message. Here the server refuses for want of
// the right to create users, an admin who may create databases only.
func TestAFailedStatementThatHoldsAPasswordDoesNotCarryTheServersMessage(t *testing.T) {
	each(t, func(t *testing.T, s *testdb.Server) {
		var setup []string
		want := ""
		if s.Engine == testdb.PostgreSQL {
			setup = []string{"CREATE ROLE kfnoroles LOGIN CREATEDB PASSWORD 'noroles-pw'"}
			want = "SQLSTATE 42501"
		} else {
			setup = []string{"CREATE USER 'kfnoroles'@'%' IDENTIFIED BY 'noroles-pw'", "GRANT CREATE ON *.* TO 'kfnoroles'@'%'",
				"GRANT SELECT ON mysql.user TO 'kfnoroles'@'%'", "GRANT ALL PRIVILEGES ON `kubeforge`.* TO 'kfnoroles'@'%'"}
			want = "MySQL error 1227"
		}
		if err := s.Exec(s.AdminUser, s.AdminPassword, "", setup...); err != nil {
			t.Fatal(err)
		}
		ds := admin(s, database.TLSDisable)
		ds.Username, ds.Password = "kfnoroles", "noroles-pw"
		a := connect(t, ds)
		err := a.Provision(context.Background(), "noroles", "noroles", "the-components-password", owner)
		if err == nil {
			t.Fatal("an admin without the right to create users created one")
		}
		msg := err.Error()
		if !strings.Contains(msg, "creating user noroles") || !strings.Contains(msg, want) {
			t.Errorf("the failure %q does not say what failed and %s", msg, want)
		}
		// What the server said, which names the privilege it wanted.
		for _, server := range []string{"denied", "permission", "privilege"} {
			if strings.Contains(strings.ToLower(msg), server) {
				t.Errorf("the failure carries the server's message (%q): %q", server, msg)
			}
		}
		if got := database.Reason(err); got != database.ReasonProvisioningFailed {
			t.Errorf("reason %s, want %s", got, database.ReasonProvisioningFailed)
		}
	})
}
