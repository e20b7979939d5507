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
// background (lookup's refresh), once: allowed, it is kept a TTL from when
// it was asked; refused, it is dropped. So a requester who keeps using
// kubeforge does not wait for a review every TTL on the request's path,
// and no answer is used once a TTL has passed since it was asked.
type reviewCache struct {
	ttl time.Duration
	max int
	now func() time.Time

	mu         sync.Mutex
	allowed    map[[32]byte]time.Time // until when
	refreshing map[[32]byte]time.Time // asked when
}

func newReviewCache(ttl time.Duration) *reviewCache {
	if ttl <= 0 {
		return nil
	}
	return &reviewCache{ttl: ttl, max: 10000, now: time.Now, allowed: map[[32]byte]time.Time{}, refreshing: map[[32]byte]time.Time{}}
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
		if _, asking := c.refreshing[k]; !asking && until.Sub(now) < c.ttl/2 {
			c.refreshing[k] = now
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

// forget drops the answer for the question, and whatever a background
// review asked before brings: it was refused since.
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

// refreshed takes the answer of the background review lookup asked for
// (answered false: the review failed, and the kept answer stands until its
// TTL). Allowed keeps it a TTL from when the review was asked; refused
// drops it. An answer for what is no longer kept — expired, or refused on
// a request's path meanwhile — is dropped: a late answer never brings back
// what was taken away.
func (c *reviewCache) refreshed(user authenticationv1.UserInfo, attrs authorizationv1.ResourceAttributes, allowed, answered bool) {
	if c == nil {
		return
	}
	k := reviewKey(user, attrs)
	c.mu.Lock()
	defer c.mu.Unlock()
	asked, asking := c.refreshing[k]
	delete(c.refreshing, k)
	if _, kept := c.allowed[k]; !asking || !kept || !answered {
		return
	}
	if allowed {
		c.allowed[k] = asked.Add(c.ttl)
	} else {
		delete(c.allowed, k)
	}
}

// now is the cache's clock (time.Now for a nil cache).
func (c *reviewCache) clock() time.Time {
	if c == nil {
		return time.Now()
	}
	return c.now()
}

// keep records an allowed answer to a review asked at asked.
func (c *reviewCache) keep(user authenticationv1.UserInfo, attrs authorizationv1.ResourceAttributes, asked time.Time) {
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
	c.allowed[k] = asked.Add(c.ttl)
	delete(c.refreshing, k)
}
