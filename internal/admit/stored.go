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
	"fmt"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kubeforge/kubeforge/internal/proof"
)

// StampRecord is the ConfigMap, in the namespace of the ownership key,
// that says the objects stored before admission stamps were stamped
// (data "version": the StampVersion they were stamped for; "at": when).
// The replica that creates it does the stamping, once.
const StampRecord = "kubeforge-admission-stamps"

// StampedBefore is who a stamp of StampStored names: nobody's access was
// checked then; the object was stored (and checked by the kubeforge of
// the day) before stamps were required.
const StampedBefore = "kubeforge: stored before admission stamps"

// The stamping patches the stamp annotation onto stored objects of every
// kind, and keeps its record in a ConfigMap.
// +kubebuilder:rbac:groups=apps.kubeforge.io,resources=podsets;platforms,verbs=patch
// +kubebuilder:rbac:groups=networking.kubeforge.io,resources=balancers,verbs=patch
// +kubebuilder:rbac:groups=ide.kubeforge.io,resources=workspaces,verbs=patch
// +kubebuilder:rbac:groups=cluster.kubeforge.io,resources=kubernetesclusters,verbs=patch
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;create;patch

// StampStored keeps the stamps of stored objects, on the leader, at its
// start (after the caches are filled):
//
//   - once, when the StampRecord does not exist yet (the first start of a
//     kubeforge that requires stamps), it creates the record ("started",
//     with the time) and then stamps every object of a kubeforge kind that
//     needs an approval and carries no stamp that verifies, so that an
//     upgrade does not stop them — every one stored after the ownership
//     key's Secret was made (by the first kubeforge that sealed, whose
//     webhooks checked what was stored since; not one stored before, by
//     nobody's checks, such as one made on a fresh install while its CRDs
//     existed and its webhooks did not yet); after a pass without failures the record
//     says "done". The first pass makes the record with what it is to
//     stamp (UIDs and resourceVersions, "pending") in one write; a pass
//     that did not finish is taken up at the next start for those only,
//     unchanged since — one someone wrote meanwhile (its stamp removed,
//     say) is not vouched for; nothing created later is ever stamped here. Kinds and namespaces the
//     manager does not serve at that time are not stamped (readmit them).
//   - every time, it makes again with the current key each stamp that
//     verifies only with a previous key of the keyring, so that the
//     previous key can be dropped after a key rotation.
type StampStored struct {
	// Client writes the stamps (the manager's, scoped to the namespaces
	// served) and lists the kinds from the cache.
	Client client.Client
	// Reader reads the record past the cache.
	Reader client.Reader
	Scheme *runtime.Scheme
	Keys   *proof.Keyring
	// Namespace is where the record is kept: the ownership key's.
	Namespace string
	// KeySecret is the ownership key's Secret in Namespace
	// (proof.DefaultSecretName when empty). Only objects stored since the
	// API server made it are vouched for (Start).
	KeySecret string
	// Kinds are the kinds the manager runs (Stampers, when nil).
	Kinds []Stamper
}

// NeedLeaderElection is true: one replica stamps.
func (s StampStored) NeedLeaderElection() bool { return true }

// Start stamps what the record and the keyring call for. Failures are
// logged; the manager goes on.
func (s StampStored) Start(ctx context.Context) error {
	log := logf.FromContext(ctx).WithName("admission-stamps")
	now := time.Now()
	// Only objects created before the first pass began: one stored since,
	// while a pass did not finish, is not stamped here.
	cutoff, once, pending := s.claim(ctx, log, now)
	// And only objects stored since a kubeforge that seals what it makes
	// — and so served its webhooks — first ran here: since the API server
	// made the ownership key, which only the operator writes. One stored
	// before (a fresh install's, made while its CRDs existed and its
	// webhooks did not yet) was checked by nobody.
	var since time.Time
	if once {
		if since, once = s.keySince(ctx, log); !once {
			log.Info("Not stamping stored objects: the ownership key could not be read; trying at the next start")
		}
	}
	kinds := s.Kinds
	if kinds == nil {
		kinds = Stampers()
	}
	type write struct {
		st        Stamper
		obj, base client.Object
		stamp     bool
	}
	var writes []write
	listed := true
	for _, st := range kinds {
		gvk := st.GroupVersionKind()
		o, err := s.Scheme.New(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err != nil {
			return err
		}
		list := o.(client.ObjectList)
		if err := s.Client.List(ctx, list); err != nil {
			log.Error(err, "Listing stored objects", "kind", gvk.Kind)
			listed = false
			continue
		}
		_ = meta.EachListItem(list, func(item runtime.Object) error {
			obj := item.(client.Object)
			base := obj.DeepCopyObject().(client.Object)
			switch {
			// An object from before stamps carries none: one with a stamp
			// that does not verify (or what it was made over) was written
			// since, by a client the pass does not vouch for. A pass taken
			// up again stamps only what the first pass found, unchanged
			// since (its UID and resourceVersion): one whose stamp someone
			// removed meanwhile is not among them.
			case once && !obj.GetCreationTimestamp().After(cutoff) && obj.GetCreationTimestamp().After(since) &&
				obj.GetAnnotations()[StampAnnotation] == "" &&
				obj.GetAnnotations()[StampedOverAnnotation] == "" && st.NeedsStamp(s.Keys, obj) &&
				(pending == nil || pending[pendingEntry(obj)]):
				writes = append(writes, write{st: st, obj: obj, base: base, stamp: true})
			case st.ResignObject(s.Keys, obj):
				writes = append(writes, write{st: st, obj: obj, base: base})
			}
			return nil
		})
	}
	if once && pending == nil {
		// The first pass: what it is to stamp is recorded before any
		// stamp is written, for a pass that does not finish.
		var entries []string
		for _, w := range writes {
			if w.stamp {
				entries = append(entries, pendingEntry(w.obj))
			}
		}
		if !listed || !s.recordPending(ctx, log, cutoff, entries) {
			log.Info("Not stamping stored objects: what to stamp could not be recorded; trying at the next start")
			return nil
		}
	}
	stamped, resigned, failed := 0, 0, 0
	for _, w := range writes {
		gvk := w.st.GroupVersionKind()
		if w.stamp {
			if err := w.st.SignObject(s.Keys, w.obj, StampedBefore, now); err != nil {
				return err
			}
			stamped++
		} else {
			resigned++
		}
		// Conditional on the version read, which the stamp was made
		// over (Sign): the references policies leave such a write out.
		err := s.Client.Patch(ctx, w.obj, client.MergeFromWithOptions(w.base, client.MergeFromWithOptimisticLock{}))
		if err == nil && w.st.NeedsStamp(s.Keys, w.obj) {
			err = fmt.Errorf("the stamp was not kept (an older kubeforge's webhook answered?)")
		}
		if err != nil {
			log.Error(err, "Stamping a stored object; it reports NotAdmitted until readmitted", "kind", gvk.Kind,
				"namespace", w.obj.GetNamespace(), "name", w.obj.GetName())
			failed++
		}
	}
	if once && failed == 0 && listed {
		s.finish(ctx, log)
	}
	if stamped+resigned+failed > 0 {
		log.Info("Stamped stored objects", "storedBeforeStamps", stamped, "withThePreviousKey", resigned, "failed", failed)
	}
	return nil
}

// pendingEntry is how the record names an object the first pass is to
// stamp: its UID and the resourceVersion the pass read.
func pendingEntry(obj client.Object) string {
	return string(obj.GetUID()) + " " + obj.GetResourceVersion()
}

// maxPending is how much of the record the list of objects to stamp may
// take (a ConfigMap holds 1 MiB): ≈ 20,000 objects. Those past it are not
// stamped by a pass taken up again (readmit them).
const maxPending = 900 << 10

// recordPending creates the record of the first pass, with what it is to
// stamp: in one write, so that no record says a pass began without saying
// what it was to stamp. A replica that finds the record made meanwhile
// stamps nothing.
func (s StampStored) recordPending(ctx context.Context, log logr.Logger, at time.Time, entries []string) bool {
	key := client.ObjectKey{Namespace: s.Namespace, Name: StampRecord}
	record := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: StampRecord},
		Data: map[string]string{"version": strconv.Itoa(StampVersion), "at": at.UTC().Format(time.RFC3339), "state": stampStarted,
			"pending": proof.RecordLines(entries, maxPending)}}
	if err := s.Client.Create(ctx, record); err != nil {
		if !apierrors.IsAlreadyExists(err) {
			log.Error(err, "Recording the stamping of stored objects; trying at the next start", "configmap", key.String())
		}
		return false
	}
	return true
}

// claim says whether this start stamps objects stored before admission
// stamps, of those created before when, and which of them: none was
// recorded (a first pass: now, and pending nil — Start records it), or an
// earlier pass did not finish (its time, and what it recorded it was to
// stamp). A record that says a pass began without saying what it was to
// stamp (an older kubeforge's) stamps nothing more.
func (s StampStored) claim(ctx context.Context, log logr.Logger, now time.Time) (time.Time, bool, map[string]bool) {
	key := client.ObjectKey{Namespace: s.Namespace, Name: StampRecord}
	record := &corev1.ConfigMap{}
	err := s.Reader.Get(ctx, key, record)
	switch {
	case apierrors.IsNotFound(err):
		return now, true, nil
	case err != nil:
		log.Error(err, "Reading the record of stamped objects; trying at the next start", "configmap", key.String())
		return time.Time{}, false, nil
	}
	if record.Data["state"] != stampStarted {
		return time.Time{}, false, nil
	}
	list, recorded := record.Data["pending"]
	at, perr := time.Parse(time.RFC3339, record.Data["at"])
	if perr != nil || !recorded {
		log.Info("An earlier pass did not record what it was to stamp: stamping nothing more (readmit what reports NotAdmitted)", "configmap", key.String())
		return time.Time{}, false, nil
	}
	pending := map[string]bool{}
	for _, e := range proof.ReadLines(list) {
		pending[e] = true
	}
	return at, true, pending
}

// keySince is when the API server made the ownership key's Secret
// (second resolution: an object of the same second is not after it).
func (s StampStored) keySince(ctx context.Context, log logr.Logger) (time.Time, bool) {
	name := s.KeySecret
	if name == "" {
		name = proof.DefaultSecretName
	}
	key := &metav1.PartialObjectMetadata{}
	key.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	if err := s.Reader.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: name}, key); err != nil {
		log.Error(err, "Reading when the ownership key was made", "secret", s.Namespace+"/"+name)
		return time.Time{}, false
	}
	return key.CreationTimestamp.Time, true
}

// finish records that the one-time stamping is done.
func (s StampStored) finish(ctx context.Context, log logr.Logger) {
	record := &corev1.ConfigMap{}
	key := client.ObjectKey{Namespace: s.Namespace, Name: StampRecord}
	if err := s.Reader.Get(ctx, key, record); err != nil {
		log.Error(err, "Reading the record of stamped objects", "configmap", key.String())
		return
	}
	base := record.DeepCopy()
	record.Data["state"] = stampDone
	if err := s.Client.Patch(ctx, record, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		log.Error(err, "Recording that the stored objects were stamped; the next start tries again", "configmap", key.String())
	}
}

// The states of the StampRecord.
const (
	stampStarted = "started"
	stampDone    = "done"
)
