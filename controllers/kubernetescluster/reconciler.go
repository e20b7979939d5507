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

// Package kubernetescluster reconciles KubernetesClusters: it installs
// Kubernetes onto hosts by running an installer image as Jobs, one
// operation at a time, derived from the spec and the status.
package kubernetescluster

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/admit"
	"github.com/kubeforge/kubeforge/internal/engine"
	"github.com/kubeforge/kubeforge/internal/metrics"
	"github.com/kubeforge/kubeforge/internal/validation"
	"github.com/kubeforge/kubeforge/internal/workload"
)

// Types are the objects a KubernetesCluster's controller owns and reads:
// each operation's Job, inventory ConfigMap and callback Secret, the
// installer's ServiceAccount, Role and RoleBinding, the kubeconfig Secret,
// and the Jobs' pods (for the installer's last words when one fails).
var Types = engine.Types{
	Owned: []client.Object{&batchv1.Job{}, &corev1.ConfigMap{}, &corev1.Secret{}, &corev1.ServiceAccount{}, &rbacv1.Role{}, &rbacv1.RoleBinding{}},
	Read:  []engine.Read{{Object: &corev1.Pod{}, Keep: workload.PodFields}},
}

// historyTypes are the owned types each operation has its own object of,
// deleted when the operation falls out of the history.
var historyTypes = []client.Object{&batchv1.Job{}, &corev1.ConfigMap{}, &corev1.Secret{}}

// Reconciler reconciles KubernetesClusters.
type Reconciler struct {
	Client client.Client
	// APIReader reads what the cache does not hold: the user's SSH Secret.
	APIReader client.Reader
	Engine    *engine.Engine
	// CallbackURL is the base URL at which installers reach the manager's
	// API (--api-advertise-url); empty, they are not told where to report.
	CallbackURL string
	// CallbackCAFile is the CA of the API's serving certificate
	// (<--api-cert-path>/ca.crt); installers get it beside the URL, so they
	// verify the API instead of trusting any certificate.
	CallbackCAFile string
	// CleanupTimeout is how long a deleted cluster whose reset cannot run
	// (its SSH Secret is gone, its namespace is being deleted) waits before
	// it is let go; engine.DefaultCleanupTimeout when 0.
	CleanupTimeout time.Duration
	// InstallerImages are the installer images the operator's
	// administrator allows (--installer-images);
	// validation.DefaultInstallerImages when nil. A cluster whose image is
	// not on the list runs no operation: InvalidSpec, naming the image.
	InstallerImages validation.ImagePolicy
}

// +kubebuilder:rbac:groups=cluster.kubeforge.io,resources=kubernetesclusters,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=cluster.kubeforge.io,resources=kubernetesclusters/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=cluster.kubeforge.io,resources=kubernetesclusters/finalizers,verbs=update
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=configmaps;serviceaccounts;secrets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles;rolebindings,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile follows the running operation, records how it ended, and
// starts the next one the spec calls for.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	// Operations are decided from the status, so read it fresh from the
	// API server rather than from the cache, which may lag behind our own
	// last write; the status write below is conditional on this read.
	kc := &clusterv1alpha1.KubernetesCluster{}
	if err := r.APIReader.Get(ctx, req.NamespacedName, kc); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	// The builders and the planner work on the defaulted spec; only the
	// status and the finalizer are written.
	images := r.InstallerImages
	if images == nil {
		images = validation.DefaultInstallerImages
	}
	kc, invalid := admit.Prepare(admit.KubernetesCluster.With(validation.InstallerImages(images)), r.Engine.Proof, kc)
	if invalid != nil && kc.DeletionTimestamp != nil {
		// No reset with hosts and an SSH key nobody's admission approved.
		return ctrl.Result{}, r.Engine.ReleaseUnapproved(ctx, kc, clusterv1alpha1.ResetFinalizer,
			"Kubernetes was not reset on the cluster's hosts", invalid)
	}
	if invalid == nil {
		if err := r.syncFinalizer(ctx, kc); err != nil {
			return ctrl.Result{}, err
		}
	}
	before := kc.DeepCopy()
	o, err := r.reconcile(ctx, kc, invalid)
	computeStatus(kc, o)
	wrote, perr := engine.PatchStatus(ctx, r.Client, before, kc, engine.WithOptimisticLock())
	if perr != nil {
		if apierrors.IsConflict(perr) {
			// Someone wrote the cluster since we read it: decide again from
			// what is there now. A Job this reconcile created is found again
			// under its name.
			logf.FromContext(ctx).V(1).Info("Status changed since it was read; reconciling again")
			return ctrl.Result{RequeueAfter: time.Second}, nil
		}
		return ctrl.Result{}, fmt.Errorf("reporting KubernetesCluster status: %w", perr)
	}
	if wrote {
		metrics.ObserveClusterOperations(before.Status.Operations, kc.Status.Operations)
	}
	// Deleting, and the reset cannot run at all: let go after a while, so
	// that deleting the cluster or its namespace never hangs.
	if why := cmp.Or(o.blocked, terminating(err)); kc.DeletionTimestamp != nil && why != nil {
		left, rerr := r.Engine.ReleaseAfter(ctx, kc, clusterv1alpha1.ResetFinalizer, r.CleanupTimeout,
			"Kubernetes was not reset on the cluster's hosts", why)
		return ctrl.Result{RequeueAfter: left}, rerr
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	// Only now that the status is written: delete what fell out of it.
	if err := r.cleanHistory(ctx, kc); err != nil {
		return ctrl.Result{}, err
	}
	// Deleting, with nothing (more) to run: let it go.
	if kc.DeletionTimestamp != nil && kc.Status.CurrentOperation == "" && o.next == nil &&
		controllerutil.ContainsFinalizer(kc, clusterv1alpha1.ResetFinalizer) {
		if last := lastOperation(kc); last != nil && last.Type == clusterv1alpha1.OpReset && last.Result == clusterv1alpha1.ResultFailed {
			return ctrl.Result{}, nil // a failed reset holds the cluster until it is retried or resetOnDelete is false
		}
		logf.FromContext(ctx).Info("Removing the reset finalizer")
		if err := engine.SyncFinalizer(ctx, r.Client, kc, clusterv1alpha1.ResetFinalizer, false); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}

// terminating is err when it says the namespace is being deleted.
func terminating(err error) error {
	if engine.NamespaceTerminating(err) {
		return err
	}
	return nil
}

// syncFinalizer holds the cluster for a reset when it has to run one.
func (r *Reconciler) syncFinalizer(ctx context.Context, kc *clusterv1alpha1.KubernetesCluster) error {
	if kc.DeletionTimestamp != nil {
		return nil
	}
	want := *kc.Spec.ResetOnDelete
	return engine.SyncFinalizer(ctx, r.Client, kc, clusterv1alpha1.ResetFinalizer, want)
}

// reconcile follows the running operation and starts the next one,
// recording both in kc.Status.Operations (the record decisions are made
// from), and returns what it observed for computeStatus.
func (r *Reconciler) reconcile(ctx context.Context, kc *clusterv1alpha1.KubernetesCluster, invalid error) (observed, error) {
	log := logf.FromContext(ctx)
	var o observed
	if invalid != nil {
		o.invalid = invalid
		r.Engine.Invalid(ctx, kc, invalid)
		return o, nil
	}

	if _, err := r.Engine.Apply(ctx, kc, StaticObjects(kc)); err != nil {
		o.applyErr = err
		if engine.IsConflict(err) {
			// A Secret under one of the names the installer's Role grants
			// is not this cluster's: take the grant back if an earlier
			// pass made it, so that the installer's ServiceAccount never
			// holds rights on someone else's Secret.
			if rerr := r.revokeGrant(ctx, kc); rerr != nil {
				err = errors.Join(err, rerr)
			}
		}
		return o, fmt.Errorf("applying the installer's kubeconfig Secret, ServiceAccount and Role: %w", err)
	}

	// 1. Follow the running operation.
	if id := kc.Status.CurrentOperation; id != "" {
		op := findOperation(kc, id)
		if op == nil {
			log.Info("The running operation is not in the history; forgetting it", "operation", id)
			kc.Status.CurrentOperation = ""
		} else {
			running, err := r.follow(ctx, kc, op)
			if engine.IsConflict(err) {
				o.applyErr = err
			}
			if err != nil || running {
				return o, err
			}
		}
	}

	// 2. A failed operation waits for a retry: a new value of the retry
	// annotation. The retry is taken when the next operation starts.
	retry := kc.Annotations[clusterv1alpha1.RetryAnnotation]
	if last := lastOperation(kc); last != nil && last.Result == clusterv1alpha1.ResultFailed && retry == kc.Status.ObservedRetry {
		o.next = NextOperation(kc)
		return o, nil
	}

	// 3. Start the next operation.
	o.next = NextOperation(kc)
	next := o.next
	if next == nil || kc.Spec.Paused && next.Type != clusterv1alpha1.OpReset {
		return o, nil
	}
	if err := r.checkSSHSecret(ctx, kc); err != nil {
		o.blocked = err
		return o, nil
	}
	seq := kc.Status.OperationCount + 1
	op := clusterv1alpha1.Operation{
		ID: clusterv1alpha1.OperationID(next.Type, seq), Type: next.Type, Hosts: next.Hosts, Version: next.Version,
		Result: clusterv1alpha1.ResultRunning, StartTime: ptrNow(),
	}
	op.JobName = clusterv1alpha1.JobName(kc, op.ID)
	objs, err := OperationObjects(kc, op)
	if err != nil {
		return o, err
	}
	token, err := callbackToken()
	if err != nil {
		return o, err
	}
	apiCA, err := callbackCA(r.CallbackCAFile)
	if err != nil {
		return o, err
	}
	// The callback Secret before the Job that mounts it: after an object
	// under its name that is not ours, the engine applies nothing more.
	objs = append([]client.Object{CallbackSecret(kc, op, token, r.CallbackURL, apiCA)}, objs...)
	log.Info("Starting operation", "operation", op.ID, "job", op.JobName)
	// The Job first, the status after: a crash in between finds the Job
	// under the same name on the next reconcile, never starts a second.
	if _, err := r.Engine.Apply(ctx, kc, append(StaticObjects(kc), objs...)); err != nil {
		o.applyErr = err
		return o, fmt.Errorf("starting operation %s: %w", op.ID, err)
	}
	kc.Status.OperationCount = seq
	kc.Status.CurrentOperation = op.ID
	kc.Status.ObservedRetry = retry
	kc.Status.Operations = append(kc.Status.Operations, op)
	if n := len(kc.Status.Operations); n > clusterv1alpha1.MaxOperationHistory {
		kc.Status.Operations = kc.Status.Operations[n-clusterv1alpha1.MaxOperationHistory:]
	}
	r.Engine.Event(kc, "OperationStarted", "Start", "Started operation %s (Job %s)", op.ID, op.JobName)
	return o, nil
}

// follow reads the running operation's Job; when it has ended it records
// the result. It reports whether the operation still runs.
func (r *Reconciler) follow(ctx context.Context, kc *clusterv1alpha1.KubernetesCluster, op *clusterv1alpha1.Operation) (bool, error) {
	job := &batchv1.Job{}
	ours, err := r.Engine.GetOwned(ctx, kc, types.NamespacedName{Namespace: kc.Namespace, Name: op.JobName}, job)
	if err != nil {
		return true, fmt.Errorf("reading Job %s: %w", op.JobName, err)
	}
	if !ours {
		// Deleted by hand while it ran: run it again under the same name.
		// Or someone else's under the operation's name, whose result is not
		// the operation's: Apply reports that conflict. Not without the
		// operation's own callback Secret, which the Job mounts and which
		// cannot be made again (its token is spent on creation): gone, or
		// someone else's under its name, the operation fails instead.
		cb := &corev1.Secret{}
		mine, err := r.Engine.GetOwned(ctx, kc, types.NamespacedName{Namespace: kc.Namespace, Name: clusterv1alpha1.CallbackSecretName(kc, op.ID)}, cb)
		if err != nil {
			return true, fmt.Errorf("reading the callback Secret of operation %s: %w", op.ID, err)
		}
		if !mine {
			now := metav1.Now()
			message := fmt.Sprintf("The Job %s is gone, and so is the operation's callback Secret %s (or one under its name is not this cluster's): "+
				"not run again; retry the operation", op.JobName, cb.Name)
			finish(kc, op, false, ReasonJobLost, message, &now)
			r.Engine.Warn(kc, "OperationFailed", "Run", "Operation %s failed (%s): %s", op.ID, op.Reason, message)
			return false, nil
		}
		objs, err := OperationObjects(kc, *op)
		if err != nil {
			return true, err
		}
		logf.FromContext(ctx).Info("The operation's Job is gone; creating it again", "operation", op.ID, "job", op.JobName)
		if _, err := r.Engine.Apply(ctx, kc, objs); err != nil {
			return true, fmt.Errorf("recreating Job %s: %w", op.JobName, err)
		}
		return true, nil
	}
	done, succeeded, reason, message := workload.JobResult(job)
	if !done {
		return true, nil
	}
	now := metav1.Now()
	if !succeeded {
		pods := &corev1.PodList{}
		if err := r.Client.List(ctx, pods, client.InNamespace(kc.Namespace), client.MatchingLabels{batchv1.JobNameLabel: job.Name}); err == nil {
			// Only the Job's own pod's output is quoted: the Job makes
			// one, so with more claiming it, none is.
			switch mine := workload.JobPods(pods.Items, job); {
			case len(mine) == 1:
				if out := failureOutput(mine); out != "" {
					message = out
				}
			case len(mine) > 1:
				message = fmt.Sprintf("%d Pods claim to be the installer of this operation, which makes one: none of their output is quoted", len(mine))
			}
		}
		message = cmp.Or(message, "The installer failed")
		if reason == batchv1.JobReasonDeadlineExceeded && job.Spec.ActiveDeadlineSeconds != nil {
			// The installer got SIGTERM (run.sh passes it on to ansible) and
			// its output may end anywhere: say first that it timed out.
			message = fmt.Sprintf("Timed out after %s (spec.installer.timeout): the installer was stopped. %s",
				time.Duration(*job.Spec.ActiveDeadlineSeconds)*time.Second, message)
		}
		finish(kc, op, false, cmp.Or(reason, ReasonOperationFailed), message, &now)
		r.Engine.Warn(kc, "OperationFailed", "Run", "Operation %s failed (%s): %s", op.ID, op.Reason, message)
		return false, nil
	}
	finish(kc, op, true, "", "", &now)
	r.Engine.Event(kc, "OperationSucceeded", "Run", "Operation %s succeeded: %s", op.ID, op.Message)
	return false, nil
}

func findOperation(kc *clusterv1alpha1.KubernetesCluster, id string) *clusterv1alpha1.Operation {
	for i := len(kc.Status.Operations) - 1; i >= 0; i-- {
		if kc.Status.Operations[i].ID == id {
			return &kc.Status.Operations[i]
		}
	}
	return nil
}

// checkSSHSecret makes sure the SSH key is there before an operation
// needs it, so a missing or wrong Secret is a condition, not a failed Job.
func (r *Reconciler) checkSSHSecret(ctx context.Context, kc *clusterv1alpha1.KubernetesCluster) error {
	s := &corev1.Secret{}
	name := kc.Spec.SSHSecretRef.Name
	if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: kc.Namespace, Name: name}, s); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("the SSH Secret %s does not exist", name)
		}
		return fmt.Errorf("reading the SSH Secret %s: %w", name, err)
	}
	if s.Type != corev1.SecretTypeSSHAuth || len(s.Data[corev1.SSHAuthPrivateKey]) == 0 {
		return fmt.Errorf("the Secret %s must be of type %s with the key %s", name, corev1.SecretTypeSSHAuth, corev1.SSHAuthPrivateKey)
	}
	return nil
}

// revokeGrant deletes the installer's RoleBinding and Role, where this
// cluster made them.
func (r *Reconciler) revokeGrant(ctx context.Context, kc *clusterv1alpha1.KubernetesCluster) error {
	grant := map[string]bool{"RoleBinding/" + InstallerName(kc): true, "Role/" + InstallerName(kc): true}
	_, err := r.Engine.DeleteOwned(ctx, kc, []client.Object{&rbacv1.RoleBinding{}, &rbacv1.Role{}},
		client.MatchingLabels{clusterv1alpha1.ClusterLabel: kc.Name},
		func(_ client.Object, key string) bool { return grant[key] })
	if err != nil {
		return fmt.Errorf("taking back the installer's Role: %w", err)
	}
	return nil
}

// cleanHistory deletes the Jobs, ConfigMaps and Secrets of operations
// that fell out of status.operations. What is kept is told by name, which
// nobody can change, never by the operation label, which anyone who may
// update the object can: a label copied onto the kubeconfig Secret or the
// running Job must not get them deleted.
func (r *Reconciler) cleanHistory(ctx context.Context, kc *clusterv1alpha1.KubernetesCluster) error {
	keep := map[string]bool{
		"Secret/" + clusterv1alpha1.KubeconfigSecretName(kc): true,
		"Secret/" + KnownHostsSecretName(kc):                 true,
	}
	for _, op := range kc.Status.Operations {
		keep["Job/"+op.JobName] = true
		keep["ConfigMap/"+op.JobName] = true
		keep["Secret/"+clusterv1alpha1.CallbackSecretName(kc, op.ID)] = true
	}
	_, err := r.Engine.DeleteOwned(ctx, kc, historyTypes, client.MatchingLabels{clusterv1alpha1.ClusterLabel: kc.Name},
		func(obj client.Object, key string) bool {
			_, ok := obj.GetLabels()[clusterv1alpha1.OperationLabel]
			return ok && !keep[key]
		})
	if err != nil {
		return fmt.Errorf("deleting the objects of old operations: %w", err)
	}
	return nil
}

// callbackToken is an operation's callback token: 256 bits from crypto/rand.
func callbackToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generating a callback token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

func ptrNow() *metav1.Time {
	t := metav1.Now()
	return &t
}

// SetupWithManager registers the controller: KubernetesClusters (every
// change: spec, annotations, deletion, and status, so a write decided
// against a lagging view is looked at again) and their Types.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return Types.Controller(mgr, r.Engine.Proof, "kubernetescluster", &clusterv1alpha1.KubernetesCluster{}).Complete(engine.Waits(r))
}

// callbackCA is the CA an installer verifies the API with, read for each
// operation (it may have been renewed); none when the API has no CA file.
// A CA file that is not there yet (the manager's own certificate, made a
// moment after it started) is an error, so that the operation waits for
// it: an installer given none could not verify the API it reports to.
func callbackCA(path string) ([]byte, error) {
	if path == "" {
		return nil, nil
	}
	ca, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the API's CA for the installer (the operation starts once it is there): %w", err)
	}
	return ca, nil
}
