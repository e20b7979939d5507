package testdb_test

import (
	"testing"

	"github.com/kubeforge/kubeforge/internal/test/testdb"
)

func TestServersStartStopStart(t *testing.T) {
	for _, engine := range []string{testdb.MariaDB, testdb.PostgreSQL} {
		t.Run(engine, func(t *testing.T) {
			s, err := testdb.Start(engine)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = s.Close() }()
			if err := s.Exec(s.AdminUser, "wrong", "", "SELECT 1"); err == nil {
				t.Fatal("a wrong admin password logged in")
			}
			if err := s.Stop(); err != nil {
				t.Fatal(err)
			}
			if err := s.Exec(s.AdminUser, s.AdminPassword, "", "SELECT 1"); err == nil {
				t.Fatal("a stopped server answered")
			}
			if err := s.Start(); err != nil {
				t.Fatal(err)
			}
			dbs, err := s.Databases()
			if err != nil || len(dbs) == 0 {
				t.Fatalf("databases after a restart: %v %v", dbs, err)
			}
		})
	}
}
