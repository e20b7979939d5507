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
	"reflect"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kubeforge/kubeforge/internal/proof"
	"github.com/kubeforge/kubeforge/internal/validation"
)

// Whoever creates or changes a kubeforge object may only make the operator
// use what they could use themselves. For every reference the walker
// (validation.References) finds in the spec and every exposure
// (validation.Exposures), the validating webhook asks the API server with
// a SubjectAccessReview for the requester:
//
//	Secret, ConfigMap, ResourceClaim     get that object
//	PersistentVolumeClaim                get that claim; one kubeforge made
//	                                     for an object (a retained home)
//	                                     also create pods in the namespace
//	ServiceAccount (not "default")       create pods in the namespace, or
//	                                     impersonate that ServiceAccount
//	dataSource                           get that claim or VolumeSnapshot
//	Ingress, Certificate, Service of     create ingresses, certificates,
//	type NodePort or LoadBalancer        services in the namespace
//	a named owner (not the requester)    impersonate that user
//
// On a create every one is asked; on an update every one again, unless the
// spec changed only in fields the kind calls harmless (Harmless).

// access returns the references, exposures and owner record of obj that
// the requester may not use. onlyHarmless skips the references and
// exposures (an update of harmless fields only).
func (v validator[T]) access(ctx context.Context, obj T, onlyHarmless bool) field.ErrorList {
	req, err := admission.RequestFromContext(ctx)
	if err != nil || v.reviews == nil {
		return nil // not an admission request (a unit test): nobody to ask about
	}
	a := &asker{reviews: v.reviews, user: req.UserInfo, ns: obj.GetNamespace(), answers: map[authorizationv1.ResourceAttributes]bool{}}
	var errs field.ErrorList
	if req.Operation == "CREATE" {
		errs = append(errs, a.owner(ctx, obj)...)
	}
	if onlyHarmless {
		return errs
	}
	spec := specOf(obj)
	if spec == nil {
		return errs
	}
	root := field.NewPath("spec")
	for _, ref := range validation.References(spec, root) {
		errs = append(errs, v.reference(ctx, a, obj, ref)...)
	}
	for _, e := range validation.Exposures(spec, root) {
		what := e.Resource
		switch {
		case e.ServiceType != "":
			what = "Services of type " + e.ServiceType
		case e.Resource == "ingresses":
			what = "Ingresses"
		case e.Resource == "certificates":
			what = "cert-manager Certificates"
		}
		errs = append(errs, a.need(ctx, e.Path, authorizationv1.ResourceAttributes{Group: e.Group, Resource: e.Resource, Verb: "create"},
			"create "+what+" in "+a.ns+", so may not have kubeforge create them")...)
	}
	return errs
}

func (v validator[T]) reference(ctx context.Context, a *asker, obj T, ref validation.Reference) field.ErrorList {
	if ref.Namespace != "" && ref.Namespace != a.ns {
		return field.ErrorList{field.Forbidden(ref.Path, "kubeforge uses objects of the object's own namespace only")}
	}
	get := func(group, resource, what string) field.ErrorList {
		return a.need(ctx, ref.Path, authorizationv1.ResourceAttributes{Group: group, Resource: resource, Verb: "get", Name: ref.Name},
			fmt.Sprintf("get the %s %s in %s, so may not have kubeforge use it", what, ref.Name, a.ns))
	}
	switch {
	case ref.Kind == validation.RefSecret:
		return get("", "secrets", "Secret")
	case ref.Kind == validation.RefConfigMap:
		return get("", "configmaps", "ConfigMap")
	case ref.Kind == validation.RefResourceClaim:
		return get("resource.k8s.io", "resourceclaims", "ResourceClaim")
	case ref.Kind == validation.RefResourceClaimTemplate:
		return get("resource.k8s.io", "resourceclaimtemplates", "ResourceClaimTemplate")
	case ref.Kind == validation.RefClaim && ref.Group == "":
		if errs := get("", "persistentvolumeclaims", "PersistentVolumeClaim"); len(errs) > 0 {
			return errs
		}
		if v.madeByKubeforge(ctx, a.ns, ref.Name) {
			return a.need(ctx, ref.Path, authorizationv1.ResourceAttributes{Resource: "pods", Verb: "create"},
				fmt.Sprintf("create pods in %s, which the PersistentVolumeClaim %s, made by kubeforge for another object (a retained home), "+
					"takes to be mounted by anything else", a.ns, ref.Name))
		}
		return nil
	case ref.Kind == "VolumeSnapshot" && ref.Group == "snapshot.storage.k8s.io":
		return get("snapshot.storage.k8s.io", "volumesnapshots", "VolumeSnapshot")
	case ref.Kind == validation.RefServiceAccount:
		if ref.Name == "default" {
			return nil
		}
		pods := authorizationv1.ResourceAttributes{Resource: "pods", Verb: "create"}
		impersonate := authorizationv1.ResourceAttributes{Resource: "serviceaccounts", Verb: "impersonate", Name: ref.Name}
		if a.allowed(ctx, pods) || a.allowed(ctx, impersonate) {
			return nil
		}
		return a.refuse(ref.Path, fmt.Sprintf("create pods in %s or impersonate the ServiceAccount %s, so may not have kubeforge run as it",
			a.ns, ref.Name))
	}
	return field.ErrorList{field.Forbidden(ref.Path, fmt.Sprintf("kubeforge does not use %s references", ref.String()))}
}

// owner checks a named owner (proof.OwnerAnnotation) on create: the
// requester, or a user they may impersonate.
func (a *asker) owner(ctx context.Context, obj client.Object) field.ErrorList {
	owner := obj.GetAnnotations()[proof.OwnerAnnotation]
	if owner == "" || owner == a.user.Username {
		return nil
	}
	p := field.NewPath("metadata", "annotations").Key(proof.OwnerAnnotation)
	attrs := authorizationv1.ResourceAttributes{Resource: "users", Verb: "impersonate", Name: owner}
	if ns, name, ok := serviceAccountUser(owner); ok {
		attrs = authorizationv1.ResourceAttributes{Namespace: ns, Resource: "serviceaccounts", Verb: "impersonate", Name: name}
	}
	if a.allowedIn(ctx, attrs) {
		return nil
	}
	return a.refuse(p, "impersonate "+owner+", so may not create objects that belong to them")
}

func serviceAccountUser(user string) (ns, name string, ok bool) {
	rest, ok := strings.CutPrefix(user, "system:serviceaccount:")
	if !ok {
		return "", "", false
	}
	ns, name, ok = strings.Cut(rest, ":")
	return ns, name, ok && ns != "" && name != ""
}

// madeByKubeforge reports whether the claim name in ns exists and carries
// a seal that verifies: it is an object kubeforge made for one of its own.
func (v validator[T]) madeByKubeforge(ctx context.Context, ns, name string) bool {
	if v.reader == nil || v.proof == nil {
		return false
	}
	pvc := &metav1.PartialObjectMetadata{}
	pvc.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"))
	if err := v.reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pvc); err != nil {
		return !apierrors.IsNotFound(err) // unknown: be strict
	}
	_, verdict := v.proof.Check(proof.Object{GroupKind: pvc.GroupVersionKind().GroupKind(), Namespace: ns, Name: name, UID: string(pvc.UID)},
		pvc.Annotations[proof.Annotation])
	return verdict == proof.Sealed || verdict == proof.SealedWithOldKey
}

// specOf is obj's spec field, nil when it has none.
func specOf(obj any) any {
	v := reflect.ValueOf(obj)
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return nil
	}
	f := v.FieldByName("Spec")
	if !f.IsValid() {
		return nil
	}
	return f.Interface()
}

// asker asks SubjectAccessReviews for one requester, each question once.
type asker struct {
	reviews client.Client
	user    authenticationv1.UserInfo
	ns      string
	answers map[authorizationv1.ResourceAttributes]bool
	failed  error
}

// allowed asks about attrs in the object's namespace.
func (a *asker) allowed(ctx context.Context, attrs authorizationv1.ResourceAttributes) bool {
	attrs.Namespace = a.ns
	return a.allowedIn(ctx, attrs)
}

func (a *asker) allowedIn(ctx context.Context, attrs authorizationv1.ResourceAttributes) bool {
	if ok, seen := a.answers[attrs]; seen {
		return ok
	}
	extra := map[string]authorizationv1.ExtraValue{}
	for k, v := range a.user.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: a.user.Username, Groups: a.user.Groups, UID: a.user.UID, Extra: extra, ResourceAttributes: &attrs,
	}}
	if err := a.reviews.Create(ctx, sar); err != nil {
		a.failed = err
		return false
	}
	a.answers[attrs] = sar.Status.Allowed
	return sar.Status.Allowed
}

// need refuses p unless the requester may do attrs in the namespace;
// what completes "<user> may not ...".
func (a *asker) need(ctx context.Context, p *field.Path, attrs authorizationv1.ResourceAttributes, what string) field.ErrorList {
	if a.allowed(ctx, attrs) {
		return nil
	}
	return a.refuse(p, what)
}

func (a *asker) refuse(p *field.Path, what string) field.ErrorList {
	if a.failed != nil {
		err := fmt.Errorf("asking the API server whether %s may %s: %w", a.user.Username, strings.SplitN(what, ",", 2)[0], a.failed)
		a.failed = nil
		return field.ErrorList{field.InternalError(p, err)}
	}
	return field.ErrorList{field.Forbidden(p, a.user.Username+" may not "+what)}
}
