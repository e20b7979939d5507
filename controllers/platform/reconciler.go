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

// Package platform reconciles Platforms: a list of components, each run
// as a Deployment, StatefulSet, DaemonSet or CronJob with its Service,
// config and storage, created and upgraded in dependency order.
package platform

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	"github.com/kubeforge/kubeforge/controllers/platform/database"
	"github.com/kubeforge/kubeforge/internal/admit"
	"github.com/kubeforge/kubeforge/internal/conditions"
	"github.com/kubeforge/kubeforge/internal/engine"
	"github.com/kubeforge/kubeforge/internal/metrics"
	"github.com/kubeforge/kubeforge/internal/validation"
	"github.com/kubeforge/kubeforge/internal/workload"
)

// Reconciler reconciles Platforms.
type Reconciler struct {
	Client client.Client
	// APIReader reads what the cache does not hold, or holds behind: the
	// user's admin and CA Secrets of the database server, and the Platform
	// as stored when a rotate request's removal conflicts.
	APIReader client.Reader
	Engine    *engine.Engine
	// CleanupTimeout is how long a deleted Platform whose databases cannot
	// be dropped because a Secret the drop needs is gone waits before it is
	// let go; engine.DefaultCleanupTimeout when 0.
	CleanupTimeout time.Duration
	// CertManager says that cert-manager's CRDs are installed, so
	// Certificates can be made for components' Ingresses.
	CertManager bool
	// Policy is what the administrator allows Ingresses (admit.PlatformWith).
	Policy validation.Policy
	// Connect logs in to a database server; database.Connect when nil.
	Connect func(context.Context, database.Server) (database.Admin, error)
	// Background runs the calls to database servers off the reconcile
	// workers (a tenant's server may be slow or silent), fair per
	// namespace; made by SetupWithManager when nil.
	Background *engine.Background

	memo provisionMemo
	// warned is the PodSecurity Warning last recorded per Platform (its
	// UID and the message).
	warned sync.Map
	// carried is the rotate request this manager last carried out and
	// cleared, per Platform and annotation (carriedKey → carriedRequest).
	carried sync.Map
}

// +kubebuilder:rbac:groups=apps.kubeforge.io,resources=platforms,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps.kubeforge.io,resources=platforms/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=apps.kubeforge.io,resources=platforms/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=deployments;statefulsets;daemonsets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=batch,resources=cronjobs;jobs,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=networking.k8s.io,resources=ingresses,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=cert-manager.io,resources=certificates,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=services;configmaps;persistentvolumeclaims;secrets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=apps.kubeforge.io,resources=platforms,verbs=patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Types are the objects a Platform's controller owns: each component's
// workload, Service, ConfigMap, volume claim, Ingress and hook Jobs,
// database and generated Secrets, and with cert-manager the Ingresses'
// Certificates.
func Types(certManager bool) engine.Types {
	t := engine.Types{Owned: []client.Object{
		&appsv1.Deployment{}, &appsv1.StatefulSet{}, &appsv1.DaemonSet{}, &batchv1.CronJob{}, &batchv1.Job{},
		&corev1.Service{}, &corev1.ConfigMap{}, &corev1.PersistentVolumeClaim{}, &corev1.Secret{}, &networkingv1.Ingress{},
	}}
	if certManager {
		t.Owned = append(t.Owned, &cmv1.Certificate{})
	}
	return t
}

func (r *Reconciler) types() engine.Types { return Types(r.CertManager) }

// Reconcile brings one Platform's components to its spec, in dependency
// order, and reports each component.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	p := &appsv1alpha1.Platform{}
	if err := r.Client.Get(ctx, req.NamespacedName, p); err != nil {
		if apierrors.IsNotFound(err) {
			// Gone: what was kept for it goes too.
			r.warned.Delete(req.NamespacedName)
			r.forgetCarried(req.NamespacedName)
			r.Background.Forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	// The webhook's rules run here too, so a Platform admitted without
	// the webhook gets a clear condition. Builders and status read the
	// defaulted copy; only the status and the finalizer are written.
	p, invalid := admit.Prepare(admit.PlatformWith(r.Policy), r.Engine.Proof, p)
	if !p.DeletionTimestamp.IsZero() {
		// Everything is owned (but retained volumes): the garbage
		// collector removes it. Databases are dropped only when asked.
		return r.finalize(ctx, p, invalid)
	}
	// A spec that breaks a rule or that no admission approved neither
	// asks for a drop nor takes one back.
	if invalid == nil {
		drop := p.Spec.Database != nil && p.Spec.Database.DropOnDelete
		if err := engine.SyncFinalizer(ctx, r.Client, p, appsv1alpha1.DatabaseFinalizer, drop); err != nil {
			return ctrl.Result{}, err
		}
	}
	before := p.DeepCopy()
	o, reconcileErr := r.reconcile(ctx, p, invalid)
	computeStatus(p, o)
	wrote, err := engine.PatchStatus(ctx, r.Client, before, p)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("reporting Platform status: %w", err)
	}
	if wrote {
		metrics.ObservePlatformRollout(before.Status.Conditions, p.Status.Conditions, time.Now())
	}
	if reconcileErr == nil && o.db.configured {
		// Check the databases on the server again now and then.
		return ctrl.Result{RequeueAfter: DatabaseRecheck}, nil
	}
	return ctrl.Result{}, reconcileErr
}

// finalize drops the components' databases and users of a Platform with
// dropOnDelete, then lets it go. While the server cannot do it, the
// finalizer stays and DatabaseReady says why; setting dropOnDelete to
// false lets the Platform go without dropping anything. A Platform whose
// spec is invalid or not admitted (invalid, from admit.Prepare) is let go
// without connecting anywhere: its server and admin Secret are not ones
// anyone's admission approved.
func (r *Reconciler) finalize(ctx context.Context, p *appsv1alpha1.Platform, invalid error) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(p, appsv1alpha1.DatabaseFinalizer) {
		return ctrl.Result{}, nil
	}
	if invalid != nil {
		return ctrl.Result{}, r.Engine.ReleaseUnapproved(ctx, p, appsv1alpha1.DatabaseFinalizer,
			"The components' databases and users were not dropped", invalid)
	}
	if d := p.Spec.Database; d != nil && d.DropOnDelete {
		// Off the worker: the server may take its time.
		log := logf.FromContext(ctx)
		drop := p.DeepCopy()
		res, ok := r.Background.Do(p, "drop/"+string(p.UID), func(bg context.Context) any {
			return r.dropDatabases(logf.IntoContext(bg, log), drop)
		})
		if !ok {
			return ctrl.Result{}, nil // its end brings the Platform back
		}
		if err, _ := res.(error); err != nil {
			err = publicError(err, DatabaseServer(p))
			if reason := dbReason(err); reason == ReasonAdminSecretNotFound || reason == ReasonCASecretNotFound {
				// The drop cannot run at all (the namespace is being deleted,
				// or someone removed the Secret): let go after a while.
				left, rerr := r.Engine.ReleaseAfter(ctx, p, appsv1alpha1.DatabaseFinalizer, r.CleanupTimeout,
					"The components' databases and users were not dropped on "+DatabaseServer(p).Addr(), err)
				return ctrl.Result{RequeueAfter: left}, rerr
			}
			before := p.DeepCopy()
			conditions.For(p, &p.Status.Conditions).Set(appsv1alpha1.DatabaseConditionType, false, dbReason(err),
				"Cannot drop the databases, so the Platform stays until the server answers or spec.database.dropOnDelete is false: "+err.Error())
			r.Engine.Warn(p, ReasonDropFailed, "DropDatabases", "%s", err.Error())
			if _, perr := engine.PatchStatus(ctx, r.Client, before, p); perr != nil {
				return ctrl.Result{}, errors.Join(err, perr)
			}
			return ctrl.Result{}, fmt.Errorf("dropping the databases of the Platform: %w", err)
		}
		r.Engine.Event(p, ReasonDatabasesDropped, "DropDatabases", "Dropped the components' databases and users on %s", DatabaseServer(p).Addr())
	}
	return ctrl.Result{}, engine.SyncFinalizer(ctx, r.Client, p, appsv1alpha1.DatabaseFinalizer, false)
}

func (r *Reconciler) reconcile(ctx context.Context, p *appsv1alpha1.Platform, invalid error) (observed, error) {
	log := logf.FromContext(ctx)
	var o observed
	if invalid != nil {
		o.invalid = invalid
		r.Engine.Invalid(ctx, p, invalid)
		return o, nil
	}

	o.live = map[string]Live{}
	recorded := map[string]appsv1alpha1.ComponentStatus{}
	for _, cs := range p.Status.Components {
		recorded[cs.Name] = cs
	}
	for i := range p.Spec.Components {
		c := &p.Spec.Components[i]
		obj, err := r.workload(ctx, p, c)
		if err != nil {
			return o, err
		}
		l := LiveOf(obj)
		if l.Exists {
			rec := recorded[c.Name]
			l.Bootstrapped = rec.Bootstrapped
			if h := c.Hooks; h != nil && h.Bootstrap != nil {
				if l.Bootstrap, err = r.hook(ctx, p, HookJobName(p, c, HookBootstrap, "")); err != nil {
					return o, err
				}
			}
			if h := c.Hooks; h != nil && h.PreUpgrade != nil {
				if l.PreUpgrade, err = r.hook(ctx, p, HookJobName(p, c, HookPreUpgrade, EffectiveImage(p, c))); err != nil {
					return o, err
				}
			}
		}
		o.live[c.Name] = l
		if _, legacy := PodSecurityOf(c, l); legacy && !c.Disable {
			o.unsetPodSecurity = append(o.unsetPodSecurity, c.Name)
		}
	}
	if len(o.unsetPodSecurity) > 0 && !podSecurityReported(p, o.unsetPodSecurity) {
		// The status says it once written; until then (a reconcile that
		// reads the Platform before its status write reaches the cache),
		// what this manager already warned of.
		msg := podSecurityUnsetMessage(o.unsetPodSecurity)
		now := string(p.UID) + " " + msg
		if was, loaded := r.warned.Swap(client.ObjectKeyFromObject(p), now); !loaded || was != now {
			r.Engine.Warn(p, ReasonPodSecurityUnset, "PodSecurity", "%s", msg)
		}
	}

	// The generated Secrets before the components that reference them.
	secretVersions, err := r.generatedSecrets(ctx, p, &o)
	if err != nil {
		o.apply = err
		return o, err
	}

	// A server that fails does not stop the other components: its error
	// is returned (for a retry with backoff) after everything else is applied.
	var dbErr error
	o.db, dbErr = r.databases(ctx, p, o.live)
	if engine.Waiting(dbErr) {
		// A wait is not a server that fails: the Platform changed since it
		// was read (a rotate request cleared on it as stored, or the cache
		// behind such a clear), or a database Secret is being made anew.
		// The pass ends before its plan, which would be made from what was
		// read; the next pass, a second later, makes it.
		o.apply = dbErr
		return o, dbErr
	}
	if dbErr != nil {
		o.db.ready = false
		o.db.reason = cmp.Or(o.db.reason, database.ReasonProvisioningFailed)
		o.db.message = cmp.Or(o.db.message, dbErr.Error())
		log.Info("Database server not ready; the components without a database go on", "reason", o.db.reason, "error", dbErr.Error())
		r.Engine.Warn(p, o.db.reason, "ProvisionDatabases", "%s", dbErr.Error())
	}
	blocked := map[string]string{}
	for i := range p.Spec.Components {
		c := &p.Spec.Components[i]
		if st, ok := o.db.components[c.Name]; c.HasDatabase() && (!ok || !st.ready || st.version == "") {
			blocked[c.Name] = "Waiting for its database: " + cmp.Or(st.message, "writing its credentials")
		}
	}

	steps, err := Plan(p, o.live, blocked)
	if err != nil {
		o.invalid = err
		return o, nil
	}
	o.steps = steps

	// What components use by name comes before every component's
	// workloads, so that one may name another's (a claim): the Secrets,
	// every enabled component's Service, then the deployed components'
	// claims, then their workloads, Ingresses and hook Jobs. The engine
	// refuses an apply out of order. The ConfigMaps come last: nothing
	// mounts them (a workload carries its files in its pod template), so a
	// conflict on one stops nothing a component needs.
	desired := append([]client.Object{}, o.db.secrets...)
	desired = append(desired, o.secrets...)
	desired = append(desired, Services(p)...)
	var using, shown []client.Object
	for i, s := range steps {
		if !s.Deploy {
			continue
		}
		c := &p.Spec.Components[i]
		l := o.live[c.Name]
		target := EffectiveImage(p, c)
		switch {
		case s.Upgrade:
			log.Info("Moving component to a new image", "component", c.Name, "image", s.Image)
			r.Engine.Event(p, "ComponentUpgrading", "Upgrade", "Moving %s from %s to %s", c.Name, l.Image, s.Image)
		case s.RolledBack:
			log.Info("Rolling a component back", "component", c.Name, "failed", target, "image", s.Image)
			r.Engine.Warn(p, ReasonRolledBack, "Rollback", "%s failed on %s (%s); rolled it back to %s", c.Name, target, l.Message, s.Image)
		}
		// The pods get the credentials the server holds; until it holds new
		// ones (a rotation) they keep the version they run with.
		dbVersion := l.DatabaseVersion
		if st := o.db.components[c.Name]; c.HasDatabase() && st.ready && st.version != "" {
			dbVersion = st.version
		} else if !c.HasDatabase() {
			dbVersion = ""
		}
		in := Input{Image: s.Image, DBVersion: dbVersion, Version: p.Spec.Version,
			SecretsVersion: SecretsVersion(c, secretVersions), CertManager: r.CertManager,
			PreviousImage: s.PreviousImage, FailedImage: s.FailedImage}
		in.PodSecurity, _ = PodSecurityOf(c, l)
		if s.Image != target && p.Status.Version != "" {
			// Held on (or rolled back to) the image of the version before.
			in.Version = p.Status.Version
		}
		for _, obj := range ComponentObjects(p, c, in) {
			switch obj.(type) {
			case *corev1.Service: // above, every component's
			case *corev1.ConfigMap:
				shown = append(shown, obj)
			case *corev1.PersistentVolumeClaim:
				desired = append(desired, obj)
			default:
				using = append(using, obj)
			}
		}
		if s.Bootstrap {
			b := in
			b.Image = cmp.Or(l.Image, s.Image)
			using = append(using, HookJob(p, c, HookBootstrap, c.Hooks.Bootstrap, b))
		}
		if s.PreUpgrade {
			// With the new image and the config of the new version.
			u := in
			u.Image, u.Version = target, p.Spec.Version
			using = append(using, HookJob(p, c, HookPreUpgrade, c.Hooks.PreUpgrade, u))
		}
	}
	desired = append(desired, using...)
	desired = append(desired, shown...)
	if _, err := r.Engine.Apply(ctx, p, desired, r.types().Owned...); err != nil {
		o.apply = err
		return o, errors.Join(fmt.Errorf("applying Platform objects: %w", err), dbErr)
	}
	return o, dbErr
}

// hook reads one of the Platform's hook Jobs from the cache.
func (r *Reconciler) hook(ctx context.Context, p *appsv1alpha1.Platform, name string) (Hook, error) {
	job := &batchv1.Job{}
	ours, err := r.Engine.GetOwned(ctx, p, types.NamespacedName{Namespace: p.Namespace, Name: name}, job)
	if err != nil {
		return Hook{}, fmt.Errorf("reading the Job %s: %w", name, err)
	}
	if !ours || job.DeletionTimestamp != nil {
		return Hook{}, nil
	}
	done, succeeded, reason, message := workload.JobResult(job)
	return Hook{Exists: true, Done: done, Succeeded: succeeded, Message: strings.TrimSpace(reason + ": " + message)}, nil
}

// workload reads a component's workload from the cache; nil when it does
// not exist or is not this Platform's.
func (r *Reconciler) workload(ctx context.Context, p *appsv1alpha1.Platform, c *appsv1alpha1.PlatformComponent) (client.Object, error) {
	var obj client.Object
	switch c.Workload {
	case appsv1alpha1.WorkloadStatefulSet:
		obj = &appsv1.StatefulSet{}
	case appsv1alpha1.WorkloadDaemonSet:
		obj = &appsv1.DaemonSet{}
	case appsv1alpha1.WorkloadCronJob:
		obj = &batchv1.CronJob{}
	default:
		obj = &appsv1.Deployment{}
	}
	ours, err := r.Engine.GetOwned(ctx, p, types.NamespacedName{Namespace: p.Namespace, Name: ObjectName(p, c)}, obj)
	if err != nil {
		return nil, fmt.Errorf("reading the workload of %s: %w", c.Name, err)
	}
	if !ours {
		return nil, nil // none, or not ours: the engine refuses to take it over and says so
	}
	return obj, nil
}

// SetupWithManager registers the controller: Platforms and their Types.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Background == nil {
		r.Background = &engine.Background{}
	}
	return r.types().Controller(mgr, r.Engine.Proof, "platform", &appsv1alpha1.Platform{}).
		WatchesRawSource(r.Background.Source()).
		WithOptions(controller.Options{
			// A database server that is down is retried with backoff, at
			// least once a minute, so it is found again soon after it is back.
			RateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](100*time.Millisecond, time.Minute),
		}).
		Complete(engine.Waits(r))
}
