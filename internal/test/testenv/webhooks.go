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

package testenv

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"

	dto "github.com/prometheus/client_model/go"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/kubeforge/kubeforge/internal/admit"
)

// StartWebhooks runs a manager that serves the webhooks that setups
// register, where the API server of an Env started with Webhooks calls
// them, and returns once the server accepts TLS connections. The manager
// stops when ctx ends.
func (e *Env) StartWebhooks(ctx context.Context, setups ...func(ctrl.Manager, admit.Options) error) error {
	wio := &e.WebhookInstallOptions
	mgr, err := e.NewManager(ctrl.Options{
		WebhookServer: admit.NewWebhookServer(webhook.Options{
			Host: wio.LocalServingHost, Port: wio.LocalServingPort, CertDir: wio.LocalServingCertDir,
		}),
	})
	if err != nil {
		return err
	}
	for _, setup := range setups {
		if err := setup(mgr, admit.Options{Proof: e.Proof}); err != nil {
			return err
		}
	}
	errc := make(chan error, 1)
	go func() { errc <- mgr.Start(ctx) }()

	addr := net.JoinHostPort(wio.LocalServingHost, fmt.Sprint(wio.LocalServingPort))
	deadline := time.Now().Add(30 * time.Second)
	for {
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: time.Second}, "tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // test only: is the server up?
		if err == nil {
			return conn.Close()
		}
		select {
		case err := <-errc:
			return fmt.Errorf("webhook manager stopped: %w", err)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("webhook server at %s did not come up: %w", addr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Causes returns the field paths of an Invalid error.
func Causes(err error) []string {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return nil
	}
	var fields []string
	for _, c := range status.Status().Details.Causes {
		fields = append(fields, c.Field)
	}
	return fields
}

// WebhookRequests reads controller-runtime's count of the admission
// requests served on a path.
func WebhookRequests(path string) (float64, error) {
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		return 0, err
	}
	total := 0.0
	for _, f := range families {
		if f.GetName() != "controller_runtime_webhook_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			if labelValue(m, "webhook") == path {
				total += m.GetCounter().GetValue()
			}
		}
	}
	return total, nil
}

func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// As returns a client that acts as user (impersonated), with the rules
// given to that user in namespace ns by a Role and RoleBinding named after
// the user (one call per user), so that a spec can try what a user with exactly those rights
// may do.
func (e *Env) As(ctx context.Context, user, ns string, rules ...rbacv1.PolicyRule) (client.Client, error) {
	name := "as-" + user
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Rules: rules}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}}
	for _, obj := range []client.Object{role, binding} {
		if err := e.Client.Create(ctx, obj); err != nil {
			return nil, fmt.Errorf("giving %s its rights (one user per spec): %w", user, err)
		}
	}
	if err := e.Granted(ctx, user, ns, rules...); err != nil {
		return nil, err
	}
	cfg := rest.CopyConfig(e.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	return client.New(cfg, client.Options{Scheme: e.Scheme})
}

// Granted waits until the API server's RBAC authorizer, which learns of
// a new Role or RoleBinding from its own watch a moment after it is
// written, grants user each verb of rules in namespace ns (each rule's
// first group, resource and name): a request sent before then is refused.
func (e *Env) Granted(ctx context.Context, user, ns string, rules ...rbacv1.PolicyRule) error {
	for _, r := range rules {
		for _, verb := range r.Verbs {
			if len(r.Resources) == 0 {
				continue
			}
			attrs := &authorizationv1.ResourceAttributes{Namespace: ns, Verb: verb, Resource: r.Resources[0]}
			if len(r.APIGroups) > 0 {
				attrs.Group = r.APIGroups[0]
			}
			if len(r.ResourceNames) > 0 {
				attrs.Name = r.ResourceNames[0]
			}
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
				sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: user, ResourceAttributes: attrs}}
				if err := e.Client.Create(ctx, sar); err != nil {
					return err
				}
				if sar.Status.Allowed {
					break
				}
				if time.Now().After(deadline) {
					return fmt.Errorf("RBAC does not grant %s %+v after 30s", user, attrs)
				}
			}
		}
	}
	return nil
}

// WarningReasons lists the reasons of the Warning events in namespace ns
// about the object named name: what a spec waits for to see that the
// operator said something was wrong.
func WarningReasons(ctx context.Context, c client.Reader, ns, name string) ([]string, error) {
	list := &eventsv1.EventList{}
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	var reasons []string
	for _, e := range list.Items {
		if e.Regarding.Name == name && e.Type == corev1.EventTypeWarning {
			reasons = append(reasons, e.Reason)
		}
	}
	return reasons, nil
}
