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

package workspace

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/engine"
	"github.com/kubeforge/kubeforge/internal/secret"
)

func workspace(mutate func(*idev1alpha1.Workspace)) *idev1alpha1.Workspace {
	ws := &idev1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "alice", Namespace: "dev"}}
	ws.Spec.User = "alice"
	if mutate != nil {
		mutate(ws)
	}
	idev1alpha1.DefaultWorkspace(ws) // the builders get what admit.Prepare gives them
	return ws
}

func TestDesiredObjects(t *testing.T) {
	stopped := false
	cases := []struct {
		name        string
		ws          *idev1alpha1.Workspace
		certManager bool
		want        []string
	}{
		{"a started workspace has its volume and its NetworkPolicy (before the Pod: never unfenced), its password, then its Pod (what the user waits for), then its Service", workspace(nil), true,
			[]string{"PersistentVolumeClaim/alice-home", "NetworkPolicy/alice", "Secret/alice-auth", "Pod/alice", "Service/alice"}},
		{"a stopped workspace keeps its volume, password, Service and NetworkPolicy", workspace(func(ws *idev1alpha1.Workspace) { ws.Spec.Started = &stopped }), true,
			[]string{"PersistentVolumeClaim/alice-home", "NetworkPolicy/alice", "Secret/alice-auth", "Service/alice"}},
		{"auth None has no Secret", workspace(func(ws *idev1alpha1.Workspace) { ws.Spec.Auth.Mode = idev1alpha1.AuthNone }), true,
			[]string{"PersistentVolumeClaim/alice-home", "NetworkPolicy/alice", "Pod/alice", "Service/alice"}},
		{"an ingress with TLS adds the Ingress and the Certificate", workspace(func(ws *idev1alpha1.Workspace) {
			ws.Spec.Ingress = &idev1alpha1.WorkspaceIngress{Host: "alice.ide.example.com", TLS: &idev1alpha1.WorkspaceTLS{IssuerRef: idev1alpha1.IssuerReference{Name: "letsencrypt"}}}
		}), true, []string{"PersistentVolumeClaim/alice-home", "NetworkPolicy/alice", "Secret/alice-auth", "Pod/alice", "Service/alice", "Ingress/alice", "Certificate/alice-tls"}},
		{"without cert-manager there is no Certificate", workspace(func(ws *idev1alpha1.Workspace) {
			ws.Spec.Ingress = &idev1alpha1.WorkspaceIngress{Host: "alice.ide.example.com", TLS: &idev1alpha1.WorkspaceTLS{IssuerRef: idev1alpha1.IssuerReference{Name: "letsencrypt"}}}
		}), false, []string{"PersistentVolumeClaim/alice-home", "NetworkPolicy/alice", "Secret/alice-auth", "Pod/alice", "Service/alice", "Ingress/alice"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			auth, err := AuthSecret(tc.ws, true, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range DesiredObjects(tc.ws, Options{CertManager: tc.certManager}, auth) {
				got = append(got, o.GetObjectKind().GroupVersionKind().Kind+"/"+o.GetName())
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("objects = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestPodRunsTheIDEAsNonRootWithItsHomeAndAProbe(t *testing.T) {
	ws := workspace(func(ws *idev1alpha1.Workspace) {
		ws.Spec.Port = 9000
		ws.Spec.Env = []corev1.EnvVar{{Name: "THEME", Value: "dark"}}
	})
	p := Pod(ws)
	c := p.Spec.Containers[0]
	if c.Image != idev1alpha1.WorkspaceDefaultImage || c.ImagePullPolicy != corev1.PullIfNotPresent {
		t.Errorf("image %s pull %s: want the pinned image, IfNotPresent", c.Image, c.ImagePullPolicy)
	}
	if sc := p.Spec.SecurityContext; sc == nil || !*sc.RunAsNonRoot || *sc.RunAsUser != 1000 || *sc.FSGroup != 1000 {
		t.Errorf("pod security context = %+v, want non-root uid/fsGroup 1000", sc)
	}
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Port.IntVal != 9000 || c.ReadinessProbe.HTTPGet.Path != "/healthz" {
		t.Errorf("readiness probe = %+v, want HTTP GET /healthz on 9000", c.ReadinessProbe)
	}
	hashed := corev1.EnvVar{Name: "HASHED_PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: "alice-auth"}, Key: "hashedPassword"}}}
	if !reflect.DeepEqual(c.Env, []corev1.EnvVar{{Name: "PORT", Value: "9000"}, {Name: "KUBEFORGE_IDE_AUTH", Value: "password"}, hashed, {Name: "THEME", Value: "dark"}}) {
		t.Errorf("env = %v", c.Env)
	}
	open := Pod(workspace(func(ws *idev1alpha1.Workspace) {
		ws.Spec.Auth.Mode = idev1alpha1.AuthNone
		ws.Spec.HealthPath = "/ready"
	}))
	if env := open.Spec.Containers[0].Env; !reflect.DeepEqual(env, []corev1.EnvVar{{Name: "PORT", Value: "8080"}, {Name: "KUBEFORGE_IDE_AUTH", Value: "none"}}) {
		t.Errorf("auth None: env = %v, want no password", env)
	}
	if path := open.Spec.Containers[0].ReadinessProbe.HTTPGet.Path; path != "/ready" {
		t.Errorf("healthPath /ready: probe path %s", path)
	}
	if c.VolumeMounts[0].MountPath != "/home/coder" || p.Spec.Volumes[0].PersistentVolumeClaim.ClaimName != "alice-home" {
		t.Errorf("home volume: mount %+v, volume %+v", c.VolumeMounts, p.Spec.Volumes)
	}
	if p.Labels[idev1alpha1.UserLabel] != "alice" || p.Labels[idev1alpha1.WorkspaceLabel] != "alice" {
		t.Errorf("labels = %v", p.Labels)
	}
	other := Pod(workspace(func(ws *idev1alpha1.Workspace) { ws.Spec.Port = 9001 }))
	if p.Annotations[PodHashAnnotation] == other.Annotations[PodHashAnnotation] {
		t.Error("a different spec must give a different pod hash")
	}
	if p.Annotations[PodHashAnnotation] != Pod(ws.DeepCopy()).Annotations[PodHashAnnotation] {
		t.Error("the same spec must give the same pod hash")
	}
}

func TestPVCIsRetainedOnlyWithTheRetainPolicy(t *testing.T) {
	size := resource.MustParse("5Gi")
	pvc := PVC(workspace(func(ws *idev1alpha1.Workspace) { ws.Spec.Storage.Size = &size }))
	if got := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; got.Cmp(size) != 0 {
		t.Errorf("size = %s, want 5Gi", got.String())
	}
	if pvc.Annotations[engine.AnnotationRetain] != "" {
		t.Error("the Delete policy must leave the PVC to its owner")
	}
	pvc = PVC(workspace(func(ws *idev1alpha1.Workspace) { ws.Spec.Storage.ReclaimPolicy = idev1alpha1.ReclaimRetain }))
	if pvc.Annotations[engine.AnnotationRetain] != "true" {
		t.Error("the Retain policy must mark the PVC retained")
	}
}

func TestURL(t *testing.T) {
	if got := idev1alpha1.WorkspaceURL(workspace(nil)); got != "http://alice.dev.svc:8080" {
		t.Errorf("URL = %s", got)
	}
	ws := workspace(func(ws *idev1alpha1.Workspace) {
		ws.Spec.Ingress = &idev1alpha1.WorkspaceIngress{Host: "a.example.com", TLS: &idev1alpha1.WorkspaceTLS{IssuerRef: idev1alpha1.IssuerReference{Name: "x"}}}
	})
	if got := idev1alpha1.WorkspaceURL(ws); got != "https://a.example.com" {
		t.Errorf("URL = %s", got)
	}
	c := Certificate(ws)
	if c.Spec.SecretName != "alice-tls" || c.Spec.DNSNames[0] != "a.example.com" || c.Spec.IssuerRef.Kind != "Issuer" {
		t.Errorf("certificate = %+v", c.Spec)
	}
	if ing := Ingress(ws); ing.Spec.TLS[0].SecretName != "alice-tls" || ing.Spec.Rules[0].Host != "a.example.com" {
		t.Errorf("ingress = %+v", ing.Spec)
	}
}

func TestAuthSecretIsGeneratedOnlyWhenMissing(t *testing.T) {
	ws := workspace(nil)
	calls := 0
	values := func() (map[string][]byte, error) { calls++; return NewPassword() }
	sec, err := AuthSecret(ws, true, values)
	if err != nil || calls != 0 || sec.Data != nil {
		t.Fatalf("existing Secret: calls %d, data %v, err %v: want no new password", calls, sec.Data, err)
	}
	if sec.Annotations[engine.AnnotationCreateOnly] != "true" || sec.Annotations[engine.AnnotationKeepOnly] != "true" {
		t.Error("the auth Secret seen to exist must be kept only: never created without its password, never rewritten")
	}
	sec, err = AuthSecret(ws, false, values)
	if err != nil || calls != 1 {
		t.Fatalf("missing Secret: calls %d, err %v", calls, err)
	}
	if sec.Annotations[engine.AnnotationCreateOnly] != "true" || sec.Annotations[engine.AnnotationKeepOnly] != "" {
		t.Error("a new auth Secret must be create-only, and created")
	}
	pw, hash := string(sec.Data[PasswordKey]), string(sec.Data[HashedPasswordKey])
	if len(pw) != PasswordLength || !strings.HasPrefix(hash, "$argon2id$v=19$") || strings.Contains(hash, pw) ||
		!secret.Verify(pw, hash) || secret.Verify(pw+"x", hash) {
		t.Errorf("password %d characters, hash %q: want %d characters and its argon2id hash", len(pw), hash, PasswordLength)
	}
	other, _ := NewPassword()
	if string(other[PasswordKey]) == pw {
		t.Error("two generated passwords are equal")
	}
	if sec, _ := AuthSecret(workspace(func(ws *idev1alpha1.Workspace) { ws.Spec.Auth.Mode = idev1alpha1.AuthNone }), false, values); sec != nil || calls != 1 {
		t.Errorf("auth None: Secret %v", sec)
	}
}

func TestNetworkPolicyAdmitsOnlyTheAllowedNamespacesOnTheIDEPort(t *testing.T) {
	ws := workspace(func(ws *idev1alpha1.Workspace) { ws.Spec.Port = 9000 })
	np := NetworkPolicy(ws, []string{"ingress-nginx", "ide-gateway"})
	if !reflect.DeepEqual(np.Spec.PodSelector.MatchLabels, map[string]string{idev1alpha1.WorkspaceLabel: "alice"}) {
		t.Errorf("pod selector = %v", np.Spec.PodSelector)
	}
	if !reflect.DeepEqual(np.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}) || len(np.Spec.Ingress) != 1 {
		t.Fatalf("policy = %+v", np.Spec)
	}
	rule := np.Spec.Ingress[0]
	if len(rule.Ports) != 1 || rule.Ports[0].Port.IntVal != 9000 || *rule.Ports[0].Protocol != corev1.ProtocolTCP {
		t.Errorf("ports = %+v, want TCP 9000 only", rule.Ports)
	}
	if len(rule.From) != 1 || rule.From[0].PodSelector != nil || rule.From[0].IPBlock != nil {
		t.Fatalf("from = %+v, want one namespace selector", rule.From)
	}
	req := rule.From[0].NamespaceSelector.MatchExpressions
	if len(req) != 1 || req[0].Key != "kubernetes.io/metadata.name" || req[0].Operator != metav1.LabelSelectorOpIn ||
		!reflect.DeepEqual(req[0].Values, []string{"ingress-nginx", "ide-gateway"}) {
		t.Errorf("namespace selector = %+v", req)
	}
	if closed := NetworkPolicy(ws, nil); len(closed.Spec.Ingress) != 0 || len(closed.Spec.PolicyTypes) != 1 {
		t.Errorf("no allowed namespace: %+v, want ingress denied to all", closed.Spec)
	}
}
