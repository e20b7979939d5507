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

package platform

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	"github.com/kubeforge/kubeforge/controllers/platform/database"
)

// Reasons of the DatabaseReady condition, besides the server's own
// (database.Reason*).
const (
	ReasonProvisioned         = "Provisioned"
	ReasonAdminSecretNotFound = "AdminSecretNotFound"
	ReasonAdminSecretInvalid  = "AdminSecretInvalid"
	ReasonCASecretNotFound    = "CASecretNotFound"
	ReasonCASecretInvalid     = "CASecretInvalid"
	ReasonPasswordRotated     = "PasswordRotated"
	ReasonDatabasesDropped    = "DatabasesDropped"
	ReasonDropFailed          = "DropFailed"
)

// DatabaseRecheck is how long a provisioned database is trusted before
// the operator checks it on the server again (and repairs a user or
// database dropped by hand).
const DatabaseRecheck = 10 * time.Minute

// dbState is what the reconciler knows of one component's database.
type dbState struct {
	// ready: the server holds the database and the user with the
	// password of the Secret.
	ready bool
	// version is the Secret's resourceVersion the server was provisioned
	// with, for the pod template; empty while the Secret is being written.
	version string
	message string
}

// dbObserved is what the reconciler saw of the database server.
type dbObserved struct {
	// configured: spec.database is set and a component asks for a database.
	configured bool
	components map[string]dbState
	// reason and message of the DatabaseReady condition.
	reason, message string
	ready           bool
	// pending: the server is being provisioned in the background; not a
	// failure.
	pending bool
	// secrets are the components' database Secrets, desired.
	secrets []client.Object
}

// provisionMemo remembers, in memory only, what was provisioned when: a
// database is checked on the server again only after DatabaseRecheck, or
// when anything it depends on (the password included) changes. A restart
// of the operator checks everything once.
type provisionMemo struct {
	mu   sync.Mutex
	seen map[string]time.Time
}

func (m *provisionMemo) fresh(key string, now time.Time) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.seen[key]
	return ok && now.Sub(t) < DatabaseRecheck
}

func (m *provisionMemo) remember(key string, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen == nil {
		m.seen = map[string]time.Time{}
	}
	m.seen[key] = now
}

// memoKey is a digest of everything a provisioning depends on; the
// password is in it only as part of the digest.
func memoKey(p *appsv1alpha1.Platform, c *appsv1alpha1.PlatformComponent, s database.Server, password string) string {
	h := sha256.New()
	for _, v := range []string{string(p.UID), c.Name, s.Engine, s.Addr(), s.TLSMode,
		appsv1alpha1.DatabaseName(p, c), appsv1alpha1.DatabaseUser(p, c), password} {
		h.Write([]byte(v))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// databases makes every component that asks for a database have its
// Secret and, for the enabled ones, its database and user on the server.
// p is the Platform as stored (its annotations are patched when a
// rotation was asked for). p is defaulted.
func (r *Reconciler) databases(ctx context.Context, p *appsv1alpha1.Platform, live map[string]Live) (dbObserved, error) {
	log := logf.FromContext(ctx)
	o := dbObserved{components: map[string]dbState{}}
	d := p.Spec.Database
	var comps []*appsv1alpha1.PlatformComponent
	for i := range p.Spec.Components {
		if c := &p.Spec.Components[i]; c.HasDatabase() {
			comps = append(comps, c)
		}
	}
	if d == nil || len(comps) == 0 {
		return o, nil
	}
	o.configured = true
	server := DatabaseServer(p)

	// The Secrets first: they hold the passwords, which are the truth the
	// server is brought to.
	rotate, err := r.rotateRequest(p, appsv1alpha1.RotateDatabasePasswordAnnotation)
	if err != nil {
		return o, err
	}
	passwords, changed, secrets, err := r.databaseSecrets(ctx, p, comps, &o, rotate)
	if err != nil {
		return o, err
	}
	if len(rotate) > 0 {
		for _, name := range rotate {
			if slices.ContainsFunc(comps, func(c *appsv1alpha1.PlatformComponent) bool { return c.Name == name }) {
				log.Info("Rotated a database password", "component", name)
				r.Engine.Event(p, ReasonPasswordRotated, "RotatePassword", "New database password for %s; the component rolls once the server has it", name)
			} else {
				r.Engine.Warn(p, "RotationIgnored", "RotatePassword", "%s has no database; nothing to rotate", name)
			}
		}
		if err := r.clearAnnotation(ctx, p, appsv1alpha1.RotateDatabasePasswordAnnotation); err != nil {
			return o, err
		}
	}

	// Then the server, for the enabled components not checked lately.
	now := time.Now()
	var need []*appsv1alpha1.PlatformComponent
	var keys []string
	recorded := map[string]bool{}
	for _, cs := range p.Status.Components {
		recorded[cs.Name] = cs.DatabaseReady != nil && *cs.DatabaseReady
	}
	for _, c := range comps {
		if c.Disable {
			continue
		}
		st := dbState{ready: true, message: "Provisioned"}
		key := memoKey(p, c, server, passwords[c.Name])
		// A component runs with the Secret version the server was last
		// provisioned with: another one in the Secret now is a password the
		// server may not have yet (written by an earlier reconcile, whose
		// provisioning runs in the background).
		unconfirmed := secrets[c.Name] != nil && live[c.Name].DatabaseVersion != "" && live[c.Name].DatabaseVersion != secrets[c.Name].ResourceVersion
		if !r.memo.fresh(key, now) {
			need, keys = append(need, c), append(keys, key)
			if changed[c.Name] || !recorded[c.Name] || unconfirmed {
				// New, or a new password: not ready until the server has it.
				// A recheck of what was ready keeps it ready meanwhile.
				st = dbState{message: "Provisioning on the server"}
			}
		}
		o.components[c.Name] = versioned(st, secrets[c.Name], changed[c.Name])
		if !st.ready {
			o.components[c.Name] = st
		}
	}
	var failure error
	if len(need) > 0 {
		// Off the worker, fair per namespace (engine.Background): a server
		// that accepts and stays silent holds a slot of this namespace's,
		// not a worker every namespace's Platforms need.
		log := logf.FromContext(ctx)
		owner := p.DeepCopy()
		res, ok := r.Background.Do(p, "provision/"+digest(strings.Join(keys, ",")), func(bg context.Context) any {
			return r.provision(logf.IntoContext(bg, log), owner, server, need, passwords)
		})
		if !ok {
			if !slices.ContainsFunc(need, func(c *appsv1alpha1.PlatformComponent) bool { return !o.components[c.Name].ready }) {
				// Only a recheck of what is ready: nothing to say meanwhile.
				o.ready, o.reason = true, ReasonProvisioned
				o.message = fmt.Sprintf("%d database(s) on %s", len(o.components), server.Addr())
				return o, nil
			}
			if prev := meta.FindStatusCondition(p.Status.Conditions, appsv1alpha1.DatabaseConditionType); prev != nil &&
				prev.Status == metav1.ConditionFalse && prev.Reason != ReasonProvisioning {
				// A retry after a failure: the failure stands until the retry
				// ends (no flapping to Provisioning and back, no write).
				o.reason, o.message = prev.Reason, strings.TrimPrefix(prev.Message, dbFailsPrefix)
				for _, c := range need {
					if !o.components[c.Name].ready {
						o.components[c.Name] = dbState{message: o.message}
					}
				}
				return o, nil
			}
			o.pending = true
			o.reason = ReasonProvisioning
			o.message = fmt.Sprintf("Provisioning %d database(s) on %s", len(need), server.Addr())
			return o, nil
		}
		results := res.(provisioned)
		for i, c := range need {
			if err := results.errs[c.Name]; err != nil {
				o.components[c.Name] = dbState{message: publicError(err, server).Error()}
				continue
			}
			r.memo.remember(keys[i], now)
			o.components[c.Name] = versioned(dbState{ready: true, message: "Provisioned"}, secrets[c.Name], changed[c.Name])
		}
		failure = results.first
	}
	if failure != nil {
		failure = publicError(failure, server)
		o.reason, o.message = dbReason(failure), failure.Error()
		return o, failure
	}
	o.ready, o.reason = true, ReasonProvisioned
	o.message = fmt.Sprintf("%d database(s) on %s", len(o.components), server.Addr())
	return o, nil
}

// databaseSecrets writes each component's database Secret, with a new
// password for those in rotate, and returns the passwords, which changed,
// and the Secrets as they were. A Secret made by a kubeforge before
// ownership proofs gets a new password once (the migration,
// docs/security.md); one that is not this Platform's is never read.
func (r *Reconciler) databaseSecrets(ctx context.Context, p *appsv1alpha1.Platform, comps []*appsv1alpha1.PlatformComponent,
	o *dbObserved, rotate []string) (map[string]string, map[string]bool, map[string]*corev1.Secret, error) {
	passwords := map[string]string{}
	changed := map[string]bool{}
	live := map[string]*corev1.Secret{}
	o.secrets = nil
	for _, c := range comps {
		s := &corev1.Secret{}
		err := r.Client.Get(ctx, types.NamespacedName{Namespace: p.Namespace, Name: DatabaseSecretName(p, c)}, s)
		switch {
		case apierrors.IsNotFound(err):
			s = nil
		case err != nil:
			return nil, nil, nil, fmt.Errorf("reading the database Secret of %s: %w", c.Name, err)
		}
		live[c.Name] = s
		password := ""
		if s != nil && r.Engine.Owns(p, s) {
			password = string(s.Data["password"])
		}
		if password == "" || slices.Contains(rotate, c.Name) {
			if password, err = database.GeneratePassword(); err != nil {
				return nil, nil, nil, err
			}
		}
		passwords[c.Name] = password
		want := DatabaseSecret(p, c, password)
		changed[c.Name] = s == nil || !sameData(s.Data, want.Data)
		o.secrets = append(o.secrets, want)
	}
	res, err := r.Engine.Apply(ctx, p, o.secrets)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("writing the database Secrets: %w", err)
	}
	var again []string
	for _, c := range comps {
		if slices.Contains(res.Migrated, "Secret/"+DatabaseSecretName(p, c)) && !slices.Contains(rotate, c.Name) {
			again = append(again, c.Name)
		}
	}
	if len(again) > 0 {
		logf.FromContext(ctx).Info("Rotating database passwords made before ownership proofs", "components", again)
		for _, name := range again {
			r.Engine.Event(p, ReasonPasswordRotated, "RotatePassword",
				"New database password for %s: the old one was made before ownership proofs", name)
		}
		return r.databaseSecrets(ctx, p, comps, o, append(slices.Clone(rotate), again...))
	}
	return passwords, changed, live, nil
}

// versioned sets the Secret version the pods may use: the live one, once
// it holds what the server was given.
func versioned(st dbState, s *corev1.Secret, changed bool) dbState {
	if s != nil && !changed {
		st.version = s.ResourceVersion
	}
	return st
}

func sameData(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range b {
		if !bytes.Equal(a[k], v) {
			return false
		}
	}
	return true
}

// adminError is a problem with the admin or CA Secret.
type adminError struct {
	reason string
	err    error
}

func (e *adminError) Error() string { return e.err.Error() }

// connect logs in to the Platform's server with the admin Secret.
func (r *Reconciler) connect(ctx context.Context, p *appsv1alpha1.Platform, server database.Server) (database.Admin, error) {
	d := p.Spec.Database
	admin := &corev1.Secret{}
	if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: p.Namespace, Name: d.AdminSecretRef.Name}, admin); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, &adminError{ReasonAdminSecretNotFound, fmt.Errorf("the admin Secret %s does not exist", d.AdminSecretRef.Name)}
		}
		return nil, fmt.Errorf("reading the admin Secret %s: %w", d.AdminSecretRef.Name, err)
	}
	server.Username, server.Password = string(admin.Data["username"]), string(admin.Data["password"])
	if server.Username == "" || server.Password == "" {
		return nil, &adminError{ReasonAdminSecretInvalid, fmt.Errorf("the admin Secret %s needs the keys username and password", d.AdminSecretRef.Name)}
	}
	if server.TLSMode == database.TLSVerifyFull && d.TLS.CASecretRef != nil {
		// Without one, the operator's own trusted authorities.
		name := d.TLS.CASecretRef.Name
		ca := &corev1.Secret{}
		if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: p.Namespace, Name: name}, ca); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, &adminError{ReasonCASecretNotFound, fmt.Errorf("the CA Secret %s does not exist", name)}
			}
			return nil, fmt.Errorf("reading the CA Secret %s: %w", name, err)
		}
		if server.CACert = ca.Data["ca.crt"]; len(server.CACert) == 0 {
			return nil, &adminError{ReasonCASecretInvalid, fmt.Errorf("the CA Secret %s needs the key ca.crt", name)}
		}
		if !x509.NewCertPool().AppendCertsFromPEM(server.CACert) {
			return nil, &adminError{ReasonCASecretInvalid, fmt.Errorf("the CA Secret %s's ca.crt holds no PEM certificate", name)}
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	conn, err := r.connectServer(ctx, server)
	if err != nil && dbReason(err) != database.ReasonAuthenticationFailed {
		// Until the server has asked for the admin's login, whatever
		// failed — no answer, a refusal, no TLS or a certificate that does
		// not match, bytes that are not the engine's protocol — is one
		// failure to connect, told apart only in the operator's log
		// (publicError): otherwise which addresses answer, and what they
		// speak, could be read from a status by whoever may write
		// spec.database.host.
		err = &database.Error{Reason: database.ReasonServerUnreachable, Err: err}
	}
	return conn, err
}

func (r *Reconciler) connectServer(ctx context.Context, s database.Server) (database.Admin, error) {
	if r.Connect != nil {
		return r.Connect(ctx, s)
	}
	return database.Connect(ctx, s)
}

// ReasonProvisioning is DatabaseReady's reason while the server is being
// provisioned (in the background): not a failure.
const ReasonProvisioning = "Provisioning"

// provisioned is the result of provision: each component's error, and
// the first failure.
type provisioned struct {
	errs  map[string]error
	first error
}

// provision connects once and provisions each component. It runs off the
// reconcile workers (engine.Background); the connection is bounded
// (connect), each component's statements too, and after one component
// times out the rest are not tried (the server is not answering).
func (r *Reconciler) provision(ctx context.Context, p *appsv1alpha1.Platform, server database.Server, comps []*appsv1alpha1.PlatformComponent,
	passwords map[string]string) provisioned {
	log := logf.FromContext(ctx)
	out := provisioned{errs: map[string]error{}}
	admin, err := r.connect(ctx, p, server)
	if err != nil {
		log.Info("Cannot connect to the database server", "server", server.Addr(), "error", err.Error())
		for _, c := range comps {
			out.errs[c.Name] = err
		}
		out.first = err
		return out
	}
	defer func() { _ = admin.Close() }()
	for _, c := range comps {
		if out.first != nil && database.Reason(out.first) == database.ReasonServerUnreachable {
			out.errs[c.Name] = out.first
			continue
		}
		name, user := appsv1alpha1.DatabaseName(p, c), appsv1alpha1.DatabaseUser(p, c)
		log.Info("Provisioning a database", "component", c.Name, "database", name, "user", user)
		pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := admin.Provision(pctx, name, user, passwords[c.Name], r.DatabaseOwner(p))
		cancel()
		if err != nil {
			log.Info("Provisioning a database failed", "component", c.Name, "error", err.Error())
			out.errs[c.Name] = err
			if out.first == nil {
				out.first = fmt.Errorf("provisioning the database of %s: %w", c.Name, err)
			}
		}
	}
	return out
}

// publicError is what status and events say of a server's failure. A
// failure to connect says only that: whether the address refused, timed
// out, did not resolve, or answered without TLS or with something that is
// not the engine would make the operator a port scanner from its own
// network position for whoever may write spec.database.host. The
// operator's log has the error.
func publicError(err error, server database.Server) error {
	if dbReason(err) != database.ReasonServerUnreachable {
		return err
	}
	return &database.Error{Reason: database.ReasonServerUnreachable,
		Err: fmt.Errorf("cannot connect to the database server %s (the operator's log has the error)", server.Addr())}
}

// dropDatabases drops the database and user of every component that asks
// for one; on the way to deleting a Platform with dropOnDelete.
func (r *Reconciler) dropDatabases(ctx context.Context, spec *appsv1alpha1.Platform) error {
	log := logf.FromContext(ctx)
	if !slices.ContainsFunc(spec.Spec.Components, func(c appsv1alpha1.PlatformComponent) bool { return c.HasDatabase() }) {
		return nil // nothing to drop: no need to reach the server
	}
	admin, err := r.connect(ctx, spec, DatabaseServer(spec))
	if err != nil {
		return err
	}
	defer func() { _ = admin.Close() }()
	for i := range spec.Spec.Components {
		c := &spec.Spec.Components[i]
		if !c.HasDatabase() {
			continue
		}
		name, user := appsv1alpha1.DatabaseName(spec, c), appsv1alpha1.DatabaseUser(spec, c)
		log.Info("Dropping a database", "component", c.Name, "database", name, "user", user)
		dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := admin.Drop(dctx, name, user, r.DatabaseOwner(spec))
		cancel()
		if err != nil {
			return fmt.Errorf("dropping the database of %s: %w", c.Name, err)
		}
	}
	return nil
}

// DatabaseOwner is whom a Platform's databases and users are recorded as
// created for, on the server (database.Admin): the Platform by kind,
// namespace and name, and by the UIDs the API server gave it and the
// cluster (kube-system's), so that no other Platform takes them — not one
// of the same name in another namespace, not one created later under the
// same name (a deleted Platform's data stays its own; docs/platform.md
// says how to hand it on), not one of another cluster whose operator
// shares the server. Records an earlier kubeforge wrote named the
// Platform only; they are taken as this Platform's, and rewritten, only
// for a Platform made before the ownership key existed (as the engine
// migrates the objects of such owners), when that form was all there was.
func (r *Reconciler) DatabaseOwner(p *appsv1alpha1.Platform) database.Owner {
	name := "Platform " + p.Namespace + "/" + p.Name
	keys := r.Engine.Proof
	o := database.Owner{Name: fmt.Sprintf("%s (uid %s)", name, p.UID), Record: fmt.Sprintf("%s uid=%s cluster=%s", name, p.UID, keys.Cluster)}
	if p.CreationTimestamp.Time.Before(keys.Since) {
		o.Formerly = name
	}
	return o
}

// dbReason is the condition reason of a failure of the database step.
func dbReason(err error) string {
	var ae *adminError
	if errors.As(err, &ae) {
		return ae.reason
	}
	return database.Reason(err)
}
