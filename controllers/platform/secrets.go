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

// clearAnnotation removes a request annotation once it was carried out,
// with the resourceVersion read: a request made meanwhile is not lost.
// When the Platform changed since it was read (often only the cache
// behind a write of ours), it reads the Platform from the API server and
// clears the annotation there if it still asks for what was carried out,
// so that the next pass does not carry it out again (the components would
// roll twice); an annotation that asks for something else now is a new
// request, left to the next pass. Either way the pass ends there, as a
// wait (engine.ErrChangedSinceRead): the rest of it would plan from a
// Platform that is no longer the one stored.
func (r *Reconciler) clearAnnotation(ctx context.Context, p *appsv1alpha1.Platform, key string) error {
	err := r.removeCommand(ctx, p, key)
	if !apierrors.IsConflict(err) {
		return err
	}
	changed := fmt.Errorf("removing the %s annotation: the Platform changed since it was read (%v), read again on the next pass: %w", key, err, engine.ErrChangedSinceRead)
	live := &appsv1alpha1.Platform{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(p), live); err != nil {
		return fmt.Errorf("reading the Platform again to remove the %s annotation: %w", key, err)
	}
	if now, ok := live.Annotations[key]; live.UID != p.UID || !ok || now != p.Annotations[key] {
		// Made anew, the request taken away, or a new one: the next pass
		// reads what there is.
		return changed
	}
	if err := r.removeCommand(ctx, live, key); err != nil && !apierrors.IsConflict(err) {
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
		if apierrors.IsConflict(err) {
			return err
		}
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
	rotate := annotationList(p, appsv1alpha1.RotateSecretAnnotation)
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
