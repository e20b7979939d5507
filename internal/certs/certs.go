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

// Package certs provisions and rotates the operator's serving
// certificates where nobody else provides them — the API's under OLM, and
// the API's and the webhooks' in an install without cert-manager — with
// open-policy-agent/cert-controller: a CA and a serving certificate live
// in a Secret of the operator's namespace, the leader renews them before
// they expire, every replica serves what the Secret holds, and the CA is
// published: in a ConfigMap for the API's callers, and in the caBundle of
// the webhook configurations for the API server.
package certs

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// The files a certificate directory holds, as cert-manager's Secrets
// mount them: what the API's certificate watcher and the installers read.
const (
	CertFile = "tls.crt"
	KeyFile  = "tls.key"
	CAFile   = "ca.crt"
)

// Options say what to provision.
type Options struct {
	// Namespace is the operator's namespace: the Secret and the CA
	// ConfigMap live there.
	Namespace string
	// Secret holds the CA and the serving certificate (made empty at
	// start if missing; the rotator fills it).
	Secret string
	// CAConfigMap is where the CA certificate is published (ca.crt).
	CAConfigMap string
	// DNSNames are the names the certificate is for; the first is its
	// subject.
	DNSNames []string
	// Dir is a writable directory where every replica keeps the Secret's
	// certificate as files (CertFile, KeyFile, CAFile) for the server.
	Dir string
	// Validity is how long a serving certificate is valid, RenewBefore
	// how long before its end it is replaced, CAValidity the CA's.
	Validity, RenewBefore, CAValidity time.Duration
	// Name tells the rotator's controller apart from others.
	Name string
	// Webhooks are the webhook configurations whose caBundle is kept
	// equal to the CA.
	Webhooks []Webhook
}

// Webhook names one webhook configuration.
type Webhook struct {
	Name     string
	Mutating bool
}

func (o Options) checkEvery() time.Duration {
	// Often enough that a certificate is renewed well inside RenewBefore.
	return min(time.Hour, max(time.Second, o.RenewBefore/4))
}

// Provision adds to mgr what keeps a certificate in o.Dir: the rotator
// (on the leader), a mirror of the Secret into o.Dir (on every replica)
// and the CA's publication (on the leader). c reads and writes directly,
// past the manager's cache, which holds no Secret's content.
func Provision(ctx context.Context, mgr manager.Manager, c client.Client, o Options) error {
	if o.Namespace == "" || o.Secret == "" || o.Dir == "" || len(o.DNSNames) == 0 {
		return errors.New("certs: the namespace, the Secret, a directory and a DNS name are needed")
	}
	if o.RenewBefore <= 0 || o.Validity <= o.RenewBefore {
		return fmt.Errorf("certs: a certificate valid for %s cannot be renewed %s before its end", o.Validity, o.RenewBefore)
	}
	if o.CAValidity != 0 && o.CAValidity < o.Validity+o.RenewBefore {
		// The CA is renewed like the certificate, RenewBefore ahead; a CA
		// shorter than that would be made anew on every check.
		return fmt.Errorf("certs: a CA valid for %s is too short for certificates valid for %s renewed %s before their end",
			o.CAValidity, o.Validity, o.RenewBefore)
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return fmt.Errorf("certs: %w", err)
	}
	// The rotator updates the Secret; it never creates it.
	err := c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: o.Namespace, Name: o.Secret,
		Labels: map[string]string{"app.kubernetes.io/name": "kubeforge", "app.kubernetes.io/component": "certificate"}}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("certs: creating the Secret %s/%s: %w", o.Namespace, o.Secret, err)
	}
	key := types.NamespacedName{Namespace: o.Namespace, Name: o.Secret}
	var webhooks []rotator.WebhookInfo
	for _, w := range o.Webhooks {
		t := rotator.Validating
		if w.Mutating {
			t = rotator.Mutating
		}
		webhooks = append(webhooks, rotator.WebhookInfo{Name: w.Name, Type: t})
	}
	if err := rotator.AddRotator(mgr, &rotator.CertRotator{
		Webhooks:               webhooks,
		SecretKey:              key,
		CertDir:                o.Dir,
		CAName:                 "kubeforge-" + o.Name + "-ca",
		CAOrganization:         "kubeforge",
		DNSName:                o.DNSNames[0],
		ExtraDNSNames:          o.DNSNames[1:],
		IsReady:                make(chan struct{}),
		RequireLeaderElection:  true,
		CaCertDuration:         o.CAValidity,
		ServerCertDuration:     o.Validity,
		LookaheadInterval:      o.RenewBefore,
		RotationCheckFrequency: o.checkEvery(),
		ControllerName:         "kubeforge-" + o.Name + "-cert-rotator",
	}); err != nil {
		return fmt.Errorf("certs: %w", err)
	}
	m := &mirror{c: c, key: key, o: o}
	if err := mgr.Add(m); err != nil {
		return err
	}
	if o.CAConfigMap == "" {
		return nil
	}
	return mgr.Add(&publisher{m})
}

// WaitForFiles returns once dir holds a certificate and the key that
// goes with it, or ctx ends; waiting is called once if they are not there
// at first. A pair caught halfway through a renewal (the key already new,
// the certificate not yet) is waited out too.
func WaitForFiles(ctx context.Context, dir string, waiting func()) error {
	for first := true; ; first = false {
		if _, err := tls.LoadX509KeyPair(filepath.Join(dir, CertFile), filepath.Join(dir, KeyFile)); err == nil {
			return nil
		}
		if first && waiting != nil {
			waiting()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// WaitingWebhookServer is srv, started once dir holds the certificate
// Provision keeps there: controller-runtime's server reads it at start.
func WaitingWebhookServer(srv webhook.Server, dir string) webhook.Server {
	return waitingServer{Server: srv, dir: dir}
}

type waitingServer struct {
	webhook.Server
	dir string
}

func (s waitingServer) Start(ctx context.Context) error {
	log := logf.FromContext(ctx).WithName("certs")
	if err := WaitForFiles(ctx, s.dir, func() { log.Info("Waiting for the webhooks' certificate", "dir", s.dir) }); err != nil {
		return nil // stopped before it came: nothing was served
	}
	return s.Server.Start(ctx)
}

// mirror copies the Secret's certificate into the directory.
type mirror struct {
	c   client.Client
	key types.NamespacedName
	o   Options
}

// every runs f until ctx ends: each second until f reports that what it
// keeps is there (the first certificate, made a moment after start), then
// every o.refreshEvery().
func (o Options) every(ctx context.Context, f func(context.Context) bool) error {
	settled := false
	for {
		settled = f(ctx) || settled
		wait := time.Second
		if settled {
			wait = o.refreshEvery()
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// refreshEvery is how often the Secret is read again once it holds a
// certificate: a renewal (RenewBefore ahead of the end) is served well
// before the old certificate ends, at most a minute later.
func (o Options) refreshEvery() time.Duration { return min(time.Minute, o.checkEvery()) }

// NeedLeaderElection is false: every replica serves the certificate.
func (m *mirror) NeedLeaderElection() bool { return false }

// Start copies the Secret's certificate into the directory until ctx ends.
func (m *mirror) Start(ctx context.Context) error {
	log := logf.FromContext(ctx).WithName("certs").WithValues("secret", m.key.String())
	return m.o.every(ctx, func(ctx context.Context) bool {
		s := &corev1.Secret{}
		if err := m.c.Get(ctx, m.key, s); err != nil {
			log.Error(err, "Reading the certificate Secret")
			return false
		}
		if len(s.Data[CertFile]) == 0 || len(s.Data[KeyFile]) == 0 {
			return false // not made yet
		}
		// The key first and the certificate last: the server's watcher
		// loads the pair when the certificate changes.
		for _, f := range []string{KeyFile, CAFile, CertFile} {
			if err := writeIfChanged(filepath.Join(m.o.Dir, f), s.Data[f]); err != nil {
				log.Error(err, "Writing the certificate", "file", f)
				return false
			}
		}
		return true
	})
}

// writeIfChanged replaces path's content atomically when it differs.
func writeIfChanged(path string, b []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, b) {
		return nil
	}
	tmp := path + ".new"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// publisher keeps the CA ConfigMap equal to the Secret's CA.
type publisher struct{ m *mirror }

func (p *publisher) NeedLeaderElection() bool { return true }

func (p *publisher) Start(ctx context.Context) error {
	log := logf.FromContext(ctx).WithName("certs").WithValues("configMap", p.m.o.Namespace+"/"+p.m.o.CAConfigMap)
	return p.m.o.every(ctx, func(ctx context.Context) bool {
		s := &corev1.Secret{}
		if err := p.m.c.Get(ctx, p.m.key, s); err != nil || len(s.Data[CAFile]) == 0 {
			return false
		}
		if err := p.publish(ctx, string(s.Data[CAFile])); err != nil {
			log.Error(err, "Publishing the CA")
			return false
		}
		return true
	})
}

func (p *publisher) publish(ctx context.Context, ca string) error {
	cm := &corev1.ConfigMap{}
	key := types.NamespacedName{Namespace: p.m.o.Namespace, Name: p.m.o.CAConfigMap}
	err := p.m.c.Get(ctx, key, cm)
	if apierrors.IsNotFound(err) {
		return p.m.c.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name,
				Labels: map[string]string{"app.kubernetes.io/name": "kubeforge", "app.kubernetes.io/component": "certificate"}},
			Data: map[string]string{CAFile: ca},
		})
	}
	if err != nil || cm.Data[CAFile] == ca {
		return err
	}
	cm.Data = map[string]string{CAFile: ca}
	return p.m.c.Update(ctx, cm)
}
