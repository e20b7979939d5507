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

// Package apiserver is the manager's API for programs: REST for
// KubernetesClusters and gRPC for Workspaces, on one HTTPS port. Callers
// authenticate with a Kubernetes bearer token (TokenReview) and may do
// what their own RBAC allows (SubjectAccessReview) — nothing more. Every
// replica serves it, leader or not. docs/api.md describes it.
package apiserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/kubeforge/kubeforge/internal/certs"
	"github.com/kubeforge/kubeforge/internal/localca"

	corev1 "k8s.io/api/core/v1"

	"google.golang.org/grpc"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/apiserver/idev1"
	"github.com/kubeforge/kubeforge/internal/apiserver/seedpb"
	"github.com/kubeforge/kubeforge/internal/proof"
)

// MaxBodyBytes is the largest request body the REST API reads, and the
// largest message the gRPC API receives.
const MaxBodyBytes = 1 << 20

// Server serves the REST and gRPC APIs.
type Server struct {
	// Addr to listen on, e.g. ":8082".
	Addr string
	// CertDir holds tls.crt and tls.key (cert-manager's Secret, in
	// config/default; or the operator's own, internal/certs); they are
	// read again whenever they change, so a renewed certificate is served
	// without a restart, and waited for when they are not there yet. A
	// self-signed localhost certificate is made when empty: the manager
	// does that only outside a cluster, and says so.
	CertDir string
	// Client reads kubeforge objects as the operator (after the caller's
	// RBAC allowed the call).
	Client client.Client
	// ClientFor returns a client that acts as the caller: every create,
	// update, patch and delete a call asks for is made with it
	// (ImpersonatingClients), never as the operator.
	ClientFor func(*User) (client.Client, error)
	// Cache is the manager's cache: waiting calls listen to its informer
	// instead of opening a watch each.
	Cache cache.Cache
	// APIReader reads past the cache: callback tokens, fresh.
	APIReader client.Reader
	// Clientset streams pod logs.
	Clientset kubernetes.Interface
	// Recorder records installer callbacks as events.
	Recorder events.EventRecorder
	// Auth authenticates and authorises callers.
	Auth *Auth
	// HandlerTimeout bounds every REST handler but log streams, and every
	// gRPC call without a deadline of its own but create-and-wait.
	HandlerTimeout time.Duration
	// WaitTimeout bounds a create-and-wait call without a deadline.
	WaitTimeout time.Duration
	// WorkspaceStatus is the Workspace controller's rule for the status
	// it reports with a given Pod, and whether that Pod is the current
	// one (workspace.StatusWith): create-and-wait answers Running from
	// it, without waiting for the controller's status write. The manager
	// wires it in, so that this package does not import the controllers.
	WorkspaceStatus func(*idev1alpha1.Workspace, *corev1.Pod) (idev1alpha1.WorkspaceStatus, bool)
	// Owns reports whether obj is proven to be owner's (the engine's
	// seal, package proof): what the API relies on that the operator
	// made, such as an installer's callback Secret.
	Owns func(owner, obj client.Object) bool
	// Proof seals an object a hand-back gives to an owner (handback.go).
	Proof *proof.Keyring
	// MaxWaitsPerCaller and MaxStreamsPerCaller bound the create-and-wait
	// calls and the followed log streams one caller (user name) may hold
	// open at once; past them a call is refused (429, RESOURCE_EXHAUSTED)
	// instead of tying up the server. Zero means DefaultMaxWaitsPerCaller
	// and DefaultMaxStreamsPerCaller.
	MaxWaitsPerCaller, MaxStreamsPerCaller int
	// MaxWaits and MaxStreams bound the same over all callers together:
	// many callers (ServiceAccounts a namespace admin may mint by the
	// thousand) cannot hold more between them. Zero means DefaultMaxWaits
	// and DefaultMaxStreams.
	MaxWaits, MaxStreams int

	listener net.Listener
	waits    slots
	streams  slots
}

// The defaults of Server.MaxWaitsPerCaller and MaxStreamsPerCaller.
const (
	DefaultMaxWaitsPerCaller   = 20
	DefaultMaxStreamsPerCaller = 5
	DefaultMaxWaits            = 1000
	DefaultMaxStreams          = 100
)

// slots counts what each caller holds open.
type slots struct {
	mu    sync.Mutex
	open  map[string]int
	total int
}

// acquire takes one of max slots for u, and one of all callers' total
// (what names the slots in the refusal), or returns a 429 *Error;
// release gives it back.
func (sl *slots) acquire(u *User, max, total int, what string) (release func(), err error) {
	if u == nil {
		return nil, ErrUnauthenticated
	}
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.open[u.Name] >= max {
		return nil, newError(http.StatusTooManyRequests, "TooManyRequests", "%s has %d %s open, the most one caller may; retry when one ends", u.Name, max, what)
	}
	if sl.total >= total {
		return nil, newError(http.StatusTooManyRequests, "TooManyRequests", "%d %s are open, the most the server holds; retry when one ends", total, what)
	}
	if sl.open == nil {
		sl.open = map[string]int{}
	}
	sl.open[u.Name]++
	sl.total++
	return func() {
		sl.mu.Lock()
		defer sl.mu.Unlock()
		sl.total--
		if sl.open[u.Name]--; sl.open[u.Name] <= 0 {
			delete(sl.open, u.Name)
		}
	}, nil
}

// hostOf is the host of a host:port address, for per-address limits.
func hostOf(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}

// The manager reads what callers ask about, after their own RBAC allowed
// it; it writes only as the caller (impersonate.go). Reading installer
// logs is reading pod logs.
// +kubebuilder:rbac:groups=ide.kubeforge.io,resources=workspaces,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=pods/log,verbs=get
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// NeedLeaderElection is false: every replica serves the API.
func (s *Server) NeedLeaderElection() bool { return false }

// Handler routes gRPC (HTTP/2, application/grpc) to the gRPC server and
// everything else to the REST mux.
func (s *Server) Handler() http.Handler {
	g := grpc.NewServer(grpc.UnaryInterceptor(s.unaryAuth), grpc.MaxRecvMsgSize(MaxBodyBytes))
	idev1.RegisterCloudIdeServiceServer(g, &ideService{s: s})
	seedpb.RegisterCloudIdeServiceServer(g, &seedService{s: s})
	rest := s.restMux()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 2 && strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc") {
			g.ServeHTTP(w, r)
			return
		}
		rest.ServeHTTP(w, r)
	})
}

// Listen binds the port (so a caller knows it before Start).
func (s *Server) Listen() (net.Addr, error) {
	l, err := net.Listen("tcp", s.Addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", s.Addr, err)
	}
	s.listener = l
	return l.Addr(), nil
}

// Start serves until ctx ends, then shuts down gracefully: new
// connections are refused, calls in flight get up to 10 s to finish.
func (s *Server) Start(ctx context.Context) error {
	log := logf.FromContext(ctx).WithName("apiserver")
	if s.listener == nil {
		if _, err := s.Listen(); err != nil {
			return err
		}
	}
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12, NextProtos: []string{"h2", "http/1.1"}}
	if s.CertDir != "" {
		// A certificate the operator provisions itself (internal/certs)
		// is written a moment after start: wait for it.
		if err := certs.WaitForFiles(ctx, s.CertDir, func() {
			log.Info("Waiting for the API's certificate", "dir", s.CertDir)
		}); err != nil {
			return err
		}
		// Watched (file events, and a poll every 10 s as a fallback): a
		// renewed certificate is served from the next handshake.
		w, err := certwatcher.New(filepath.Join(s.CertDir, "tls.crt"), filepath.Join(s.CertDir, "tls.key"))
		if err != nil {
			return fmt.Errorf("reading the API's certificate: %w", err)
		}
		go func() {
			if err := w.Start(ctx); err != nil {
				log.Error(err, "Watching the API's certificate failed; the one read at start is served")
			}
		}()
		tlsConfig.GetCertificate = w.GetCertificate
	} else {
		cert, err := SelfSigned()
		if err != nil {
			return err
		}
		tlsConfig.Certificates = []tls.Certificate{cert}
	}
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		TLSConfig:         tlsConfig,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	errs := make(chan error, 1)
	go func() {
		log.Info("Serving the REST and gRPC API", "address", s.listener.Addr().String())
		errs <- srv.ServeTLS(s.listener, "", "")
	}()
	select {
	case err := <-errs:
		return err
	case <-ctx.Done():
	}
	log.Info("Shutting down the API server")
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// SelfSigned makes a certificate for localhost, signed by a throwaway CA:
// what the API serves without --api-cert-path, for trying things only.
func SelfSigned() (tls.Certificate, error) {
	ca, err := localca.New("kubeforge-api self-signed")
	if err != nil {
		return tls.Certificate{}, err
	}
	certPEM, keyPEM, err := ca.Serving(365*24*time.Hour, "localhost", "127.0.0.1", "::1")
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.X509KeyPair(certPEM, keyPEM)
}
