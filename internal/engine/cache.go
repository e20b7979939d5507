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
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/kubeforge/kubeforge/internal/proof"
)

// What the manager's cache holds is bounded by what the operator made, not
// by what anyone else writes: a label is no proof (anyone who may create a
// ConfigMap may label it app.kubernetes.io/managed-by=kubeforge).
//
//   - ConfigMaps and Secrets (ContentKinds) are watched as metadata only,
//     and their content is read from the API server by name when it is
//     needed: however many large labelled ones someone plants, the cache
//     holds a few hundred bytes of each. GuardCache makes a typed read of
//     them from the cache an error, so no later code can bring their
//     content back into it by accident.
//   - Every other cached object keeps no annotation unless its seal
//     verifies; an owned type's object without a seal keeps nothing but a
//     few bounded fields of its metadata (CacheTransform).

// ContentKinds are the kinds whose content the manager never caches.
var ContentKinds = []client.Object{&corev1.ConfigMap{}, &corev1.Secret{}}

// IsContentKind reports whether gk is one of ContentKinds.
func IsContentKind(gk schema.GroupKind) bool {
	return gk.Group == "" && (gk.Kind == "ConfigMap" || gk.Kind == "Secret")
}

// CacheSettings turn the cache's two memory savings off. The zero value
// is what the operator runs with; the flags that set these exist to
// measure what the savings are worth (tests/perf).
type CacheSettings struct {
	// KeepManagedFields caches objects with their metadata.managedFields.
	KeepManagedFields bool
	// AllOwnedTypeObjects caches every object of the owned types, not only
	// those labelled app.kubernetes.io/managed-by=kubeforge.
	AllOwnedTypeObjects bool
	// Transform, when set, is applied to every cached object after the
	// managed fields are dropped: CacheTransform.
	Transform toolscache.TransformFunc
	// Scope is the namespaces the cache holds; the zero Scope, all.
	Scope Scope
}

// CacheOptions are the manager's cache options for the given cached types.
func CacheOptions(s CacheSettings, ownedTypes ...client.Object) cache.Options {
	opts := cache.Options{DefaultNamespaces: s.Scope.CacheNamespaces()}
	var steps []toolscache.TransformFunc
	if !s.KeepManagedFields {
		steps = append(steps, cache.TransformStripManagedFields())
	}
	if s.Transform != nil {
		steps = append(steps, s.Transform)
	}
	if len(steps) > 0 {
		opts.DefaultTransform = func(in any) (any, error) {
			var err error
			for _, step := range steps {
				if in, err = step(in); err != nil {
					return nil, err
				}
			}
			return in, nil
		}
	}
	if !s.AllOwnedTypeObjects {
		managed := labels.SelectorFromSet(labels.Set{LabelManagedBy: ManagedByValue})
		opts.ByObject = map[client.Object]cache.ByObject{}
		for _, t := range ownedTypes {
			opts.ByObject[t] = cache.ByObject{Label: managed}
		}
	}
	return opts
}

// ClientOptions make the manager's client read ContentKinds from the API
// server, never from the cache.
func ClientOptions() client.Options {
	return client.Options{Cache: &client.CacheOptions{DisableFor: ContentKinds}}
}

// MetadataFromCache wraps the manager's client (made with ClientOptions)
// so that the metadata of ContentKinds — a PartialObjectMetadata of a
// ConfigMap or Secret, or a list of them — is read from cache, which
// watches them metadata-only, as every other kind is; their content is
// still read from the API server. ClientOptions names kinds, not shapes:
// without this the client read the metadata past the cache too, a round
// trip to the API server before every Workspace's first object (whether
// its password Secret exists) and on every reconcile that prunes.
//
// A cached answer may be a moment old, which the engine is built for: a
// miss leads to a create, which fails on anything under the name, and
// only what is proven ours (its seal) is ever changed or deleted.
// options are those c was made with; without a cache reader in them, c
// is returned as it is.
func MetadataFromCache(c client.Client, options client.Options) client.Client {
	if options.Cache == nil || options.Cache.Reader == nil {
		return c
	}
	return metadataCached{Client: c, cache: options.Cache.Reader}
}

type metadataCached struct {
	client.Client
	cache client.Reader
}

func (c metadataCached) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if m, ok := obj.(*metav1.PartialObjectMetadata); ok && IsContentKind(m.GroupVersionKind().GroupKind()) {
		return c.cache.Get(ctx, key, obj, opts...)
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

func (c metadataCached) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if m, ok := list.(*metav1.PartialObjectMetadataList); ok {
		gvk := m.GroupVersionKind()
		if IsContentKind(schema.GroupKind{Group: gvk.Group, Kind: strings.TrimSuffix(gvk.Kind, "List")}) {
			return c.cache.List(ctx, list, opts...)
		}
	}
	return c.Client.List(ctx, list, opts...)
}

// keptLabels are the labels an unsealed object of an owned type keeps:
// the engine's own, each at most 63 characters (a label value's limit).
var keptLabels = []string{LabelManagedBy, LabelInstance, LabelComponent}

// MaxReadLabels is how many labels an unsealed object of a read type may
// carry and keep them all (the cache matches selectors against them);
// one with more keeps only the engine's three, as an owned type's does,
// and no selector of a kind finds it. A label is at most 317 bytes of key
// and 63 of value, so the labels kept cost at most ≈ 24 KiB an object.
const MaxReadLabels = 64

func trimLabels(m map[string]string) map[string]string {
	var out map[string]string
	for _, k := range keptLabels {
		if v, ok := m[k]; ok {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

// boundedMeta is the metadata the cache keeps of an object it cannot
// prove the operator's: its identity, times, labels (all of them only
// when wholeLabels and at most MaxReadLabels) and controller reference —
// no annotation, no other owner reference, no finalizer, each of which
// anyone who may write the object could make as large as the object's
// limit (1.5 MB).
func boundedMeta(obj metav1.Object, wholeLabels bool) metav1.ObjectMeta {
	md := metav1.ObjectMeta{
		Name: obj.GetName(), Namespace: obj.GetNamespace(), UID: obj.GetUID(),
		ResourceVersion: obj.GetResourceVersion(), Generation: obj.GetGeneration(),
		CreationTimestamp: obj.GetCreationTimestamp(), DeletionTimestamp: obj.GetDeletionTimestamp(),
	}
	if l := obj.GetLabels(); wholeLabels && len(l) <= MaxReadLabels {
		md.Labels = l
	} else {
		md.Labels = trimLabels(l)
	}
	for _, ref := range obj.GetOwnerReferences() {
		if ref.Controller != nil && *ref.Controller {
			if boundedRef(ref) {
				md.OwnerReferences = []metav1.OwnerReference{{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name, UID: ref.UID, Controller: ref.Controller}}
			}
			break
		}
	}
	return md
}

// boundSealed bounds what an object the operator made may carry beyond
// what it wrote: its seal covers its identity, not its metadata, which
// whoever may update it can fill up to the object's limit (1.5 MB) with
// owner references and finalizers (the API bounds annotations at 256
// KiB). The cache keeps at most 8 owner references and 16 finalizers, each
// of a legal size.
func boundSealed(obj metav1.Object) {
	if refs := obj.GetOwnerReferences(); len(refs) > 0 {
		var kept []metav1.OwnerReference
		for _, ref := range refs {
			if boundedRef(ref) && len(kept) < 8 {
				kept = append(kept, ref)
			}
		}
		if len(kept) != len(refs) {
			obj.SetOwnerReferences(kept)
		}
	}
	if fs := obj.GetFinalizers(); len(fs) > 0 {
		var kept []string
		for _, f := range fs {
			if len(f) <= 253+1+63 && len(kept) < 16 {
				kept = append(kept, f)
			}
		}
		if len(kept) != len(fs) {
			obj.SetFinalizers(kept)
		}
	}
}

// boundedRef reports whether an owner reference's fields are within what
// a real owner's can be (the API checks only that they are not empty): a
// name of at most 253 characters, a kind of 63, an apiVersion of a group
// and a version, a UID of 36. One past them names no real owner, and the
// cache keeps none of it.
func boundedRef(ref metav1.OwnerReference) bool {
	return len(ref.Name) <= 253 && len(ref.Kind) <= 63 && len(ref.APIVersion) <= 253+1+63 && len(ref.UID) <= 36
}

func setMeta(dst metav1.Object, md metav1.ObjectMeta) {
	dst.SetName(md.Name)
	dst.SetNamespace(md.Namespace)
	dst.SetUID(md.UID)
	dst.SetResourceVersion(md.ResourceVersion)
	dst.SetGeneration(md.Generation)
	dst.SetCreationTimestamp(md.CreationTimestamp)
	dst.SetDeletionTimestamp(md.DeletionTimestamp)
	dst.SetLabels(md.Labels)
	dst.SetAnnotations(nil)
	dst.SetOwnerReferences(md.OwnerReferences)
	dst.SetFinalizers(nil)
	dst.SetManagedFields(nil)
}

// CacheTransform returns the cache transform that bounds what each cached
// object costs. An object whose seal verifies is kept whole (it is what
// the operator made). Any other object of a type some kind owns or reads
// keeps only bounded metadata (boundedMeta): enough for the engine to see
// a name taken and report a NameConflict, nothing for a controller to
// trust. Of it, an owned type's object, and a ConfigMap's or Secret's
// metadata, keep only the engine's three labels; a read type's object
// (Pods of a workload, EndpointSlices, a PodSet's ReplicaSets' metadata),
// made by Kubernetes controllers, keeps its labels (the cache matches
// selectors against them) and what its Read's Keep returns of its content.
// The kinds' own objects (Workspaces, Platforms, ...) and any type no kind
// owns or reads pass through unchanged. Two Reads of one type with
// different Keep functions are a programming error: CacheTransform panics.
func CacheTransform(keys *proof.Keyring, scheme *runtime.Scheme, ts ...Types) toolscache.TransformFunc {
	e := &Engine{Proof: keys, Scheme: scheme}
	owned := map[reflect.Type]bool{}
	for _, o := range OwnedOnly(ts...) {
		owned[reflect.TypeOf(o)] = true
	}
	kinds := map[reflect.Type]schema.GroupKind{}
	for _, o := range Cached(ts...) {
		if gvk, err := apiutil.GVKForObject(o, scheme); err == nil {
			kinds[reflect.TypeOf(o)] = gvk.GroupKind()
		}
	}
	// Read types, and what each keeps of an unsealed object's content.
	readKinds := map[schema.GroupKind]bool{}
	keep := map[reflect.Type]func(client.Object) client.Object{}
	for _, t := range ts {
		for _, r := range t.Read {
			if gvk, err := apiutil.GVKForObject(r.Object, scheme); err == nil {
				readKinds[gvk.GroupKind()] = true
			}
			if r.Keep == nil {
				continue
			}
			rt := reflect.TypeOf(r.Object)
			if k, ok := keep[rt]; ok && reflect.ValueOf(k).Pointer() != reflect.ValueOf(r.Keep).Pointer() {
				panic(fmt.Sprintf("engine: two Reads of %s keep different fields", rt))
			}
			keep[rt] = r.Keep
		}
	}
	return func(in any) (any, error) {
		obj, err := meta.Accessor(in)
		if err != nil {
			return in, nil
		}
		gk, cached := kinds[reflect.TypeOf(in)]
		if pom, ok := in.(*metav1.PartialObjectMetadata); ok {
			gk, cached = pom.GroupVersionKind().GroupKind(), true
		}
		if !cached {
			return in, nil
		}
		if gk.Kind != "" && e.Proven(gk, obj) {
			boundSealed(obj)
			return in, nil
		}
		md := boundedMeta(obj, readKinds[gk] && !owned[reflect.TypeOf(in)])
		if pom, ok := in.(*metav1.PartialObjectMetadata); ok {
			return &metav1.PartialObjectMetadata{TypeMeta: pom.TypeMeta, ObjectMeta: md}, nil
		}
		ro, ok := in.(client.Object)
		if !ok {
			return in, nil
		}
		var out client.Object
		if k := keep[reflect.TypeOf(in)]; k != nil {
			out = k(ro)
		} else {
			// An empty object of the same type.
			out = reflect.New(reflect.TypeOf(ro).Elem()).Interface().(client.Object)
		}
		setMeta(out, md)
		out.GetObjectKind().SetGroupVersionKind(ro.GetObjectKind().GroupVersionKind())
		return out, nil
	}
}

// GuardCache wraps the manager's cache so that a typed read of a
// ContentKind (which would start an informer holding every labelled
// ConfigMap's or Secret's content) is an error instead.
func GuardCache(c cache.Cache) cache.Cache { return guardedCache{c} }

type guardedCache struct{ cache.Cache }

func refuseContent(obj runtime.Object) error {
	switch obj.(type) {
	case *corev1.ConfigMap, *corev1.Secret, *corev1.ConfigMapList, *corev1.SecretList:
		return fmt.Errorf("kubeforge never caches the content of %T: read it from the API server", obj)
	}
	return nil
}

func (g guardedCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := refuseContent(obj); err != nil {
		return err
	}
	return g.Cache.Get(ctx, key, obj, opts...)
}

func (g guardedCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := refuseContent(list); err != nil {
		return err
	}
	return g.Cache.List(ctx, list, opts...)
}

func (g guardedCache) GetInformerForKind(ctx context.Context, gvk schema.GroupVersionKind, opts ...cache.InformerGetOption) (cache.Informer, error) {
	if IsContentKind(gvk.GroupKind()) {
		return nil, fmt.Errorf("kubeforge never caches the content of %s: watch its metadata", gvk.Kind)
	}
	return g.Cache.GetInformerForKind(ctx, gvk, opts...)
}

func (g guardedCache) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	if err := refuseContent(obj); err != nil {
		return nil, err
	}
	return g.Cache.GetInformer(ctx, obj, opts...)
}
