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
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ErrUnauthenticated is a missing, malformed or refused token.
var ErrUnauthenticated = errors.New("unauthenticated")

// ErrTooManyReviews is a caller that presented more unknown tokens than
// Auth.ReviewsPerSecond allows: answered 429 without a TokenReview.
var ErrTooManyReviews = errors.New("too many unknown tokens from this address; retry later")

// Forbidden says why RBAC refused a call.
type Forbidden struct{ Reason string }

func (f *Forbidden) Error() string { return f.Reason }

// User is who a token belongs to, as the TokenReview said.
type User struct {
	Name   string
	UID    string
	Groups []string
	Extra  map[string]authorizationv1.ExtraValue
}

// Attributes are what a call stands for, as RBAC names it.
type Attributes struct {
	Verb, Group, Resource, Subresource, Namespace, Name string
}

func (a Attributes) String() string {
	r := a.Resource
	if a.Subresource != "" {
		r += "/" + a.Subresource
	}
	if a.Group != "" {
		r += "." + a.Group
	}
	return fmt.Sprintf("%s %s in namespace %q", a.Verb, r, a.Namespace)
}

// Auth checks tokens with TokenReviews and calls with
// SubjectAccessReviews, caching each answer for TTL.
type Auth struct {
	Client client.Client
	TTL    time.Duration
	// Audience is the audience a token must be issued for
	// (kubectl create token SA --audience <Audience>): a token meant for
	// the Kubernetes API alone, or another service, is refused, so one
	// that leaks from elsewhere does not open this API.
	Audience string
	// ReviewsPerSecond and ReviewBurst bound the TokenReviews asked for
	// tokens the cache does not know, per caller address: a caller trying
	// random tokens gets 429s instead of spending the API server's
	// TokenReview budget. A known token (cached for TTL) costs nothing and
	// is never limited. Zero means DefaultReviewsPerSecond and
	// DefaultReviewBurst.
	ReviewsPerSecond rate.Limit
	ReviewBurst      int
	// Serves, when set, tells the namespaces this kubeforge serves
	// (engine.Scope): a request for any other is answered NotFound before
	// any review, naming the reason.
	Serves func(namespace string) bool

	// clock is time.Now unless a test sets it.
	clock func() time.Time

	mu       sync.Mutex
	users    map[string]cached[*User]
	allowed  map[string]cached[string] // "" allowed, else the reason it is not
	limiters map[string]*rate.Limiter
}

// The defaults of Auth.ReviewsPerSecond and Auth.ReviewBurst: plenty for
// programs whose tokens rotate, little for a guesser.
const (
	DefaultReviewsPerSecond = 2
	DefaultReviewBurst      = 20
)

// mayReview takes one TokenReview from the budget of the address from.
func (a *Auth) mayReview(from string, now time.Time) bool {
	perSecond, burst := a.ReviewsPerSecond, a.ReviewBurst
	if perSecond == 0 {
		perSecond = DefaultReviewsPerSecond
	}
	if burst == 0 {
		burst = DefaultReviewBurst
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.limiters == nil {
		a.limiters = map[string]*rate.Limiter{}
	}
	l, ok := a.limiters[from]
	if !ok {
		if len(a.limiters) >= maxCached {
			// Bounded without forgetting a spent budget: an address whose
			// bucket is full again is no different from a new one and may
			// go; while every one remembered is still spending, a new
			// address waits (its known tokens are not limited), rather than
			// every address getting a fresh budget.
			for k, l := range a.limiters {
				if l.TokensAt(now) >= float64(burst) {
					delete(a.limiters, k)
				}
			}
			if len(a.limiters) >= maxCached {
				return false
			}
		}
		l = rate.NewLimiter(perSecond, burst)
		a.limiters[from] = l
	}
	return l.AllowN(now, 1)
}

type cached[T any] struct {
	v       T
	err     error
	expires time.Time
}

func tokenKey(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// DefaultAudience is the audience the API's tokens are issued for unless
// --api-token-audience says otherwise.
const DefaultAudience = "kubeforge"

func (a *Auth) audience() string {
	if a.Audience == "" {
		return DefaultAudience
	}
	return a.Audience
}

// BearerToken takes the token out of an Authorization header value.
func BearerToken(header string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return "", false
	}
	return strings.TrimSpace(token), true
}

// Authenticate returns the user of a token, or ErrUnauthenticated; from
// is the caller's address (host without port), whose budget of
// TokenReviews an unknown token spends (ErrTooManyReviews when spent).
func (a *Auth) Authenticate(ctx context.Context, token, from string) (*User, error) {
	if token == "" {
		return nil, ErrUnauthenticated
	}
	key := tokenKey(token)
	now := a.now()
	a.mu.Lock()
	if c, ok := a.users[key]; ok && now.Before(c.expires) {
		a.mu.Unlock()
		return c.v, c.err
	}
	a.mu.Unlock()
	if !a.mayReview(from, now) {
		return nil, ErrTooManyReviews
	}

	review := &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token, Audiences: []string{a.audience()}}}
	if err := a.Client.Create(ctx, review); err != nil {
		return nil, fmt.Errorf("reviewing the token: %w", err) // not cached: the API server may be back soon
	}
	var u *User
	err := ErrUnauthenticated
	if review.Status.Authenticated && slices.Contains(review.Status.Audiences, a.audience()) {
		u = &User{Name: review.Status.User.Username, UID: review.Status.User.UID, Groups: review.Status.User.Groups, Extra: map[string]authorizationv1.ExtraValue{}}
		for k, v := range review.Status.User.Extra {
			u.Extra[k] = authorizationv1.ExtraValue(v)
		}
		err = nil
	}
	a.mu.Lock()
	if a.users == nil {
		a.users = map[string]cached[*User]{}
	}
	prune(a.users, now)
	a.users[key] = cached[*User]{v: u, err: err, expires: now.Add(a.TTL)}
	a.mu.Unlock()
	return u, err
}

// Authorize returns nil when RBAC lets the user do attrs, else a
// *Forbidden with the reason. A named request is also allowed by an
// answer that allows every name (reviewed at the same time, cached like
// any answer).
func (a *Auth) Authorize(ctx context.Context, u *User, attrs Attributes) error {
	if attrs.Namespace != "" && a.Serves != nil && !a.Serves(attrs.Namespace) {
		return newError(404, "NamespaceNotServed", "namespace %q is not one this kubeforge serves", attrs.Namespace)
	}
	now := a.now()
	key := reviewKey(u, attrs)
	if reason, ok := a.answer(key, now); ok {
		return forbidden(reason)
	}
	if attrs.Name == "" {
		reason, err := a.review(ctx, u, attrs, key, now)
		if err != nil {
			return err
		}
		return forbidden(reason)
	}
	// A named request is allowed when every name is known to be (a review
	// without a name asks about all of them, and RBAC allows that only
	// when it allows each): once a caller's answer for the whole
	// namespace is known to allow, a new name — each Workspace a
	// create-and-wait makes — costs no review. Not known yet, it is asked
	// beside the named review, for the next name; the named answer decides
	// this call (an authorizer in front of RBAC may refuse one name while
	// allowing the namespace), the other only when the named review failed.
	all := attrs
	all.Name = ""
	allKey := reviewKey(u, all)
	reason, known := a.answer(allKey, now)
	if known && reason == "" {
		return nil
	}
	allAnswer := make(chan string, 1)
	if !known {
		go func() {
			r, err := a.review(ctx, u, all, allKey, now)
			if err != nil {
				r = "not known"
			}
			allAnswer <- r
		}()
	} else {
		allAnswer <- reason
	}
	named, err := a.review(ctx, u, attrs, key, now)
	everyName := <-allAnswer // asked with this call's context: waited for
	if err == nil {
		return forbidden(named)
	}
	if everyName == "" {
		return nil
	}
	return err
}

// reviewKey is the cache key of an answer: every part of the user the
// review is asked for is in it (answers for the same name with other
// groups or extra, a scope or a node binding, are other answers; fmt
// prints a map's keys sorted), and every attribute, each by name —
// Attributes' String leaves out the object's name, so a key made with it
// answered a request for one name from the answer for another.
func reviewKey(u *User, attrs Attributes) string {
	return fmt.Sprintf("%s\x00%s\x00%q\x00%q\x00%q", u.Name, u.UID, u.Groups, u.Extra,
		[]string{attrs.Verb, attrs.Group, attrs.Resource, attrs.Subresource, attrs.Namespace, attrs.Name})
}

// answer is the cached answer for key: "" allowed, else why not.
func (a *Auth) answer(key string, now time.Time) (string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if c, ok := a.allowed[key]; ok && now.Before(c.expires) {
		return c.v, true
	}
	return "", false
}

// review asks the API server whether u may do attrs, and caches the answer
// under key.
func (a *Auth) review(ctx context.Context, u *User, attrs Attributes, key string, now time.Time) (string, error) {
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: u.Name, UID: u.UID, Groups: u.Groups, Extra: u.Extra,
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Verb: attrs.Verb, Group: attrs.Group, Resource: attrs.Resource, Subresource: attrs.Subresource,
			Namespace: attrs.Namespace, Name: attrs.Name,
		},
	}}
	if err := a.Client.Create(ctx, sar); err != nil {
		return "", fmt.Errorf("reviewing access: %w", err)
	}
	reason := ""
	if !sar.Status.Allowed {
		reason = fmt.Sprintf("%s may not %s", u.Name, attrs)
		if sar.Status.Reason != "" {
			reason += ": " + sar.Status.Reason
		}
	}
	a.mu.Lock()
	if a.allowed == nil {
		a.allowed = map[string]cached[string]{}
	}
	prune(a.allowed, now)
	a.allowed[key] = cached[string]{v: reason, expires: now.Add(a.TTL)}
	a.mu.Unlock()
	return reason, nil
}

func (a *Auth) now() time.Time {
	if a.clock != nil {
		return a.clock()
	}
	return time.Now()
}

// maxCached bounds each cache: past it, expired answers are dropped, so
// many callers over a long time do not grow the manager's memory.
const maxCached = 4096

func prune[T any](m map[string]cached[T], now time.Time) {
	if len(m) < maxCached {
		return
	}
	for k, c := range m {
		if !now.Before(c.expires) {
			delete(m, k)
		}
	}
}

// Cached is how many answers the caches hold, for tests.
func (a *Auth) Cached() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.users) + len(a.allowed)
}

func forbidden(reason string) error {
	if reason == "" {
		return nil
	}
	return &Forbidden{Reason: reason}
}
