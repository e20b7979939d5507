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
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// What a caller is told never carries the cluster's internal addresses or
// the operator's identity; what speaks of the caller's own request does
// reach them.
func TestErrorsDoNotLeakInternals(t *testing.T) {
	kc := schema.GroupResource{Group: "cluster.kubeforge.io", Resource: "kubernetesclusters"}
	const operator = "system:serviceaccount:kubeforge-system:kubeforge-controller-manager"
	webhookDown := apierrors.NewInternalError(errors.New(`failed calling webhook "vkubernetescluster.kb.io": Post "https://kubeforge-webhook-service.kubeforge-system.svc:443/validate": dial tcp 10.96.12.7:443: connect: connection refused`))
	for name, tc := range map[string]struct {
		err      error
		code     int
		hidden   []string
		reaching string
	}{
		"a webhook that cannot be reached": {webhookDown, http.StatusInternalServerError, []string{"10.96.12.7", "kubeforge-system.svc"}, "error id"},
		"a connection refused":             {fmt.Errorf("listing pods: %w", errors.New("dial tcp 10.96.0.1:443: connect: connection refused")), http.StatusInternalServerError, []string{"10.96.0.1"}, "error id"},
		"the operator refused":             {apierrors.NewForbidden(kc, "prod", fmt.Errorf("User %q cannot get resource", operator)), http.StatusInternalServerError, []string{operator}, "error id"},
		"the caller refused":               {asCallerErr(apierrors.NewForbidden(kc, "prod", errors.New(`User "alice" cannot create resource`))), http.StatusForbidden, nil, "alice"},
		"a missing object":                 {apierrors.NewNotFound(kc, "prod"), http.StatusNotFound, nil, `"prod" not found`},
		"too many unknown tokens":          {ErrTooManyReviews, http.StatusTooManyRequests, nil, "retry later"},
	} {
		e := toError(tc.err)
		if e.Code != tc.code || !strings.Contains(e.Message, tc.reaching) {
			t.Errorf("%s: %d %q, want %d and a message with %q", name, e.Code, e.Message, tc.code, tc.reaching)
		}
		g := status.Convert(grpcError(tc.err)).Message()
		for _, h := range tc.hidden {
			if strings.Contains(e.Message, h) || strings.Contains(g, h) {
				t.Errorf("%s: %q reaches the caller: %q / %q", name, h, e.Message, g)
			}
		}
	}
	if c := status.Code(grpcError(ErrTooManyReviews)); c != codes.ResourceExhausted {
		t.Errorf("too many unknown tokens over gRPC: %v", c)
	}
}

// A caller holds at most max slots; a slot given back is free again, and
// one caller's slots do not limit another's.
func TestSlotsPerCaller(t *testing.T) {
	var sl slots
	alice, bob := &User{Name: "alice"}, &User{Name: "bob"}
	var releases []func()
	for range 3 {
		r, err := sl.acquire(alice, 3, 100, "log streams")
		if err != nil {
			t.Fatal(err)
		}
		releases = append(releases, r)
	}
	_, err := sl.acquire(alice, 3, 100, "log streams")
	var e *Error
	if !errors.As(err, &e) || e.Code != http.StatusTooManyRequests || !strings.Contains(e.Message, "alice has 3 log streams open") {
		t.Fatalf("the fourth: %v", err)
	}
	if _, err := sl.acquire(bob, 3, 100, "log streams"); err != nil {
		t.Fatalf("bob: %v", err)
	}
	releases[0]()
	if _, err := sl.acquire(alice, 3, 100, "log streams"); err != nil {
		t.Fatalf("after one ended: %v", err)
	}
}

// Many callers — ServiceAccounts minted by a namespace admin — each under
// their own limit cannot hold more than the server's total between them.
func TestSlotsCapEveryCallerTogetherBesideEachOne(t *testing.T) {
	var sl slots
	const perCaller, total = 2, 5
	var releases []func()
	refused := func(err error, want string) {
		t.Helper()
		var e *Error
		if !errors.As(err, &e) || e.Code != http.StatusTooManyRequests || !strings.Contains(e.Message, want) {
			t.Fatalf("got %v, want a 429 saying %q", err, want)
		}
	}
	for i := range total {
		release, err := sl.acquire(&User{Name: fmt.Sprintf("system:serviceaccount:t:sa-%d", i)}, perCaller, total, "log streams")
		if err != nil {
			t.Fatalf("caller %d of %d: %v", i, total, err)
		}
		releases = append(releases, release)
	}
	_, err := sl.acquire(&User{Name: "system:serviceaccount:t:one-more"}, perCaller, total, "log streams")
	refused(err, "5 log streams are open, the most the server holds")
	releases[0]()
	release, err := sl.acquire(&User{Name: "system:serviceaccount:t:one-more"}, perCaller, total, "log streams")
	if err != nil {
		t.Fatalf("a slot was given back, yet: %v", err)
	}
	release()
}
