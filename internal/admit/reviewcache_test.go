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
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/scheme"
)

func TestReviewCacheKeepsAnAllowedAnswerForItsRequesterAndQuestionUntilTheTTL(t *testing.T) {
	now := time.Unix(1000, 0)
	c := newReviewCache(10 * time.Second)
	c.now = func() time.Time { return now }
	alice := authenticationv1.UserInfo{Username: "alice", UID: "1", Groups: []string{"a", "b"},
		Extra: map[string]authenticationv1.ExtraValue{"scopes": {"x"}}}
	get := authorizationv1.ResourceAttributes{Namespace: "ns", Verb: "get", Resource: "secrets", Name: "token"}

	if allowed(c, alice, get) {
		t.Fatal("an answer nobody kept was found")
	}
	c.answer(alice, get, now, true)
	if !allowed(c, alice, get) {
		t.Fatal("the kept answer was not found")
	}
	reordered := alice
	reordered.Groups = []string{"b", "a"}
	if !allowed(c, reordered, get) {
		t.Error("the same groups in another order are the same requester")
	}
	for name, other := range map[string]authenticationv1.UserInfo{
		"another name":  {Username: "alicia", UID: "1", Groups: alice.Groups, Extra: alice.Extra},
		"another UID":   {Username: "alice", UID: "2", Groups: alice.Groups, Extra: alice.Extra},
		"fewer groups":  {Username: "alice", UID: "1", Groups: []string{"a"}, Extra: alice.Extra},
		"other extra":   {Username: "alice", UID: "1", Groups: alice.Groups, Extra: map[string]authenticationv1.ExtraValue{"scopes": {"y"}}},
		"no extra":      {Username: "alice", UID: "1", Groups: alice.Groups},
		"groups joined": {Username: "alice", UID: "1", Groups: []string{"ab"}, Extra: alice.Extra},
	} {
		if allowed(c, other, get) {
			t.Errorf("%s shares alice's answer", name)
		}
	}
	for name, attrs := range map[string]authorizationv1.ResourceAttributes{
		"another name":      {Namespace: "ns", Verb: "get", Resource: "secrets", Name: "other"},
		"another namespace": {Namespace: "ns2", Verb: "get", Resource: "secrets", Name: "token"},
		"another verb":      {Namespace: "ns", Verb: "list", Resource: "secrets", Name: "token"},
		"another resource":  {Namespace: "ns", Verb: "get", Resource: "configmaps", Name: "token"},
	} {
		if allowed(c, alice, attrs) {
			t.Errorf("%s shares the answer", name)
		}
	}
	now = now.Add(10 * time.Second)
	if allowed(c, alice, get) {
		t.Error("the answer outlived its TTL")
	}
	if newReviewCache(0) != nil || allowed(newReviewCache(0), alice, get) {
		t.Error("a TTL of 0 keeps answers")
	}
}

// allowed is lookup's first answer.
func allowed(c *reviewCache, user authenticationv1.UserInfo, attrs authorizationv1.ResourceAttributes) bool {
	ok, _ := c.lookup(user, attrs)
	return ok
}

func TestReviewCacheAsksOnceToRefreshAnAnswerPastHalfItsTTLAndNeverUsesOneOlderThanIt(t *testing.T) {
	now := time.Unix(1000, 0)
	c := newReviewCache(10 * time.Second)
	c.now = func() time.Time { return now }
	alice := authenticationv1.UserInfo{Username: "alice"}
	get := authorizationv1.ResourceAttributes{Namespace: "ns", Verb: "get", Resource: "secrets", Name: "token"}
	var asked time.Time // when the last refresh lookup asked for was asked
	check := func(when string, wantAllowed, wantRefresh bool) {
		t.Helper()
		ok, refresh := c.lookup(alice, get)
		if ok != wantAllowed || !refresh.IsZero() != wantRefresh {
			t.Fatalf("%s: allowed %v, refresh %v; want %v, %v", when, ok, refresh, wantAllowed, wantRefresh)
		}
		if !refresh.IsZero() {
			asked = refresh
		}
	}
	c.answer(alice, get, now, true)
	now = now.Add(4 * time.Second)
	check("4 s after", true, false)
	now = now.Add(2 * time.Second)
	check("6 s after", true, true)
	check("6 s after, asked again while the refresh runs", true, false)
	now = now.Add(5 * time.Second)
	check("11 s after, the refresh not answered yet", false, false)
	c.refreshed(alice, get, asked, false, false) // it times out

	// The refresh's allowed answer keeps it a TTL from when it was asked.
	c.answer(alice, get, now, true)
	now = now.Add(6 * time.Second)
	check("6 s after the second answer", true, true)
	now = now.Add(3 * time.Second)
	c.refreshed(alice, get, asked, true, true)
	now = now.Add(6 * time.Second)
	check("9 s after the refresh was asked", true, true)
	now = now.Add(2 * time.Second)
	check("11 s after the refresh was asked, though answered 3 s later", false, false)
	c.refreshed(alice, get, asked, false, false) // the one asked at 9 s times out

	// A refresh without an answer: the kept answer stands until its TTL,
	// and the next use asks again.
	c.answer(alice, get, now, true)
	now = now.Add(6 * time.Second)
	check("6 s after a third answer", true, true)
	c.refreshed(alice, get, asked, false, false)
	check("after a refresh without an answer", true, true)

	// Another refresh's end does not end this one.
	c.refreshed(alice, get, asked.Add(-time.Second), false, false)
	check("after another refresh's end", true, false)

	// Refused when asked again: dropped at once.
	c.refreshed(alice, get, asked, false, true)
	check("after a refusal", false, false)
}

// Answers that come back out of order count from when they were asked: a
// late allowed answer asked before a refusal never brings back the right
// the refusal took away, and one asked more than a TTL ago is never used.
func TestReviewCacheCountsEachAnswerFromWhenItWasAsked(t *testing.T) {
	start := time.Unix(1000, 0)
	at := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
	now := start
	c := newReviewCache(10 * time.Second)
	c.now = func() time.Time { return now }
	alice := authenticationv1.UserInfo{Username: "alice"}
	get := authorizationv1.ResourceAttributes{Namespace: "ns", Verb: "get", Resource: "secrets", Name: "token"}

	// A slow refresh R1 is asked at 9.9 s; the answer expires; a request
	// is allowed at 11 s; the right is taken away at 12 s; a request's
	// review is refused at 16 s; R1 comes back allowed at 16.5 s.
	c.answer(alice, get, at(0), true)
	now = at(9.9)
	if _, refresh := c.lookup(alice, get); refresh.IsZero() {
		t.Fatal("9.9 s: want a refresh")
	}
	now = at(11)
	if allowed(c, alice, get) {
		t.Fatal("11 s: the first answer is a TTL old")
	}
	c.answer(alice, get, at(11), true)
	now = at(16)
	c.answer(alice, get, at(16), false)
	now = at(16.5)
	c.refreshed(alice, get, at(9.9), true, true)
	if allowed(c, alice, get) {
		t.Fatal("16.5 s: a late answer asked before the refusal brought the right back")
	}

	// A request's allowed review asked before a concurrent request's
	// refusal, and answered after it: turned away too.
	now = at(30)
	c.answer(alice, get, at(30), false)
	c.answer(alice, get, at(29.9), true)
	if allowed(c, alice, get) {
		t.Fatal("an allowed answer asked before a refusal, answered after it, was kept")
	}
	// One asked after the refusal counts.
	c.answer(alice, get, at(30.1), true)
	if !allowed(c, alice, get) {
		t.Fatal("an allowed answer asked after the refusal was not kept")
	}

	// A refresh answered more than a TTL after it was asked is never used.
	now = at(36.5)
	if _, refresh := c.lookup(alice, get); refresh.IsZero() {
		t.Fatal("36.5 s: want a refresh")
	}
	now = at(46)
	c.refreshed(alice, get, at(36.5), true, true)
	if !allowed(c, alice, get) {
		t.Fatal("46 s: the refresh asked at 36.5 s, answered allowed at 46 s, was not kept")
	}
	now = at(46.6)
	if allowed(c, alice, get) {
		t.Fatal("46.6 s: the refresh's answer was used more than a TTL after it was asked")
	}

	// A cache that starts over (full of answers that still count) forgets
	// the refusals it saw: no answer asked before that is kept.
	small := newReviewCache(10 * time.Second)
	small.max = 2
	small.now = func() time.Time { return now }
	other := func(n string) authorizationv1.ResourceAttributes {
		return authorizationv1.ResourceAttributes{Namespace: "ns", Verb: "get", Resource: "secrets", Name: n}
	}
	now = at(50)
	small.answer(alice, get, at(50), false)
	small.answer(alice, other("a"), at(50), false)
	now = at(51)
	small.answer(alice, other("b"), at(51), false) // full: starts over
	small.answer(alice, get, at(49), true)         // asked before the refusal, answered now
	if allowed(small, alice, get) {
		t.Fatal("an answer asked before the cache started over, and before a refusal it forgot, was kept")
	}
}

// A right taken away while its answer is kept: the request past half the
// TTL is still answered from the cache, its background review learns of
// the refusal, and the next request is refused.
func TestAskerForgetsAKeptAnswerItsRefreshRefuses(t *testing.T) {
	var mu sync.Mutex
	allow, reviews := true, 0
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(_ context.Context, _ client.WithWatch, obj client.Object, _ ...client.CreateOption) error {
			mu.Lock()
			defer mu.Unlock()
			reviews++
			obj.(*authorizationv1.SubjectAccessReview).Status.Allowed = allow
			return nil
		},
	}).Build()
	now := time.Unix(1000, 0)
	cache := newReviewCache(10 * time.Second)
	cache.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	alice := authenticationv1.UserInfo{Username: "alice"}
	get := authorizationv1.ResourceAttributes{Verb: "get", Resource: "secrets", Name: "token"}
	ask := func() bool {
		a := &asker{reviews: c, cache: cache, user: alice, ns: "ns", answers: map[authorizationv1.ResourceAttributes]bool{}}
		return a.allowed(context.Background(), get)
	}
	if !ask() || reviews != 1 {
		t.Fatalf("first: want allowed after 1 review, got %d reviews", reviews)
	}
	mu.Lock()
	allow, now = false, now.Add(6*time.Second)
	mu.Unlock()
	if !ask() {
		t.Fatal("past half the TTL: want the kept answer")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := reviews
		mu.Unlock()
		if ok, _ := cache.lookup(alice, get); !ok && n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the background review did not forget the answer (%d reviews)", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if ask() {
		t.Fatal("after the refusal: want refused")
	}
}

// A request's questions are asked at once: a PodSet naming a Secret, a
// ConfigMap and a ServiceAccount has its three reviews under way together,
// and only the question that depends on a refusal (impersonating the
// ServiceAccount, once creating pods is refused) comes after them. The
// answers are the same as asked one by one; a review that cannot be made is
// the field's internal error, asked once.
func TestAccessAsksARequestsQuestionsAtOnce(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	var allow map[string]bool
	var broken map[string]bool
	// Each review waits (up to a second) until expect reviews have
	// arrived, then notes how many are under way with it.
	inFlight, most, expect, arrivals := 0, 0, 0, 0
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(_ context.Context, _ client.WithWatch, obj client.Object, _ ...client.CreateOption) error {
			sar := obj.(*authorizationv1.SubjectAccessReview)
			q := sar.Spec.ResourceAttributes.Verb + " " + sar.Spec.ResourceAttributes.Resource
			mu.Lock()
			inFlight++
			arrivals++
			asked = append(asked, q)
			mu.Unlock()
			for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
				mu.Lock()
				all := arrivals >= expect
				mu.Unlock()
				if all {
					break
				}
			}
			mu.Lock()
			most = max(most, inFlight)
			inFlight--
			mu.Unlock()
			if broken[q] {
				return errors.New("the API server is away")
			}
			sar.Status.Allowed = allow[q]
			return nil
		},
	}).Build()
	reset := func(want int, allowed map[string]bool, failing ...string) {
		mu.Lock()
		defer mu.Unlock()
		asked, most, expect, arrivals, allow, broken = nil, 0, want, 0, allowed, map[string]bool{}
		for _, q := range failing {
			broken[q] = true
		}
	}
	v := validator[*appsv1alpha1.PodSet]{kind: PodSet, gk: PodSet.GVK.GroupKind(), reviews: c, cache: newReviewCache(10 * time.Second)}
	ps := &appsv1alpha1.PodSet{ObjectMeta: metav1.ObjectMeta{Name: "ps", Namespace: "ns"}, Spec: appsv1alpha1.PodSetSpec{Template: corev1.PodTemplateSpec{
		Spec: corev1.PodSpec{ServiceAccountName: "app", Containers: []corev1.Container{{Name: "app", Image: "app",
			// Restricted: nothing but the references to ask about.
			SecurityContext: &corev1.SecurityContext{RunAsNonRoot: new(true), AllowPrivilegeEscalation: new(false),
				Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}, SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Env: []corev1.EnvVar{{Name: "T", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "token"}, Key: "t"}}}}}},
			Volumes: []corev1.Volume{{Name: "c", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}}}}}}}}}
	as := func(user string) context.Context {
		return admission.NewContextWithRequest(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
			Operation: admissionv1.Create, UserInfo: authenticationv1.UserInfo{Username: user}}})
	}
	fields := func(errs field.ErrorList) []string {
		var out []string
		for _, e := range errs {
			out = append(out, fmt.Sprintf("%s %s: %s", e.Type, e.Field, e.Detail))
		}
		return out
	}

	reset(3, map[string]bool{"get secrets": true, "get configmaps": false, "create pods": false, "impersonate serviceaccounts": true})
	errs := v.access(as("alice"), ps, false, nil)
	if most != 3 {
		t.Errorf("want the Secret, ConfigMap and pods questions under way together, at most %d were: %v", most, asked)
	}
	if len(asked) != 4 || asked[3] != "impersonate serviceaccounts" {
		t.Errorf("want impersonation asked once, after the pods question was refused: %v", asked)
	}
	if got := fields(errs); len(got) != 1 || got[0] != "Forbidden spec.template.spec.volumes[0].configMap.name: alice may not get the ConfigMap settings in ns, so may not have kubeforge use it" {
		t.Errorf("want the ConfigMap refused alone, got %q", got)
	}

	// Asked again: the allowed answers are kept, the refused ConfigMap and
	// pods are asked again (together), and the answer is the same.
	reset(2, allow)
	again := v.access(as("alice"), ps, false, nil)
	if !slices.Equal(fields(again), fields(errs)) {
		t.Errorf("asked again: %q, first %q", fields(again), fields(errs))
	}
	if len(asked) != 2 || most != 2 {
		t.Errorf("asked again: want the two refused questions asked again together, got %v (at most %d at once)", asked, most)
	}

	// Impersonation refused too: the ServiceAccount is refused beside the
	// ConfigMap.
	reset(3, map[string]bool{"get secrets": true})
	got := fields(v.access(as("bob"), ps, false, nil))
	want := []string{
		"Forbidden spec.template.spec.serviceAccountName: bob may not create pods in ns or impersonate the ServiceAccount app, so may not have kubeforge run as it",
		"Forbidden spec.template.spec.volumes[0].configMap.name: bob may not get the ConfigMap settings in ns, so may not have kubeforge use it",
	}
	if !slices.Equal(got, want) {
		t.Errorf("impersonation refused: got %q, want %q", got, want)
	}

	// A review the API server does not answer: the field's internal
	// error, asked once, not again one by one.
	reset(3, map[string]bool{"get secrets": true, "create pods": true}, "get configmaps")
	got = fields(v.access(as("carol"), ps, false, nil))
	if len(got) != 1 || !strings.HasPrefix(got[0], "Internal error spec.template.spec.volumes[0].configMap.name: ") ||
		!strings.Contains(got[0], "the API server is away") {
		t.Errorf("a failed review: got %q", got)
	}
	if len(asked) != 3 {
		t.Errorf("a failed review: want each question asked once, got %v", asked)
	}
}
