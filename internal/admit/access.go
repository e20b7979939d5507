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
	"slices"
	"strings"
	"sync"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
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
//	PersistentVolumeClaim                get that claim, and create pods in
//	                                     the namespace (mounting it reads it)
//	ServiceAccount (not "default")       create pods in the namespace, or
//	                                     impersonate that ServiceAccount
//	dataSource                           get that claim or VolumeSnapshot
//	Ingress, Certificate, Service of     create ingresses, certificates,
//	type NodePort or LoadBalancer        services in the namespace
//	a named owner (not the requester)    impersonate that user
//	a component's podSecurity Baseline   use podsecuritylevels/baseline or
//	                                     /privileged (group kubeforge.io)
//	a pod template below restricted      use of the level it passes,
//	                                     baseline (or privileged), or
//	                                     privileged
//	a StatefulSet component's storage    get persistentvolumeclaims (any
//	                                     name) and create pods in the
//	                                     namespace (its controller mounts
//	                                     any claim of the names it uses)
//
// On a create every one is asked; on an update every one again, unless the
// spec changed only in fields the kind calls harmless (Harmless). And what
// kubeforge made for the object and its pods use (Implicit: a Workspace's
// home and password, a Platform's generated Secrets) belongs to the
// object's recorded owner: anyone else who changes the spec, or asks for
// a command by annotation (Commands: rotate, retry), must be allowed to
// use each of those too.

// access returns the references, exposures and owner record of obj that
// the requester may not use. onlyHarmless skips the references and
// exposures (an update of harmless fields only); old is the stored object
// on an update (the zero value on a create).
func (v validator[T]) access(ctx context.Context, obj T, onlyHarmless bool, old T) field.ErrorList {
	req, err := admission.RequestFromContext(ctx)
	if err != nil || v.reviews == nil {
		return nil // not an admission request (a unit test): nobody to ask about
	}
	a := &asker{reviews: v.reviews, cache: v.cache, user: req.UserInfo, ns: obj.GetNamespace(), answers: map[authorizationv1.ResourceAttributes]bool{}}
	// The questions a request needs asked are asked at once, not one after
	// the other: a first pass runs the checks with every question not yet
	// answered taken as allowed, and notes it; those are then asked
	// together, and the checks run again on the answers. A question asked
	// only when an earlier one is refused (a ServiceAccount's impersonation,
	// when creating pods is not allowed) comes in the second pass.
	a.collecting = true
	errs := v.check(ctx, a, obj, onlyHarmless, old, req.Operation)
	a.collecting = false
	if len(a.wanted) == 0 {
		return errs // every answer was known: the first pass was the check
	}
	a.askAll(ctx)
	return v.check(ctx, a, obj, onlyHarmless, old, req.Operation)
}

// check is access on the answers a gives.
func (v validator[T]) check(ctx context.Context, a *asker, obj T, onlyHarmless bool, old T, op admissionv1.Operation) field.ErrorList {
	var errs field.ErrorList
	if op == admissionv1.Create {
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
	refs := validation.References(spec, root)
	if op == admissionv1.Update && v.kind.Implicit != nil && a.user.Username != proof.OwnerOf(old) {
		refs = append(refs, v.kind.Implicit(obj)...)
	}
	if n := distinctReferences(refs); n > MaxPolicyReferences {
		// The references policy's bound, held here too: the policy leaves
		// out what this webhook stamped (referencepolicy.go), so what it
		// refuses must get no stamp.
		return append(errs, field.Forbidden(root, fmt.Sprintf("names %d distinct Secrets, ConfigMaps, claims and ServiceAccounts, more than %d: "+
			"kubeforge checks at most %d in one request; name fewer, e.g. one Secret with several keys", n, MaxPolicyReferences, MaxPolicyReferences)))
	}
	for _, ref := range refs {
		errs = append(errs, v.reference(ctx, a, obj, ref)...)
	}
	for _, e := range validation.Exposures(spec, root) {
		if e.Verb != "" {
			what := e.Verb + " " + e.Resource
			if e.Name != "" {
				what += "/" + e.Name
			}
			for _, n := range e.OrNames {
				what += " or /" + n
			}
			what += " in " + a.ns
			if e.Group != "" {
				what += " (group " + e.Group + ")"
			}
			right := authorizationv1.ResourceAttributes{Group: e.Group, Resource: e.Resource, Verb: e.Verb, Name: e.Name}
			granted := a.allowed(ctx, right)
			for _, n := range e.OrNames {
				if granted {
					break
				}
				right.Name = n
				granted = a.allowed(ctx, right)
			}
			if granted {
				a.failed = nil // a question that could not be asked, answered by another
				continue
			}
			errs = append(errs, a.refuse(e.Path, what+", "+e.Why)...)
			continue
		}
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
		// Reading a claim's data is mounting it, which creating Pods allows;
		// getting the claim object does not.
		if errs := get("", "persistentvolumeclaims", "PersistentVolumeClaim"); len(errs) > 0 {
			return errs
		}
		return a.need(ctx, ref.Path, authorizationv1.ResourceAttributes{Resource: "pods", Verb: "create"},
			fmt.Sprintf("create pods in %s, which mounting the PersistentVolumeClaim %s takes, so may not have kubeforge mount it", a.ns, ref.Name))
	case ref.Kind == "VolumeSnapshot" && ref.Group == "snapshot.storage.k8s.io":
		// Restoring a snapshot is reading the data of the claim it was
		// taken of, as mounting that claim would: the same rights.
		if errs := get("snapshot.storage.k8s.io", "volumesnapshots", "VolumeSnapshot"); len(errs) > 0 {
			return errs
		}
		return a.need(ctx, ref.Path, authorizationv1.ResourceAttributes{Resource: "pods", Verb: "create"},
			fmt.Sprintf("create pods in %s, which restoring the VolumeSnapshot %s (reading the data it holds) takes, so may not have kubeforge restore it", a.ns, ref.Name))
	case ref.Kind == validation.RefServiceAccount:
		if ref.Name == "default" {
			return nil
		}
		pods := authorizationv1.ResourceAttributes{Resource: "pods", Verb: "create"}
		impersonate := authorizationv1.ResourceAttributes{Resource: "serviceaccounts", Verb: "impersonate", Name: ref.Name}
		if a.allowed(ctx, pods) || a.allowed(ctx, impersonate) {
			a.failed = nil // a question that could not be asked, answered by the other
			return nil
		}
		return a.refuse(ref.Path, fmt.Sprintf("create pods in %s or impersonate the ServiceAccount %s, so may not have kubeforge run as it",
			a.ns, ref.Name))
	}
	return field.ErrorList{field.Forbidden(ref.Path, fmt.Sprintf("kubeforge does not use %s references", ref.String()))}
}

// distinctReferences counts the objects refs name as the references
// policy does: each kind and name once, leaving out empty names and the
// ServiceAccount default, which every Pod may run as.
func distinctReferences(refs []validation.Reference) int {
	seen := map[validation.Reference]bool{}
	for _, r := range refs {
		if r.Name == "" || r.Kind == validation.RefServiceAccount && r.Name == "default" {
			continue
		}
		seen[validation.Reference{Kind: r.Kind, Group: r.Group, Name: r.Name}] = true
	}
	return len(seen)
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

// specOf is obj's spec field, nil when it has none.
func specOf(obj any) any {
	f := specField(obj)
	if !f.IsValid() {
		return nil
	}
	return f.Interface()
}

// specField is obj's field Spec (addressable when obj is a pointer), or
// the zero Value when it has none.
func specField(obj any) reflect.Value {
	v := reflect.ValueOf(obj)
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return reflect.Value{}
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return reflect.Value{}
	}
	return v.FieldByName("Spec")
}

// asker asks SubjectAccessReviews for one requester, each question once.
type asker struct {
	reviews client.Client
	cache   *reviewCache
	user    authenticationv1.UserInfo
	ns      string
	answers map[authorizationv1.ResourceAttributes]bool
	failed  error
	// collecting: note each question not answered yet in wanted and take
	// it as allowed (access's first pass).
	collecting bool
	wanted     []authorizationv1.ResourceAttributes
	// failures: the questions askAll could not ask, and why.
	failures map[authorizationv1.ResourceAttributes]error
}

// maxAsking bounds the reviews one request has under way at once.
const maxAsking = 8

// askAll asks every wanted question at once (at most maxAsking under way)
// and keeps the answers, and the error of each that could not be asked:
// the pass that needs it reports that error rather than asking again.
func (a *asker) askAll(ctx context.Context) {
	type answer struct {
		asked   time.Time
		allowed bool
		err     error
	}
	got := make([]answer, len(a.wanted))
	slots := make(chan struct{}, maxAsking)
	var wg sync.WaitGroup
	for i, attrs := range a.wanted {
		slots <- struct{}{}
		if err := ctx.Err(); err != nil {
			<-slots
			got[i].err = err
			continue
		}
		wg.Go(func() {
			defer func() { <-slots }()
			defer func() {
				// Off the request's goroutine, where the webhook server's
				// recovery does not reach: a panic is this question's error.
				if r := recover(); r != nil {
					got[i].err = fmt.Errorf("asking the API server panicked: %v", r)
				}
			}()
			got[i].asked = a.cache.clock()
			got[i].allowed, got[i].err = a.review(ctx, attrs)
		})
	}
	wg.Wait()
	for i, attrs := range a.wanted {
		g := got[i]
		if g.err != nil {
			if a.failures == nil {
				a.failures = map[authorizationv1.ResourceAttributes]error{}
			}
			a.failures[attrs] = g.err
			continue
		}
		a.answers[attrs] = g.allowed
		a.cache.answer(a.user, attrs, g.asked, g.allowed)
	}
	a.wanted = nil
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
	if ok, refresh := a.cache.lookup(a.user, attrs); ok {
		a.answers[attrs] = true
		if !refresh.IsZero() {
			// Not on this request's path: the request ends before the
			// answer may come.
			go a.refresh(attrs, refresh)
		}
		return true
	}
	if a.collecting {
		if !slices.Contains(a.wanted, attrs) {
			a.wanted = append(a.wanted, attrs)
		}
		return true
	}
	if err, failed := a.failures[attrs]; failed {
		a.failed = err
		return false
	}
	asked := a.cache.clock()
	allowed, err := a.review(ctx, attrs)
	if err != nil {
		a.failed = err
		return false
	}
	a.answers[attrs] = allowed
	a.cache.answer(a.user, attrs, asked, allowed)
	return allowed
}

// review asks the API server whether the requester may do attrs.
func (a *asker) review(ctx context.Context, attrs authorizationv1.ResourceAttributes) (bool, error) {
	extra := map[string]authorizationv1.ExtraValue{}
	for k, v := range a.user.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: a.user.Username, Groups: a.user.Groups, UID: a.user.UID, Extra: extra, ResourceAttributes: &attrs,
	}}
	if err := a.reviews.Create(ctx, sar); err != nil {
		return false, err
	}
	return sar.Status.Allowed, nil
}

// refresh asks again, at asked, about a kept answer.
func (a *asker) refresh(attrs authorizationv1.ResourceAttributes, asked time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), refreshTimeout)
	defer cancel()
	allowed, err := a.review(ctx, attrs)
	a.cache.refreshed(a.user, attrs, asked, allowed, err == nil)
}

// refreshTimeout bounds a background review.
const refreshTimeout = 10 * time.Second

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
