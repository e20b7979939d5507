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
	"crypto/sha256"
	"encoding/binary"
	"slices"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
)

// DefaultReviewCacheTTL is how long the webhooks keep an allowed answer of a
// SubjectAccessReview (the manager's --access-review-cache-ttl): the same
// requester asking kubeforge to use the same object again within it is
// not asked about again. A refusal is never kept, so a right granted
// counts at once; a right taken away counts within the TTL — as the API
// server's own webhook authoriser caches its answers (5 minutes by
// default), much shorter.
const DefaultReviewCacheTTL = 10 * time.Second

// reviewCache keeps allowed answers by requester and question. The
// requester is all the API server authenticated: name, UID, groups and
// extra, so two requests share an answer only when the API server would
// have authorised them as one.
//
// Every answer counts from when its review was asked, whenever it comes
// back: an allowed one is used until a TTL after that, and a refusal drops
// every allowed answer asked before it and turns away one asked before it
// that comes back later. So answers coming back out of order — a slow
// review, a background refresh — never bring back a right refused since,
// and none is used once a TTL has passed since it was asked.
//
// An answer past half its TTL that is used again is asked again in the
// background (lookup's refresh), once at a time. So a requester who keeps
// using kubeforge does not wait for a review every TTL on the request's
// path.
type reviewCache struct {
	ttl time.Duration
	max int
	now func() time.Time

	mu      sync.Mutex
	entries map[[32]byte]*reviewEntry
	// floor: answers asked before it were asked before the cache last
	// started over, and forgot the refusals it had seen; none is kept.
	floor time.Time
}

// reviewEntry is what is known of one question: when the last allowed
// answer kept and the last refusal were asked (zero: none), and whether a
// background review is under way.
type reviewEntry struct {
	allowedAt, refusedAt time.Time
	// refreshAsked: when the background review under way was asked (zero:
	// none); only its own answer ends it.
	refreshAsked time.Time
}

func newReviewCache(ttl time.Duration) *reviewCache {
	if ttl <= 0 {
		return nil
	}
	return &reviewCache{ttl: ttl, max: 10000, now: time.Now, entries: map[[32]byte]*reviewEntry{}}
}

// key digests user and attrs; every field is written with its length, so
// no two different questions share a key.
func reviewKey(user authenticationv1.UserInfo, attrs authorizationv1.ResourceAttributes) [32]byte {
	h := sha256.New()
	count := func(n int) {
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], uint64(n))
		h.Write(b[:])
	}
	field := func(s string) {
		count(len(s))
		h.Write([]byte(s))
	}
	field(user.Username)
	field(user.UID)
	groups := slices.Clone(user.Groups)
	slices.Sort(groups)
	count(len(groups))
	for _, g := range groups {
		field(g)
	}
	keys := make([]string, 0, len(user.Extra))
	for k := range user.Extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	count(len(keys))
	for _, k := range keys {
		field(k)
		vs := slices.Clone(user.Extra[k])
		slices.Sort(vs)
		count(len(vs))
		for _, v := range vs {
			field(v)
		}
	}
	for _, s := range []string{attrs.Namespace, attrs.Verb, attrs.Group, attrs.Version, attrs.Resource, attrs.Subresource, attrs.Name} {
		field(s)
	}
	var k [32]byte
	h.Sum(k[:0])
	return k
}

// lookup reports whether an allowed answer for the question is kept, and
// whether the caller is to ask it again in the background (the answer is
// past half its TTL, and nobody is asking yet): then refresh is the time
// it is asked at, to give refreshed with its answer.
func (c *reviewCache) lookup(user authenticationv1.UserInfo, attrs authorizationv1.ResourceAttributes) (allowed bool, refresh time.Time) {
	if c == nil {
		return false, time.Time{}
	}
	k := reviewKey(user, attrs)
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	if !ok {
		return false, time.Time{}
	}
	if !e.allowedAt.IsZero() && now.Before(e.allowedAt.Add(c.ttl)) {
		if e.refreshAsked.IsZero() && now.Sub(e.allowedAt) > c.ttl/2 {
			e.refreshAsked = now
			return true, now
		}
		return true, time.Time{}
	}
	if c.stale(e, now) {
		delete(c.entries, k)
	}
	return false, time.Time{}
}

// stale: nothing in e counts any more.
func (c *reviewCache) stale(e *reviewEntry, now time.Time) bool {
	return e.refreshAsked.IsZero() && !now.Before(e.allowedAt.Add(c.ttl)) && !now.Before(e.refusedAt.Add(c.ttl))
}

// answer records the answer to a review of the question asked at asked.
func (c *reviewCache) answer(user authenticationv1.UserInfo, attrs authorizationv1.ResourceAttributes, asked time.Time, allowed bool) {
	if c == nil {
		return
	}
	k := reviewKey(user, attrs)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.answerLocked(k, asked, allowed)
}

func (c *reviewCache) answerLocked(k [32]byte, asked time.Time, allowed bool) {
	e, ok := c.entries[k]
	if !ok {
		if len(c.entries) >= c.max {
			now := c.now()
			for k, e := range c.entries {
				if c.stale(e, now) {
					delete(c.entries, k)
				}
			}
			if len(c.entries) >= c.max {
				// All still counting: start over rather than grow, and keep
				// no answer asked before, whose refusals are forgotten.
				clear(c.entries)
				c.floor = now
			}
		}
		e = &reviewEntry{}
		c.entries[k] = e
	}
	if !allowed {
		if asked.After(e.refusedAt) {
			e.refusedAt = asked
		}
		if !e.allowedAt.After(asked) {
			e.allowedAt = time.Time{}
		}
		return
	}
	if asked.After(e.refusedAt) && asked.After(e.allowedAt) && asked.After(c.floor) {
		e.allowedAt = asked
	}
}

// refreshed ends the background review lookup asked for, asked at asked;
// answered false: it failed, and the kept answer stands until its TTL.
func (c *reviewCache) refreshed(user authenticationv1.UserInfo, attrs authorizationv1.ResourceAttributes, asked time.Time, allowed, answered bool) {
	if c == nil {
		return
	}
	k := reviewKey(user, attrs)
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[k]; ok && e.refreshAsked.Equal(asked) {
		e.refreshAsked = time.Time{}
	}
	if answered {
		c.answerLocked(k, asked, allowed)
	}
}

// now is the cache's clock (time.Now for a nil cache).
func (c *reviewCache) clock() time.Time {
	if c == nil {
		return time.Now()
	}
	return c.now()
}
