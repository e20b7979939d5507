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
	"slices"
	"strings"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Writes are made as the caller. The API server then authorises them
// with the caller's RBAC, the admission webhooks see the caller (so a
// Secret the caller may not read is refused, as it is for kubectl), the
// audit log names the caller (as impersonatedUser), and the webhook
// records the caller on the object (proof.CreatedByAnnotation).
//
// The operator holds constrained impersonation (Kubernetes 1.36+, beta,
// on by default): it may impersonate a user only to create, update, patch
// or delete kubernetesclusters and workspaces — not to read a Secret or
// do anything else as them. docs/security.md lists the grants.
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=users;groups;uids,verbs="impersonate:user-info"
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=serviceaccounts,verbs="impersonate:serviceaccount"
// +kubebuilder:rbac:groups=cluster.kubeforge.io,resources=kubernetesclusters,verbs="impersonate-on:user-info:create";"impersonate-on:user-info:update";"impersonate-on:user-info:delete";"impersonate-on:serviceaccount:create";"impersonate-on:serviceaccount:update";"impersonate-on:serviceaccount:delete"
// +kubebuilder:rbac:groups=ide.kubeforge.io,resources=workspaces,verbs="impersonate-on:user-info:create";"impersonate-on:user-info:patch";"impersonate-on:user-info:delete";"impersonate-on:serviceaccount:create";"impersonate-on:serviceaccount:patch";"impersonate-on:serviceaccount:delete"

// ImpersonatingClients returns the Server's ClientFor: a client that
// sends cfg's requests as the given caller. opts must carry the scheme
// and the operator's REST mapper: the caller may not read discovery (the
// operator impersonates only for the writes above), and a client then
// costs no discovery call. The underlying TLS transport is shared
// (client-go caches it by TLS config).
func ImpersonatingClients(cfg *rest.Config, opts client.Options) func(*User) (client.Client, error) {
	return func(u *User) (client.Client, error) {
		if opts.Mapper == nil {
			return nil, errors.New("acting as a caller needs the operator's REST mapper")
		}
		c := rest.CopyConfig(cfg)
		c.Impersonate = u.impersonation()
		hc, err := rest.HTTPClientFor(c)
		if err != nil {
			return nil, err
		}
		o := opts
		o.HTTPClient = hc
		return client.New(c, o)
	}
}

// impersonation is who to send requests as. A ServiceAccount is named
// only by its user name — the API server knows its groups, and
// constrained impersonation takes nothing else for one; any other user
// by name, UID and groups, as the TokenReview described them.
//
// Extra fields are not sent: RBAC cannot grant impersonating every extra
// key short of every resource. The call was first allowed by a
// SubjectAccessReview with the caller's extras (Auth.Authorize), and the
// write must then also be allowed without them; but admission's access
// checks of what the write names (a Secret, a claim) are then asked
// without them too. So a caller whose credential carries extras an
// authoriser may narrow rights by (scopes) is refused (asCaller): only
// Kubernetes' own (authentication.kubernetes.io/…: the pod or node a
// token is bound to, the credential's ID), which RBAC does not read, go.
func (u *User) impersonation() rest.ImpersonationConfig {
	if strings.HasPrefix(u.Name, "system:serviceaccount:") {
		return rest.ImpersonationConfig{UserName: u.Name}
	}
	return rest.ImpersonationConfig{UserName: u.Name, UID: u.UID, Groups: u.Groups}
}

// asCaller returns a client acting as the caller of ctx.
func (s *Server) asCaller(ctx context.Context) (client.Client, error) {
	u, _ := ctx.Value(userKey{}).(*User)
	if u == nil {
		return nil, ErrUnauthenticated
	}
	if k := extraNotCarried(u); k != "" {
		return nil, newError(403, "ExtraNotCarried", "kubeforge's API writes as its callers by impersonation, which cannot carry "+
			"the extra field %q of your credential (it may narrow your rights, and what the write names would be checked without it); "+
			"call with a credential without it", k)
	}
	if s.ClientFor == nil {
		return nil, errors.New("the API server has no ClientFor: it cannot act as its callers")
	}
	c, err := s.ClientFor(u)
	if err != nil {
		return nil, fmt.Errorf("acting as %s: %w", u.Name, err)
	}
	return c, nil
}

// kubernetesExtra is the prefix of the extra fields Kubernetes itself
// sets (a bound token's pod and node, a credential's ID).
const kubernetesExtra = "authentication.kubernetes.io/"

// extraNotCarried is the first extra field of u, in order, that is not
// Kubernetes' own ("" when none).
func extraNotCarried(u *User) string {
	var keys []string
	for k := range u.Extra {
		if !strings.HasPrefix(k, kubernetesExtra) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return ""
	}
	slices.Sort(keys)
	return keys[0]
}

// callerError marks an error the API server gave a request made as the
// caller: it speaks of the caller and their object, so it is passed on
// as it is (a 403 names the caller's own missing permission).
type callerError struct{ err error }

func (e callerError) Error() string { return e.err.Error() }
func (e callerError) Unwrap() error { return e.err }

func asCallerErr(err error) error {
	if err == nil {
		return nil
	}
	return callerError{err}
}
