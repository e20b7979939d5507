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
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/admit"
	"github.com/kubeforge/kubeforge/internal/engine"
	"github.com/kubeforge/kubeforge/internal/secret"
)

// ReasonSecretRotated is the event of a generated secret's new values.
const ReasonSecretRotated = "SecretRotated"

// annotationList is the comma-separated list an annotation of p holds.
func annotationList(p *appsv1alpha1.Platform, key string) []string {
	v, ok := p.Annotations[key]
	if !ok {
		return nil
	}
	var out []string
	for _, name := range strings.Split(v, ",") {
		if name = strings.TrimSpace(name); name != "" {
			out = append(out, name)
		}
	}
	return out
}

// carriedKey is a Platform and one of its rotate annotations.
type carriedKey struct {
	types.NamespacedName
	annotation string
}

// carriedRequest is a rotate request as it was carried out: the
// Platform's UID, the annotation's value and the admission stamp the
// Platform carried. Setting a request again, even to the same value, is a
// command admission stamps anew; a Platform read with the same value under
// the same stamp is the request already carried out, read from a cache
// behind its clear.
type carriedRequest struct {
	uid          types.UID
	value, stamp string
}

func requestOf(p *appsv1alpha1.Platform, key string) carriedRequest {
	return carriedRequest{uid: p.UID, value: p.Annotations[key], stamp: p.Annotations[admit.StampAnnotation]}
}

// rotateRequest is the names the rotate annotation key of p asks for; a
// wait when it is the request this manager already carried out and
// cleared, read again from a cache behind the clear.
func (r *Reconciler) rotateRequest(p *appsv1alpha1.Platform, key string) ([]string, error) {
	k := carriedKey{client.ObjectKeyFromObject(p), key}
	if _, ok := p.Annotations[key]; !ok {
		r.carried.Delete(k)
		return nil, nil
	}
	if was, ok := r.carried.Load(k); ok && was.(carriedRequest) == requestOf(p, key) {
		return nil, fmt.Errorf("the %s request %q was carried out and removed; the cache is behind: %w", key, p.Annotations[key], engine.ErrChangedSinceRead)
	}
	return annotationList(p, key), nil
}

// forgetCarried drops what was remembered of a Platform that is gone.
func (r *Reconciler) forgetCarried(name types.NamespacedName) {
	for _, key := range admit.Platform.Consumed {
		r.carried.Delete(carriedKey{name, key})
	}
}

// clearAnnotation removes a rotate request annotation once it was carried
// out, with the resourceVersion read, and remembers the request so that a
// pass reading it again from a cache behind the removal does not carry it
// out again. When the Platform changed since it was read (often only the
// cache behind a write of ours), it reads the Platform from the API server
// and removes the annotation there if the request is still the one carried
// out — the same value under the same admission stamp — so that the next
// pass does not carry it out again (the components would roll twice). A
// request that differs by then (set again, or the spec changed, which
// stamps anew) is left to the next pass, which carries it out: a request
// is never lost, and is carried out twice only when it cannot be told
// apart from a new one. Either way the pass ends there, as a wait
// (engine.ErrChangedSinceRead): the rest of it would plan from a Platform
// that is no longer the one stored.
func (r *Reconciler) clearAnnotation(ctx context.Context, p *appsv1alpha1.Platform, key string) error {
	done := requestOf(p, key)
	k := carriedKey{client.ObjectKeyFromObject(p), key}
	err := r.removeCommand(ctx, p, key)
	if err == nil {
		r.carried.Store(k, done)
		return nil
	}
	if !apierrors.IsConflict(err) {
		return err
	}
	changed := fmt.Errorf("%v: the Platform changed since it was read, read again on the next pass: %w", err, engine.ErrChangedSinceRead)
	live := &appsv1alpha1.Platform{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(p), live); err != nil {
		if apierrors.IsNotFound(err) {
			return changed
		}
		return fmt.Errorf("reading the Platform again to remove the %s annotation: %w", key, err)
	}
	if _, ok := live.Annotations[key]; !ok || requestOf(live, key) != done {
		// Made anew, the request taken away, or not the one carried out:
		// the next pass reads what there is.
		return changed
	}
	switch err := r.removeCommand(ctx, live, key); {
	case err == nil:
		r.carried.Store(k, done)
	case !apierrors.IsConflict(err):
		return err
	}
	return changed
}

// removeCommand writes p without the command annotation key, held to p's
// resourceVersion, the admission stamp made again without it; p is what
// the API server answered, or left as it was when the write fails.
func (r *Reconciler) removeCommand(ctx context.Context, p *appsv1alpha1.Platform, key string) error {
	next := p.DeepCopy()
	patch := client.MergeFromWithOptions(p, client.MergeFromWithOptimisticLock{})
	if err := admit.Platform.WithoutCommand(r.Engine.Proof, next, key); err != nil {
		return err
	}
	if err := r.Client.Patch(ctx, next, patch); err != nil {
		return fmt.Errorf("removing the %s annotation: %w", key, err)
	}
	*p = *next
	return nil
}

// generatedSecrets makes the Secrets of spec.secrets hold a value for
// every key: values are generated once and kept, new keys get new values,
// and the secrets the rotate annotation names get all new values. It
// returns the resourceVersion of each by Secret name, which rolls the
// components that reference them when it changes. The desired Secrets go
// into o.secrets too, so that the Apply of everything keeps them.
func (r *Reconciler) generatedSecrets(ctx context.Context, p *appsv1alpha1.Platform, o *observed) (map[string]string, error) {
	log := logf.FromContext(ctx)
	rotate, err := r.rotateRequest(p, appsv1alpha1.RotateSecretAnnotation)
	if err != nil {
		return nil, err
	}
	versions, err := r.applyGeneratedSecrets(ctx, p, o, rotate)
	if err != nil {
		return nil, err
	}
	if len(rotate) == 0 {
		return versions, nil
	}
	for _, name := range rotate {
		if !slices.ContainsFunc(p.Spec.Secrets, func(s appsv1alpha1.PlatformSecret) bool { return s.Name == name }) {
			r.Engine.Warn(p, "RotationIgnored", "RotateSecret", "spec.secrets has no %s; nothing to rotate", name)
			continue
		}
		log.Info("Rotated a generated secret", "secret", name)
		r.Engine.Event(p, ReasonSecretRotated, "RotateSecret", "New values in the Secret %s; the components that use it roll", GeneratedSecretName(p, name))
	}
	return versions, r.clearAnnotation(ctx, p, appsv1alpha1.RotateSecretAnnotation)
}

// applyGeneratedSecrets builds and writes the generated Secrets, with new
// values for those in rotate. A Secret made by a kubeforge before
// ownership proofs is rotated too, once (the migration, docs/security.md):
// its values could have been written by anyone who may update Secrets.
func (r *Reconciler) applyGeneratedSecrets(ctx context.Context, p *appsv1alpha1.Platform, o *observed, rotate []string) (map[string]string, error) {
	versions := map[string]string{}
	o.secrets = nil
	for i := range p.Spec.Secrets {
		s := &p.Spec.Secrets[i]
		name := GeneratedSecretName(p, s.Name)
		live := &corev1.Secret{}
		switch err := r.Client.Get(ctx, types.NamespacedName{Namespace: p.Namespace, Name: name}, live); {
		case apierrors.IsNotFound(err):
			live = nil
		case err != nil:
			return nil, fmt.Errorf("reading the Secret %s: %w", name, err)
		}
		values := map[string]string{}
		// Only values of a Secret this Platform made are kept; one that is
		// someone else's is never read (Apply reports the conflict).
		if live != nil && r.Engine.Owns(p, live) && !slices.Contains(rotate, s.Name) {
			for k, v := range live.Data {
				values[k] = string(v)
			}
		}
		for _, k := range s.Keys {
			if values[k] != "" {
				continue
			}
			v, err := secret.Random(int(s.Length))
			if err != nil {
				return nil, err
			}
			values[k] = v
		}
		o.secrets = append(o.secrets, GeneratedSecret(p, s, values))
	}
	if len(o.secrets) == 0 {
		return versions, nil
	}
	// Written first, so that the components get the version they will
	// run with in this reconcile, not a roll right after they start.
	// Unchanged Secrets cost no write.
	// Apply fills in what it sets on the objects it is given: copies, so
	// that o.secrets can be applied again with the rest.
	first := make([]client.Object, len(o.secrets))
	for i, obj := range o.secrets {
		first[i] = obj.DeepCopyObject().(client.Object)
	}
	res, err := r.Engine.Apply(ctx, p, first)
	if err != nil {
		return nil, fmt.Errorf("writing the generated Secrets: %w", err)
	}
	if len(res.Migrated) > 0 {
		var again []string
		for _, s := range p.Spec.Secrets {
			if slices.Contains(res.Migrated, "Secret/"+GeneratedSecretName(p, s.Name)) && !slices.Contains(rotate, s.Name) {
				again = append(again, s.Name)
			}
		}
		if len(again) > 0 {
			logf.FromContext(ctx).Info("Rotating generated secrets made before ownership proofs", "secrets", again)
			for _, name := range again {
				r.Engine.Event(p, ReasonSecretRotated, "RotateSecret",
					"New values in the Secret %s: the old ones were made before ownership proofs", GeneratedSecretName(p, name))
			}
			return r.applyGeneratedSecrets(ctx, p, o, append(slices.Clone(rotate), again...))
		}
	}
	for _, obj := range o.secrets {
		live := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: obj.GetName()}}
		if res.LiveObject(r.Engine.Scheme, live) {
			versions[obj.GetName()] = live.ResourceVersion
		}
	}
	return versions, nil
}
