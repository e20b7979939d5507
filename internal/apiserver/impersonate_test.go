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
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// Impersonation cannot carry a credential's extra fields, so admission
// would check what a write names without them: a caller whose credential
// carries one an authoriser may narrow rights by is refused before any
// write; Kubernetes' own (a bound token's pod, a credential's ID) go.
func TestAWriteAsACallerWhoseCredentialCarriesAnExtraKubernetesDidNotSetIsRefused(t *testing.T) {
	made := 0
	s := &Server{ClientFor: func(*User) (client.Client, error) { made++; return fake.NewClientBuilder().Build(), nil }}
	for _, tc := range []struct {
		what    string
		extra   map[string]authorizationv1.ExtraValue
		refused string
	}{
		{"no extra", nil, ""},
		{"a ServiceAccount token bound to a pod", map[string]authorizationv1.ExtraValue{
			"authentication.kubernetes.io/pod-name": {"p"}, "authentication.kubernetes.io/pod-uid": {"u"},
			"authentication.kubernetes.io/credential-id": {"JTI=1"}}, ""},
		{"a scoped token", map[string]authorizationv1.ExtraValue{"scopes.authorization.openshift.io": {"user:info"}}, "scopes.authorization.openshift.io"},
		{"a claim mapped by the authenticator beside Kubernetes' own", map[string]authorizationv1.ExtraValue{
			"authentication.kubernetes.io/credential-id": {"X509SHA256=ab"}, "example.com/tenant": {"a"}}, "example.com/tenant"},
	} {
		before := made
		ctx := context.WithValue(context.Background(), userKey{}, &User{Name: "alice", Groups: []string{"system:authenticated"}, Extra: tc.extra})
		c, err := s.asCaller(ctx)
		if tc.refused == "" {
			if err != nil || c == nil {
				t.Errorf("%s: refused: %v", tc.what, err)
			}
			continue
		}
		var e *Error
		if !errors.As(err, &e) || e.Code != 403 || !strings.Contains(e.Message, tc.refused) {
			t.Errorf("%s: got %v, want a 403 naming %s", tc.what, err, tc.refused)
		}
		if made != before {
			t.Errorf("%s: a client acting as the caller was made", tc.what)
		}
	}
}
