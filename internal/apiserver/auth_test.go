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

package apiserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kubeforge/kubeforge/internal/scheme"
)

func TestBearerToken(t *testing.T) {
	for header, want := range map[string]string{"Bearer abc": "abc", "bearer  abc ": "abc", "Basic abc": "", "Bearer": "", "": "", "Bearer   ": ""} {
		got, ok := BearerToken(header)
		if got != want || ok != (want != "") {
			t.Errorf("%q: got %q %v", header, got, ok)
		}
	}
}

// reviewer is a client whose TokenReviews accept the tokens valid says
// (user "u-<token>"), counting them in reviews.
func reviewer(reviews *int, valid func(token string) bool) client.Client {
	return fake.NewClientBuilder().WithScheme(scheme.New()).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(_ context.Context, _ client.WithWatch, obj client.Object, _ ...client.CreateOption) error {
			if tr, ok := obj.(*authenticationv1.TokenReview); ok {
				*reviews++
				tr.Status.Authenticated = valid(tr.Spec.Token)
				tr.Status.Audiences = tr.Spec.Audiences
				tr.Status.User.Username = "u-" + tr.Spec.Token
			}
			return nil
		},
	}).Build()
}

// The caches answer again within the TTL without asking the API server,
// and drop expired answers once they hold many, so memory stays bounded.
func TestAuthCacheIsBounded(t *testing.T) {
	reviews := 0
	c := reviewer(&reviews, func(token string) bool { return token != "bad" })
	// A clock of the test's own: the TTL passes when the test says so, not
	// when a loaded machine happens to be slow.
	now := time.Unix(1_800_000_000, 0)
	a := &Auth{Client: c, TTL: time.Minute, clock: func() time.Time { return now }, ReviewBurst: 2 * maxCached}
	ctx := context.Background()
	if _, err := a.Authenticate(ctx, "bad", "a"); err != ErrUnauthenticated {
		t.Fatalf("bad token: %v", err)
	}
	for range 3 {
		if u, err := a.Authenticate(ctx, "good", "a"); err != nil || u.Name != "u-good" {
			t.Fatalf("good token: %v %v", u, err)
		}
	}
	if reviews != 2 {
		t.Fatalf("%d TokenReviews for two tokens within the TTL", reviews)
	}
	for i := range maxCached + 100 {
		_, _ = a.Authenticate(ctx, fmt.Sprint(i), "a")
	}
	if n := a.Cached(); n < maxCached+100 {
		t.Fatalf("%d answers cached, want all %d that are still valid", n, maxCached+100)
	}
	now = now.Add(time.Minute + time.Second)
	_, _ = a.Authenticate(ctx, "after", "a")
	if n := a.Cached(); n > 10 {
		t.Fatalf("%d answers still cached after they expired", n)
	}
}

// Unknown tokens spend their address's budget of TokenReviews: past the
// burst, a guesser gets ErrTooManyReviews and the API server is not asked;
// another address, and a token already known, are not limited.
func TestUnknownTokensAreRateLimitedPerAddress(t *testing.T) {
	reviews := 0
	c := reviewer(&reviews, func(token string) bool { return token == "good" })
	a := &Auth{Client: c, TTL: time.Minute, ReviewsPerSecond: 0.001, ReviewBurst: 5}
	ctx := context.Background()
	if _, err := a.Authenticate(ctx, "good", "10.1.1.1"); err != nil {
		t.Fatal(err)
	}
	limited := 0
	for i := range 50 {
		if _, err := a.Authenticate(ctx, fmt.Sprintf("guess-%d", i), "10.1.1.1"); err == ErrTooManyReviews {
			limited++
		} else if err != ErrUnauthenticated {
			t.Fatalf("guess %d: %v", i, err)
		}
	}
	if reviews != 5 || limited != 46 {
		t.Fatalf("50 guesses from one address after one good token: %d TokenReviews, %d limited; want 5 and 46", reviews, limited)
	}
	if u, err := a.Authenticate(ctx, "good", "10.1.1.1"); err != nil || u.Name != "u-good" {
		t.Fatalf("a known token from the limited address: %v %v", u, err)
	}
	if _, err := a.Authenticate(ctx, "guess-other", "10.2.2.2"); err != ErrUnauthenticated {
		t.Fatalf("another address: %v", err)
	}
	if reviews != 6 {
		t.Fatalf("%d TokenReviews, want 6", reviews)
	}
}

// The table of per-address budgets is bounded without forgetting a budget
// being spent: once it is full of addresses still spending, a new address
// is refused (not every address handed a fresh budget), and when buckets
// have refilled the idle ones make room.
func TestAFullLimiterTableRefusesNewAddressesAndForgetsNoSpentBudget(t *testing.T) {
	reviews := 0
	c := reviewer(&reviews, func(string) bool { return false })
	now := time.Unix(1_800_000_000, 0)
	a := &Auth{Client: c, TTL: time.Minute, ReviewsPerSecond: 0.01, ReviewBurst: 1, clock: func() time.Time { return now }}
	ctx := context.Background()
	if _, err := a.Authenticate(ctx, "guess-0", "10.9.9.9"); err != ErrUnauthenticated {
		t.Fatalf("first guess: %v", err)
	}
	for i := range maxCached {
		_, _ = a.Authenticate(ctx, fmt.Sprintf("g-%d", i), fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255))
	}
	if _, err := a.Authenticate(ctx, "guess-1", "10.9.9.9"); err != ErrTooManyReviews {
		t.Fatalf("the first address after %d others: %v, want its budget still spent", maxCached, err)
	}
	if _, err := a.Authenticate(ctx, "guess-2", "192.0.2.1"); err != ErrTooManyReviews {
		t.Fatalf("a new address with the table full of spending ones: %v", err)
	}
	now = now.Add(101 * time.Second) // 1 token at 0.01/s: every bucket full again
	if _, err := a.Authenticate(ctx, "guess-3", "192.0.2.1"); err != ErrUnauthenticated {
		t.Fatalf("a new address once the others' buckets refilled: %v", err)
	}
}

// reviewing is a client whose SubjectAccessReviews are answered by allow,
// counted in reviews.
func reviewing(reviews *int, allow func(*authorizationv1.SubjectAccessReview) bool) client.Client {
	var mu sync.Mutex // a named request's two reviews are asked at once
	return fake.NewClientBuilder().WithScheme(scheme.New()).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(_ context.Context, _ client.WithWatch, obj client.Object, _ ...client.CreateOption) error {
			if sar, ok := obj.(*authorizationv1.SubjectAccessReview); ok {
				mu.Lock()
				defer mu.Unlock()
				*reviews++
				sar.Status.Allowed = allow(sar)
			}
			return nil
		},
	}).Build()
}

// A named request is allowed by an answer for every name: the first one
// asks both at once, the next names ask nothing while that answer is
// cached. A caller allowed only some names is asked about each, and
// refused the others with the named answer's reason.
func TestAuthorizeTakesAnAnswerForEveryName(t *testing.T) {
	reviews := 0
	c := reviewing(&reviews, func(sar *authorizationv1.SubjectAccessReview) bool {
		switch sar.Spec.User {
		case "alice": // a Role without resourceNames
			return true
		default: // bob: a Role naming "bob" only
			return sar.Spec.ResourceAttributes.Name == "bob"
		}
	})
	a := &Auth{Client: c, TTL: time.Minute}
	ctx := context.Background()
	attrs := func(name string) Attributes {
		return Attributes{Verb: "get", Group: "ide.kubeforge.io", Resource: "workspaces", Namespace: "team-a", Name: name}
	}
	alice, bob := &User{Name: "alice"}, &User{Name: "bob"}
	if err := a.Authorize(ctx, alice, attrs("w-1")); err != nil || reviews != 2 {
		t.Fatalf("alice's first name: %v after %d reviews (want allowed after 2: the name, and every name)", err, reviews)
	}
	for _, name := range []string{"w-2", "w-3"} {
		if err := a.Authorize(ctx, alice, attrs(name)); err != nil || reviews != 2 {
			t.Fatalf("alice's %s: %v after %d reviews (want allowed, no new review)", name, err, reviews)
		}
	}
	if err := a.Authorize(ctx, bob, attrs("bob")); err != nil || reviews != 4 {
		t.Fatalf("bob's own: %v after %d reviews (want allowed after 2 more)", err, reviews)
	}
	err := a.Authorize(ctx, bob, attrs("alice"))
	var f *Forbidden
	if !errors.As(err, &f) || !strings.Contains(f.Reason, "bob may not get workspaces.ide.kubeforge.io") || reviews != 5 {
		t.Fatalf("bob's other name: %v after %d reviews (want refused after 1 more: every name's refusal is cached)", err, reviews)
	}
}

// The named answer decides a named call when both are asked: an authorizer
// in front of RBAC may refuse one name while allowing the namespace.
func TestAuthorizeLetsTheNamedAnswerDecideWhenBothAreAsked(t *testing.T) {
	reviews := 0
	c := reviewing(&reviews, func(sar *authorizationv1.SubjectAccessReview) bool {
		return sar.Spec.ResourceAttributes.Name != "secret-one"
	})
	a := &Auth{Client: c, TTL: time.Minute}
	attrs := Attributes{Verb: "get", Group: "ide.kubeforge.io", Resource: "workspaces", Namespace: "team-a", Name: "secret-one"}
	err := a.Authorize(context.Background(), &User{Name: "carol"}, attrs)
	var f *Forbidden
	if !errors.As(err, &f) || reviews != 2 {
		t.Fatalf("the refused name: %v after %d reviews (want refused after 2: the name, and every name)", err, reviews)
	}
}

// A cached answer is for the whole user the review was asked for: the same
// name and groups with other extra (a token scoped to less) is asked again,
// not answered from the first one's cache.
func TestAuthorizeCachesPerUserExtra(t *testing.T) {
	reviews := 0
	c := reviewing(&reviews, func(sar *authorizationv1.SubjectAccessReview) bool {
		_, scoped := sar.Spec.Extra["scopes.example.com"]
		return !scoped
	})
	a := &Auth{Client: c, TTL: time.Minute}
	ctx := context.Background()
	attrs := Attributes{Verb: "get", Group: "ide.kubeforge.io", Resource: "workspaces", Namespace: "team-a", Name: "alice"}
	full := &User{Name: "alice", Groups: []string{"system:authenticated"}}
	scoped := &User{Name: "alice", Groups: []string{"system:authenticated"},
		Extra: map[string]authorizationv1.ExtraValue{"scopes.example.com": {"read-nothing"}}}
	if err := a.Authorize(ctx, full, attrs); err != nil {
		t.Fatalf("the full user: %v", err)
	}
	if err := a.Authorize(ctx, scoped, attrs); err == nil {
		t.Fatal("the scoped user was answered from the full user's cached answer")
	}
	if err := a.Authorize(ctx, full, attrs); err != nil || reviews != 4 {
		t.Fatalf("the full user again: %v, %d reviews (want 4: the name and every name, per user)", err, reviews)
	}
}

// A namespace-scoped kubeforge answers a request for a namespace it does
// not serve with NotFound naming why, before any review is asked (its
// own ServiceAccount holds no Role there to act with).
func TestAuthorizeRefusesNamespacesNotServed(t *testing.T) {
	reviews := 0
	c := reviewing(&reviews, func(*authorizationv1.SubjectAccessReview) bool { return true })
	a := &Auth{Client: c, TTL: time.Minute, Serves: func(ns string) bool { return ns == "team-a" }}
	u := &User{Name: "alice"}
	attrs := Attributes{Verb: "get", Group: "ide.kubeforge.io", Resource: "workspaces", Namespace: "team-b", Name: "alice"}
	err := a.Authorize(context.Background(), u, attrs)
	var e *Error
	if !errors.As(err, &e) || e.Code != 404 || e.Reason != "NamespaceNotServed" || !strings.Contains(e.Message, `"team-b"`) {
		t.Fatalf("team-b: got %v, want a 404 NamespaceNotServed naming team-b", err)
	}
	if reviews != 0 {
		t.Fatalf("%d reviews asked for a namespace not served", reviews)
	}
	attrs.Namespace = "team-a"
	if err := a.Authorize(context.Background(), u, attrs); err != nil || reviews != 2 {
		t.Fatalf("team-a: %v, %d reviews (want allowed after two: the name, and every name)", err, reviews)
	}
}
