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

package admit

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// APIServerIdleTimeout is how long the API server keeps an idle
// connection to a webhook before it closes it: Go's http.DefaultTransport
// value, which apimachinery's SetTransportDefaults gives the API server's
// webhook client.
const APIServerIdleTimeout = 90 * time.Second

// IdleTimeout is how long the webhook server keeps an idle connection:
// longer than the API server does, so that the API server always closes
// first. controller-runtime's server closes at the same 90 s, and a
// request the API server sends on a connection at the moment the server
// closes it fails ("failed calling webhook … broken pipe" or EOF): the
// write refused after about 90 s without admission requests.
const IdleTimeout = 2 * APIServerIdleTimeout

// DrainTime is how long the webhook server of the manifests
// (--webhook-drain-time) goes on answering once it is told to stop, with
// every answer closing its connection ("Connection: close"), before it
// shuts down. By then the API server has stopped opening connections to
// the replica (it left the webhook Service when its deletion began), but
// keeps those it holds, and a request it sends on one at the moment the
// server closes it fails ("failed calling webhook … EOF", seen when a
// leader Pod was deleted). A connection the API server uses while the
// server drains is closed after the answer, which the API server reads,
// so it never sends on it again; only one left idle all along is still
// closed by the shutdown. The preStop sleep (3 s), this and the shutdown
// fit within the Pod's termination grace period (10 s). The Lease is
// released after it (controller-runtime stops the webhooks last), so a
// new leader takes over that much later: 0 (no drain) where no Service
// and no pooled connection stand between the API server and the
// webhooks, as outside a cluster.
const DrainTime = 2 * time.Second

// NewWebhookServer is controller-runtime's webhook server (its mux, its
// registration and the metrics of each webhook) served by an HTTP server
// whose idle timeout is IdleTimeout. It serves opts.CertDir's
// certificate (reloaded when the files change) or opts.TLSOpts'
// GetCertificate, as controller-runtime's does.
func NewWebhookServer(opts webhook.Options) webhook.Server {
	if opts.Port == 0 {
		opts.Port = webhook.DefaultPort
	}
	if opts.CertDir == "" {
		opts.CertDir = filepath.Join(os.TempDir(), "k8s-webhook-server", "serving-certs")
	}
	if opts.CertName == "" {
		opts.CertName = "tls.crt"
	}
	if opts.KeyName == "" {
		opts.KeyName = "tls.key"
	}
	return &webhookServer{Server: webhook.NewServer(opts), opts: opts, idle: IdleTimeout}
}

// Drain sets how long srv, made by NewWebhookServer, drains when it is
// told to stop (DrainTime); 0, the default, shuts down at once.
func Drain(srv webhook.Server, d time.Duration) {
	if s, ok := srv.(*webhookServer); ok {
		s.drain = d
	}
}

type webhookServer struct {
	// Register, WebhookMux and NeedLeaderElection; its Start is not used.
	webhook.Server
	opts     webhook.Options
	idle     time.Duration
	drain    time.Duration
	started  atomic.Bool
	draining atomic.Bool
}

func (s *webhookServer) addr() string {
	return net.JoinHostPort(s.opts.Host, strconv.Itoa(s.opts.Port))
}

func (s *webhookServer) Start(ctx context.Context) error {
	log := logf.FromContext(ctx).WithName("webhook-server")
	if s.opts.Port < 0 {
		log.Info("Webhook server is disabled")
		return nil
	}
	cfg := &tls.Config{NextProtos: []string{"h2"}, MinVersion: tls.VersionTLS12}
	for _, op := range s.opts.TLSOpts {
		op(cfg)
	}
	if cfg.GetCertificate == nil {
		watcher, err := certwatcher.New(filepath.Join(s.opts.CertDir, s.opts.CertName), filepath.Join(s.opts.CertDir, s.opts.KeyName))
		if err != nil {
			return err
		}
		cfg.GetCertificate = watcher.GetCertificate
		go func() {
			if err := watcher.Start(ctx); err != nil {
				log.Error(err, "Certificate watcher")
			}
		}()
	}
	if s.opts.ClientCAName != "" {
		// A name in the certificate directory, or a path of its own.
		path := s.opts.ClientCAName
		if !filepath.IsAbs(path) {
			path = filepath.Join(s.opts.CertDir, path)
		}
		pem, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("reading the client CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return errors.New("the client CA file holds no certificate")
		}
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	ln, err := tls.Listen("tcp", s.addr(), cfg)
	if err != nil {
		return err
	}
	srv := &http.Server{
		// ctx's values (the logger), not its end: the requests answered
		// while the server drains and shuts down run to their end.
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
		Handler:           s.closingWhileDraining(s.WebhookMux()),
		MaxHeaderBytes:    1 << 20,
		ReadHeaderTimeout: 32 * time.Second,
		IdleTimeout:       s.idle,
	}
	closed := make(chan struct{})
	go func() {
		<-ctx.Done()
		if s.drain > 0 {
			s.draining.Store(true)
			log.Info("Draining: each answer closes its connection until the shutdown", "for", s.drain)
			time.Sleep(s.drain)
		}
		shutdown, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := srv.Shutdown(shutdown); err != nil {
			log.Error(err, "Shutting down the webhook server")
		}
		close(closed)
	}()
	log.Info("Serving webhooks", "address", s.addr(), "idleTimeout", s.idle)
	s.started.Store(true)
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	<-closed
	return nil
}

// StartedChecker is healthy once the server accepts TLS connections.
func (s *webhookServer) StartedChecker() healthz.Checker {
	return func(*http.Request) error {
		if s.opts.Port < 0 {
			return nil
		}
		if !s.started.Load() {
			return errors.New("the webhook server has not started yet")
		}
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", s.addr(), &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // reachability only
		if err != nil {
			return fmt.Errorf("the webhook server is not reachable: %w", err)
		}
		return conn.Close()
	}
}

// closingWhileDraining has every answer close its connection once the
// server drains (DrainTime).
func (s *webhookServer) closingWhileDraining(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.draining.Load() {
			w.Header().Set("Connection", "close")
		}
		h.ServeHTTP(w, r)
	})
}
