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
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A claim that names no storage class gets the cluster's default class —
// when the cluster has one. When it has none, the PersistentVolume
// controller binds the claim to any Available volume without a class that
// fits: a volume that exists already, with someone's data on it. Which
// volume a claim binds is the right of who may create claims, which a
// tenant who may only create kubeforge objects does not have. So the
// engine writes no object that makes such a claim — a claim, a
// StatefulSet's volumeClaimTemplates, a pod template's ephemeral volume —
// while the cluster has no default StorageClass: the object's owner
// reports ReasonNoDefaultStorageClass instead. Found by rule over the
// types (a struct with an ObjectMeta and a PersistentVolumeClaimSpec
// Spec), not by kind, so a new owned type that makes claims is held to it
// with no new code.

// +kubebuilder:rbac:groups=storage.k8s.io,resources=storageclasses,verbs=list

// ReasonNoDefaultStorageClass is the status reason of an object whose
// claims name no storage class in a cluster without a default one.
const ReasonNoDefaultStorageClass = "NoDefaultStorageClass"

// Annotations that mark the cluster's default StorageClass.
const (
	annotationDefaultClass     = "storageclass.kubernetes.io/is-default-class"
	annotationBetaDefaultClass = "storageclass.beta.kubernetes.io/is-default-class"
)

// NoDefaultStorageClassError says that an object would make claims that
// name no storage class while the cluster has no default StorageClass.
type NoDefaultStorageClassError struct {
	// Key is the object's "Kind/name"; Paths the claims' field paths in it.
	Key   string
	Paths []string
}

func (e *NoDefaultStorageClassError) Error() string {
	what := e.Key + " is a volume claim that names no storage class"
	if len(e.Paths) > 0 && e.Paths[0] != "" {
		what = e.Key + " would make volume claims that name no storage class (" + strings.Join(e.Paths, ", ") + ")"
	}
	return what + ", and the cluster has no default StorageClass: such a claim binds any Available volume without a class, " +
		"with its data, so kubeforge does not make it. Name a storage class in the spec, or have the cluster's administrator mark one as the default"
}

var (
	objectMetaType = reflect.TypeFor[metav1.ObjectMeta]()
	claimSpecType  = reflect.TypeFor[corev1.PersistentVolumeClaimSpec]()
)

// UnclassedClaims returns the field paths of the claims obj makes that
// name no storage class: neither spec.storageClassName nor the legacy
// annotation ("" for obj itself, a claim). A claim with a class of "" names one (no class); admission
// holds that to the right to create claims.
func UnclassedClaims(obj any) []string {
	var out []string
	unclassedClaims(reflect.ValueOf(obj), "", &out)
	return out
}

func unclassedClaims(v reflect.Value, path string, out *[]string) {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			unclassedClaims(v.Index(i), fmt.Sprintf("%s[%d]", path, i), out)
		}
	case reflect.Struct:
		t := v.Type()
		if meta, ok := t.FieldByName("ObjectMeta"); ok && meta.Type == objectMetaType {
			if spec, ok := t.FieldByName("Spec"); ok && spec.Type == claimSpecType {
				m := v.FieldByIndex(meta.Index).Interface().(metav1.ObjectMeta)
				s := v.FieldByIndex(spec.Index).Interface().(corev1.PersistentVolumeClaimSpec)
				if _, named := m.Annotations[corev1.BetaStorageClassAnnotation]; !named && s.StorageClassName == nil {
					*out = append(*out, path)
				}
				return
			}
		}
		if t.PkgPath() == objectMetaType.PkgPath() {
			return // metadata makes no claims
		}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			p := path
			switch {
			case name == "-":
				continue
			case name == "" && f.Anonymous:
			case name == "":
				p = joinPath(path, f.Name)
			default:
				p = joinPath(path, name)
			}
			unclassedClaims(v.Field(i), p, out)
		}
	}
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// defaultStorageClass reports whether the cluster has a default
// StorageClass, read from the API server.
func (e *Engine) defaultStorageClass(ctx context.Context) (bool, error) {
	l := &metav1.PartialObjectMetadataList{}
	l.SetGroupVersionKind(storageClassList)
	if err := e.reader().List(ctx, l); err != nil {
		return false, fmt.Errorf("listing StorageClasses to find the default: %w", err)
	}
	for _, c := range l.Items {
		a := c.GetAnnotations()
		if a[annotationDefaultClass] == "true" || a[annotationBetaDefaultClass] == "true" {
			return true, nil
		}
	}
	return false, nil
}

var storageClassList = schema.GroupVersionKind{Group: "storage.k8s.io", Version: "v1", Kind: "StorageClassList"}

// claimsHaveAClass returns a NoDefaultStorageClassError when obj, about
// to be written as key over live (nil for a create), makes claims that
// name no storage class and that live does not make already, and the
// cluster has no default StorageClass. An update that adds no such claim
// — a scale, an image — is not held up by the ones the object has (which
// it was written with while the cluster had a default). The cluster is
// asked only when obj adds such claims, and only before a write.
func (e *Engine) claimsHaveAClass(ctx context.Context, key string, obj, live client.Object) error {
	paths := UnclassedClaims(obj)
	if live != nil && len(paths) > 0 {
		had := UnclassedClaims(live)
		paths = slices.DeleteFunc(paths, func(p string) bool { return slices.Contains(had, p) })
	}
	if len(paths) == 0 {
		return nil
	}
	ok, err := e.defaultStorageClass(ctx)
	if err != nil || ok {
		return err
	}
	return &NoDefaultStorageClassError{Key: key, Paths: paths}
}
