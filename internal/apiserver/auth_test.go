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
	"fmt"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
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

// The caches answer again within the TTL without asking the API server,
// and drop expired answers once they hold many, so memory stays bounded.
func TestAuthCacheIsBounded(t *testing.T) {
	reviews := 0
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(_ context.Context, _ client.WithWatch, obj client.Object, _ ...client.CreateOption) error {
			if tr, ok := obj.(*authenticationv1.TokenReview); ok {
				reviews++
				tr.Status.Authenticated = tr.Spec.Token != "bad"
				tr.Status.Audiences = tr.Spec.Audiences
				tr.Status.User.Username = "u-" + tr.Spec.Token
			}
			return nil
		},
	}).Build()
	a := &Auth{Client: c, TTL: 50 * time.Millisecond}
	ctx := context.Background()
	if _, err := a.Authenticate(ctx, "bad"); err != ErrUnauthenticated {
		t.Fatalf("bad token: %v", err)
	}
	for range 3 {
		if u, err := a.Authenticate(ctx, "good"); err != nil || u.Name != "u-good" {
			t.Fatalf("good token: %v %v", u, err)
		}
	}
	if reviews != 2 {
		t.Fatalf("%d TokenReviews for two tokens within the TTL", reviews)
	}
	for i := range maxCached + 100 {
		_, _ = a.Authenticate(ctx, fmt.Sprint(i))
	}
	time.Sleep(60 * time.Millisecond)
	_, _ = a.Authenticate(ctx, "after")
	if n := a.Cached(); n > 10 {
		t.Fatalf("%d answers still cached after they expired", n)
	}
}
