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

// Package expose builds what reaches a Service from outside the cluster,
// once for every kind that offers it: an Ingress for one host and path,
// and the cert-manager Certificate for its host.
package expose

import (
	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
)

// Route is a host and path routed to a Service port, by its name.
type Route struct {
	Host, Path string
	PathType   networkingv1.PathType
	// ClassName is the IngressClass; nil uses the cluster's default.
	ClassName *string
	// Service and Port name where the traffic goes.
	Service, Port string
	// TLSSecret, when set, serves the host over HTTPS from that Secret.
	TLSSecret string
}

// Ingress routes r with meta as its metadata.
func Ingress(meta metav1.ObjectMeta, r Route) *networkingv1.Ingress {
	pathType := r.PathType
	ing := &networkingv1.Ingress{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "Ingress"},
		ObjectMeta: meta,
		Spec: networkingv1.IngressSpec{
			IngressClassName: r.ClassName,
			Rules: []networkingv1.IngressRule{{
				Host: r.Host,
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
					Paths: []networkingv1.HTTPIngressPath{{
						Path:     r.Path,
						PathType: &pathType,
						Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
							Name: r.Service, Port: networkingv1.ServiceBackendPort{Name: r.Port},
						}},
					}},
				}},
			}},
		},
	}
	if r.TLSSecret != "" {
		ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{r.Host}, SecretName: r.TLSSecret}}
	}
	return ing
}

// Certificate asks cert-manager, through ref, for a certificate for host
// in the Secret named secret; meta names the Certificate itself.
func Certificate(meta metav1.ObjectMeta, host, secret string, ref idev1alpha1.IssuerReference) *cmv1.Certificate {
	return &cmv1.Certificate{
		TypeMeta:   metav1.TypeMeta{APIVersion: cmv1.SchemeGroupVersion.String(), Kind: cmv1.CertificateKind},
		ObjectMeta: meta,
		Spec: cmv1.CertificateSpec{
			SecretName: secret,
			DNSNames:   []string{host},
			IssuerRef:  cmmeta.IssuerReference{Name: ref.Name, Kind: ref.Kind, Group: "cert-manager.io"},
		},
	}
}
