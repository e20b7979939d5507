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
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
)

func TestReviewCacheKeepsAnAllowedAnswerForItsRequesterAndQuestionUntilTheTTL(t *testing.T) {
	now := time.Unix(1000, 0)
	c := newReviewCache(10 * time.Second)
	c.now = func() time.Time { return now }
	alice := authenticationv1.UserInfo{Username: "alice", UID: "1", Groups: []string{"a", "b"},
		Extra: map[string]authenticationv1.ExtraValue{"scopes": {"x"}}}
	get := authorizationv1.ResourceAttributes{Namespace: "ns", Verb: "get", Resource: "secrets", Name: "token"}

	if c.lookup(alice, get) {
		t.Fatal("an answer nobody kept was found")
	}
	c.keep(alice, get)
	if !c.lookup(alice, get) {
		t.Fatal("the kept answer was not found")
	}
	reordered := alice
	reordered.Groups = []string{"b", "a"}
	if !c.lookup(reordered, get) {
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
		if c.lookup(other, get) {
			t.Errorf("%s shares alice's answer", name)
		}
	}
	for name, attrs := range map[string]authorizationv1.ResourceAttributes{
		"another name":      {Namespace: "ns", Verb: "get", Resource: "secrets", Name: "other"},
		"another namespace": {Namespace: "ns2", Verb: "get", Resource: "secrets", Name: "token"},
		"another verb":      {Namespace: "ns", Verb: "list", Resource: "secrets", Name: "token"},
		"another resource":  {Namespace: "ns", Verb: "get", Resource: "configmaps", Name: "token"},
	} {
		if c.lookup(alice, attrs) {
			t.Errorf("%s shares the answer", name)
		}
	}
	now = now.Add(10 * time.Second)
	if c.lookup(alice, get) {
		t.Error("the answer outlived its TTL")
	}
	if newReviewCache(0) != nil || newReviewCache(0).lookup(alice, get) {
		t.Error("a TTL of 0 keeps answers")
	}
}
