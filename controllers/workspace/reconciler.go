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

// Package workspace reconciles Workspaces: a developer's IDE Pod with a
// persistent home volume, a Service, and optionally an Ingress with a
// cert-manager Certificate.
package workspace

import (
	"context"
	"fmt"
	"slices"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"gomodules.xyz/jsonpatch/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/admit"
	"github.com/kubeforge/kubeforge/internal/engine"
	"github.com/kubeforge/kubeforge/internal/metrics"
)

// Types are the objects a Workspace's controller owns: its Pod, Service,
// home volume and Ingress, and with cert-manager its Certificate. A
// retained home volume carries no owner reference, so it is never pruned.
func Types(certManager bool) engine.Types {
	t := engine.Types{Owned: []client.Object{&corev1.Pod{}, &corev1.Service{}, &corev1.PersistentVolumeClaim{}, &corev1.Secret{},
		&networkingv1.Ingress{}, &networkingv1.NetworkPolicy{}}}
	if certManager {
		t.Owned = append(t.Owned, &cmv1.Certificate{})
	}
	return t
}

// Reconciler reconciles Workspaces.
type Reconciler struct {
	Client client.Client
	Engine *engine.Engine
	// Options are the manager's settings for every Workspace's objects.
	Options
}

// +kubebuilder:rbac:groups=ide.kubeforge.io,resources=workspaces,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=ide.kubeforge.io,resources=workspaces/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=ide.kubeforge.io,resources=workspaces/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=pods;services;persistentvolumeclaims;secrets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=networking.k8s.io,resources=ingresses;networkpolicies,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=cert-manager.io,resources=certificates,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile brings one Workspace's objects to its spec and reports its phase.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ws := &idev1alpha1.Workspace{}
	if err := r.Client.Get(ctx, req.NamespacedName, ws); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !ws.DeletionTimestamp.IsZero() {
		// Owned objects go with the garbage collector; a retained home
		// volume has no owner reference and stays.
		return ctrl.Result{}, nil
	}
	// The webhook's rules run here too, so a Workspace admitted without the
	// webhook gets a clear condition. Builders and status read the
	// defaulted copy; only status is written.
	ws, invalid := admit.Prepare(admit.WorkspaceWith(r.Policy), r.Engine.Proof, ws)
	before := ws.DeepCopy()

	o, res, reconcileErr := r.reconcile(ctx, ws, invalid)
	computeStatus(ws, o)
	wrote, err := engine.PatchStatus(ctx, r.Client, before, ws)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("reporting Workspace status: %w", err)
	}
	if wrote {
		metrics.ObserveWorkspaceStartup(&before.Status, &ws.Status)
	}
	return res, reconcileErr
}

func (r *Reconciler) reconcile(ctx context.Context, ws *idev1alpha1.Workspace, invalid error) (observed, ctrl.Result, error) {
	log := logf.FromContext(ctx)
	var o observed
	var res ctrl.Result
	if invalid != nil {
		o.invalid = invalid
		r.Engine.Invalid(ctx, ws, invalid)
		return o, res, nil
	}

	// maxRunDuration counts from when the workspace was started.
	if Started(ws) {
		o.startedAt = ws.Status.StartedAt
		if o.startedAt == nil {
			now := metav1.NewTime(time.Now().Truncate(time.Second))
			o.startedAt = &now
		}
		if d := ws.Spec.MaxRunDuration; d != nil {
			left := time.Until(o.startedAt.Add(d.Duration))
			if left > 0 {
				res.RequeueAfter = left
			} else {
				log.Info("Stopping workspace: maxRunDuration exceeded", "maxRunDuration", d.Duration.String())
				// Onto the Workspace read, by its UID: never one made
				// anew under the name since.
				stop := jsonpatch.NewOperation("add", "/spec/started", false)
				done, err := engine.PatchAsRead(ctx, r.Client, ws, stop)
				if err != nil {
					return o, res, fmt.Errorf("stopping the workspace after maxRunDuration: %w", err)
				}
				if !done {
					return o, ctrl.Result{}, nil
				}
				r.Engine.Event(ws, ReasonMaxRunDuration, "Stop",
					"Stopped after running for maxRunDuration %s", d.Duration.String())
				stopped := false
				ws.Spec.Started = &stopped
				o.startedAt, res = nil, ctrl.Result{}
			}
		}
	}

	// What the cache has of the Pod is enough to see whether it must be
	// replaced (one it has not seen yet was made for this spec a moment
	// ago): no round trip before a new Workspace's objects are made.
	pod := &corev1.Pod{}
	ours, err := r.Engine.OwnedInCache(ctx, ws, types.NamespacedName{Namespace: ws.Namespace, Name: ws.Name}, pod)
	if err != nil {
		return o, res, fmt.Errorf("reading the IDE's Pod: %w", err)
	}
	if ours && pod.DeletionTimestamp == nil && Started(ws) {
		// A Pod cannot change in place, and a finished one does not come
		// back: replace it. The delete event brings us back to create it.
		why := ""
		switch {
		case pod.Annotations[PodHashAnnotation] != Pod(ws).Annotations[PodHashAnnotation]:
			why = "the spec changed"
		case pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded:
			why = fmt.Sprintf("it ended (%s)", pod.Status.Phase)
		}
		if why != "" {
			log.Info("Deleting the IDE's Pod to replace it", "reason", why)
			// The Pod proven ours, by its UID: never one made under the
			// name since the cache saw it.
			switch err := r.Client.Delete(ctx, pod, client.Preconditions{UID: &pod.UID}); {
			case err == nil:
				r.Engine.Event(ws, "Restarting", "Delete", "Replacing Pod %s: %s", pod.Name, why)
			case !apierrors.IsNotFound(err) && !apierrors.IsConflict(err):
				return o, res, fmt.Errorf("deleting Pod %s to replace it: %w", pod.Name, err)
			}
		}
	}

	o.missingTLS = ws.Spec.Ingress != nil && ws.Spec.Ingress.TLS != nil && !r.CertManager
	auth, err := r.authSecret(ctx, ws)
	if err != nil {
		return o, res, err
	}
	applied, err := r.Engine.ApplyStages(ctx, ws, DesiredStages(ws, r.Options, auth), Types(r.CertManager).Owned...)
	// Whatever else failed: the Secret sealed by this apply is ours from
	// now on, so this is the only pass that knows to rotate it.
	if rerr := r.rotateMigrated(ctx, ws, applied); rerr != nil {
		return o, res, rerr
	}
	switch {
	case engine.Waiting(err):
		// Something the Pod uses is being made anew: not a failure.
		if res.RequeueAfter == 0 || res.RequeueAfter > engine.WaitRequeue {
			res.RequeueAfter = engine.WaitRequeue
		}
	case err != nil:
		o.applyErr = err
		return o, res, fmt.Errorf("applying Workspace objects: %w", err)
	}

	if o.pod, err = r.livePod(ctx, ws); err != nil {
		return o, res, err
	}
	return o, res, nil
}

// authSecret is the desired auth Secret: a new password only when the
// Secret does not exist yet (whoever's it is: the engine refuses to take
// over one it does not own). Its existence is read from the cache's
// metadata: a miss for one made a moment ago costs only a password never
// used (the Secret is create-only: the engine does not change it), and a
// hit for one deleted since never makes it empty (KeepOnly: the engine
// does not create it from this; the next pass gives the password).
func (r *Reconciler) authSecret(ctx context.Context, ws *idev1alpha1.Workspace) (*corev1.Secret, error) {
	if ws.Spec.Auth.Mode != idev1alpha1.AuthPassword {
		return nil, nil
	}
	meta := &metav1.PartialObjectMetadata{}
	meta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	err := r.Client.Get(ctx, types.NamespacedName{Namespace: ws.Namespace, Name: idev1alpha1.WorkspaceAuthSecretName(ws)}, meta)
	if client.IgnoreNotFound(err) != nil {
		return nil, fmt.Errorf("reading Secret %s: %w", idev1alpha1.WorkspaceAuthSecretName(ws), err)
	}
	return AuthSecret(ws, err == nil, NewPassword)
}

// rotateMigrated gives a Workspace a new password when its auth Secret was
// made by a kubeforge before ownership proofs (the one-time migration,
// docs/security.md): its content could have been written by anyone who may
// update Secrets. The Secret and the Pod that read it are deleted; the
// next pass makes both anew.
func (r *Reconciler) rotateMigrated(ctx context.Context, ws *idev1alpha1.Workspace, applied engine.Result) error {
	name := idev1alpha1.WorkspaceAuthSecretName(ws)
	if !slices.Contains(applied.Migrated, "Secret/"+name) {
		return nil
	}
	logf.FromContext(ctx).Info("Rotating the password of a Workspace made before ownership proofs", "secret", name)
	// Each by its UID as this apply saw it (a Pod of a stage not applied in
	// this pass: only one proven ours): never an object made under the
	// name since, nor one someone else made.
	for _, o := range []struct {
		kind string
		obj  client.Object
	}{
		{"Secret", &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ws.Namespace, Name: name}}},
		{"Pod", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ws.Namespace, Name: ws.Name}}},
	} {
		kind, obj := o.kind, o.obj
		var uid types.UID
		if live := applied.Live[kind+"/"+obj.GetName()]; live != nil {
			uid = live.GetUID()
		} else if kind == "Pod" {
			pod := &corev1.Pod{}
			ours, err := r.Engine.GetOwned(ctx, ws, client.ObjectKeyFromObject(obj), pod)
			if err != nil {
				return fmt.Errorf("reading Pod %s to rotate the password: %w", obj.GetName(), err)
			}
			if ours {
				uid = pod.UID
			}
		}
		if uid == "" {
			continue
		}
		err := r.Client.Delete(ctx, obj, client.Preconditions{UID: ptr.To(uid)})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("deleting %s to rotate the password: %w", obj.GetName(), err)
		}
	}
	r.Engine.Event(ws, ReasonPasswordRotated, "Rotate",
		"New password in Secret %s: the old one was made before ownership proofs", name)
	return nil
}

// ReasonPasswordRotated: the Workspace got a new generated password.
const ReasonPasswordRotated = "PasswordRotated"

func (r *Reconciler) livePod(ctx context.Context, ws *idev1alpha1.Workspace) (*corev1.Pod, error) {
	pod := &corev1.Pod{}
	ours, err := r.Engine.GetOwned(ctx, ws, types.NamespacedName{Namespace: ws.Namespace, Name: ws.Name}, pod)
	if err != nil {
		return nil, fmt.Errorf("reading the IDE's Pod: %w", err)
	}
	if !ours {
		return nil, nil // none, or not ours: the engine refuses to take it over and says so
	}
	return pod, nil
}

// SetupWithManager registers the controller: Workspaces and their Types.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return Types(r.CertManager).Controller(mgr, r.Engine.Proof, "workspace", &idev1alpha1.Workspace{}).Complete(engine.Waits(r))
}
