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

package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/kubeforge/kubeforge/internal/proof"
)

// The one-time migration seals an object made before ownership proofs
// that its owner controls (standingOf: migrate). An owner reference is
// anyone's to write who may update the object, so "controls" is read once:
// at the first start of a kubeforge that keeps this record, the objects
// made before the key that a controller reference names then are written
// down (object UID and owner UID), and only those are ever migrated. An
// owner reference written onto an object from before the key after that —
// onto a home kept from before proofs, its retain mark removed — migrates
// nothing.

// PremadeRecord is the ConfigMap, in the ownership key's namespace, that
// lists the objects made before the key that the migration may seal.
const PremadeRecord = "kubeforge-premade"

// maxPremade is how much of the record the list may take (a ConfigMap
// holds 1 MiB): ≈ 12,000 objects. Those past it are not migrated; their
// owners report NameConflict.
const maxPremade = 900 << 10

// Premade are the objects made before the ownership key that the
// migration may seal, each for the owner that controlled it when the
// record was made. The zero value (and nil) allows none.
type Premade struct {
	owner map[types.UID]types.UID
}

// NewPremade is the record of the given objects (object UID → owner UID).
func NewPremade(owners map[types.UID]types.UID) *Premade {
	return &Premade{owner: owners}
}

// allows reports whether obj was recorded as controlled by owner.
func (p *Premade) allows(obj, owner client.Object) bool {
	if p == nil || obj.GetUID() == "" {
		return false
	}
	o, ok := p.owner[obj.GetUID()]
	return ok && o == owner.GetUID()
}

// Len is how many objects the record lists.
func (p *Premade) Len() int {
	if p == nil {
		return 0
	}
	return len(p.owner)
}

// LoadPremade reads the record from namespace, or, when there is none
// yet, makes it: it lists the objects of ownedTypes labelled as
// kubeforge's (metadata only, in the namespaces scope serves) that were
// created before keys.Since, carry no seal of keys and name a controller, and
// writes them down. r reads past any cache. A replica that loses the race
// to create it reads the winner's.
func LoadPremade(ctx context.Context, c client.Client, r client.Reader, s *runtime.Scheme, keys *proof.Keyring,
	namespace string, scope Scope, ownedTypes []client.Object) (*Premade, error) {
	key := client.ObjectKey{Namespace: namespace, Name: PremadeRecord}
	record := &corev1.ConfigMap{}
	err := r.Get(ctx, key, record)
	if err == nil {
		return parsePremade(record.Data["objects"]), nil
	}
	if !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("reading %s: %w", key, err)
	}
	namespaces := scope.Namespaces()
	if scope.All() {
		namespaces = []string{""}
	}
	var lines []string
	seen := map[string]bool{}
	for _, t := range ownedTypes {
		gvk, err := apiutil.GVKForObject(t, s)
		if err != nil {
			return nil, err
		}
		if seen[gvk.String()] {
			continue
		}
		seen[gvk.String()] = true
		for _, ns := range namespaces {
			list := &metav1.PartialObjectMetadataList{}
			list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
			opts := []client.ListOption{client.MatchingLabels{LabelManagedBy: ManagedByValue}}
			if ns != "" {
				opts = append(opts, client.InNamespace(ns))
			}
			if err := r.List(ctx, list, opts...); err != nil {
				return nil, fmt.Errorf("listing %s: %w", gvk.Kind, err)
			}
			for i := range list.Items {
				o := &list.Items[i]
				ref := metav1.GetControllerOfNoCopy(o)
				if ref == nil || !o.CreationTimestamp.Time.Before(keys.Since) {
					continue
				}
				// A seal of this key needs no migration; one of another key
				// (an operator installed beside this one, or before it with a
				// key since deleted) is no seal here, as standingOf reads it.
				if _, v := keys.Check(sealed(gvk.GroupKind(), o), o.Annotations[proof.Annotation]); v != proof.None {
					continue
				}
				lines = append(lines, string(o.UID)+" "+string(ref.UID))
			}
		}
	}
	slices.Sort(lines)
	record = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: PremadeRecord},
		Data: map[string]string{"objects": proof.RecordLines(lines, maxPremade), "at": time.Now().UTC().Format(time.RFC3339)}}
	if err := c.Create(ctx, record); err != nil {
		if !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("recording the objects made before the ownership key: %w", err)
		}
		if err := r.Get(ctx, key, record); err != nil {
			return nil, fmt.Errorf("reading %s: %w", key, err)
		}
	}
	return parsePremade(record.Data["objects"]), nil
}

func parsePremade(list string) *Premade {
	p := &Premade{owner: map[types.UID]types.UID{}}
	for _, line := range proof.ReadLines(list) {
		if obj, owner, ok := strings.Cut(line, " "); ok && obj != "" && owner != "" {
			p.owner[types.UID(obj)] = types.UID(owner)
		}
	}
	return p
}
