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

package apiserver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"math/big"
	"testing"
	"time"

	"github.com/kubeforge/kubeforge/internal/localca"
)

// The API serves the certificate in CertDir, verified by its CA (no
// InsecureSkipVerify), and a renewed one — written over the files as
// cert-manager's Secret volume is — from the next handshake on, without
// a restart.
func TestServesTheRenewedCertificate(t *testing.T) {
	dir := t.TempDir()
	ca, err := localca.New("test CA")
	if err != nil {
		t.Fatal(err)
	}
	if err := ca.WriteServing(dir, "localhost", "127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	s := &Server{Addr: "127.0.0.1:0", CertDir: dir, HandlerTimeout: time.Second}
	addr, err := s.Listen()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Start(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.PEM)
	served := func() (*big.Int, error) {
		conn, err := tls.Dial("tcp", addr.String(), &tls.Config{RootCAs: pool, ServerName: "localhost", MinVersion: tls.VersionTLS12})
		if err != nil {
			return nil, err
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].SerialNumber, nil
	}
	var first *big.Int
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if first, err = served(); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no verified handshake: %v", err)
		}
	}
	if err := ca.WriteServing(dir, "localhost", "127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		now, err := served()
		if err != nil {
			t.Fatalf("after the renewal: %v", err)
		}
		if now.Cmp(first) != 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the renewed certificate was not served within 20 s")
		}
	}
}
