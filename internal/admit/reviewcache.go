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
// An answer past half its TTL that is used again is asked again in the
// background (lookup's refresh), once: the allowed answer renews it, a
// refusal forgets it. So a requester who keeps using kubeforge does not
// wait for a review every TTL on the request's path, and an answer is
// still never used once it is a TTL old.
type reviewCache struct {
	ttl time.Duration
	max int
	now func() time.Time

	mu         sync.Mutex
	allowed    map[[32]byte]time.Time // until when
	refreshing map[[32]byte]bool
}

func newReviewCache(ttl time.Duration) *reviewCache {
	if ttl <= 0 {
		return nil
	}
	return &reviewCache{ttl: ttl, max: 10000, now: time.Now, allowed: map[[32]byte]time.Time{}, refreshing: map[[32]byte]bool{}}
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
// past half its TTL, and nobody is asking yet) and then keep or forget it.
func (c *reviewCache) lookup(user authenticationv1.UserInfo, attrs authorizationv1.ResourceAttributes) (allowed, refresh bool) {
	if c == nil {
		return false, false
	}
	k := reviewKey(user, attrs)
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	until, ok := c.allowed[k]
	if ok && now.Before(until) {
		if until.Sub(now) < c.ttl/2 && !c.refreshing[k] {
			c.refreshing[k] = true
			return true, true
		}
		return true, false
	}
	if ok {
		delete(c.allowed, k)
		delete(c.refreshing, k)
	}
	return false, false
}

// forget drops the answer for the question: asked again, it was refused.
func (c *reviewCache) forget(user authenticationv1.UserInfo, attrs authorizationv1.ResourceAttributes) {
	if c == nil {
		return
	}
	k := reviewKey(user, attrs)
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.allowed, k)
	delete(c.refreshing, k)
}

// refreshed ends a background ask that got no answer: the kept answer
// stands until its TTL, and the next use past half of it asks again.
func (c *reviewCache) refreshed(user authenticationv1.UserInfo, attrs authorizationv1.ResourceAttributes) {
	if c == nil {
		return
	}
	k := reviewKey(user, attrs)
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.refreshing, k)
}

// keep records an allowed answer.
func (c *reviewCache) keep(user authenticationv1.UserInfo, attrs authorizationv1.ResourceAttributes) {
	if c == nil {
		return
	}
	k := reviewKey(user, attrs)
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.allowed) >= c.max {
		for k, until := range c.allowed {
			if !now.Before(until) {
				delete(c.allowed, k)
			}
		}
		if len(c.allowed) >= c.max {
			clear(c.allowed) // all still fresh: start over rather than grow
		}
		for k := range c.refreshing {
			if _, ok := c.allowed[k]; !ok {
				delete(c.refreshing, k)
			}
		}
	}
	c.allowed[k] = now.Add(c.ttl)
	delete(c.refreshing, k)
}
