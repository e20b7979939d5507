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

package validation

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	networkingv1alpha1 "github.com/kubeforge/kubeforge/api/networking/v1alpha1"
)

func balancer(mutate func(*networkingv1alpha1.Balancer)) *networkingv1alpha1.Balancer {
	b := &networkingv1alpha1.Balancer{
		ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: "default"},
		Spec: networkingv1alpha1.BalancerSpec{
			Selector: map[string]string{"app": "shop"},
			Backends: []networkingv1alpha1.BalancerBackend{
				{Name: "v1", Weight: new(int32(90)), Selector: map[string]string{"version": "v1"}},
				{Name: "v2", Weight: new(int32(10)), Selector: map[string]string{"version": "v2"}},
			},
			Ports: []networkingv1alpha1.BalancerPort{{Name: "http", Port: 80, TargetPort: new(intstr.FromInt32(8080))}},
		},
	}
	if mutate != nil {
		mutate(b)
	}
	return b
}

func TestDefaultBalancer(t *testing.T) {
	t.Run("fill in replicas, image, service type, weights, protocols and target ports", func(t *testing.T) {
		b := balancer(func(b *networkingv1alpha1.Balancer) {
			b.Spec.Backends[0].Weight = nil
			b.Spec.Ports = append(b.Spec.Ports, networkingv1alpha1.BalancerPort{Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53})
		})
		networkingv1alpha1.DefaultBalancer(b)
		s := b.Spec
		if *s.Replicas != 1 || s.Image != networkingv1alpha1.BalancerDefaultImage || s.ServiceType != corev1.ServiceTypeClusterIP {
			t.Fatalf("replicas %d, image %q, serviceType %q", *s.Replicas, s.Image, s.ServiceType)
		}
		if *s.Backends[0].Weight != 1 || *s.Backends[1].Weight != 10 {
			t.Fatalf("weights %d, %d; want 1 (default), 10 (kept)", *s.Backends[0].Weight, *s.Backends[1].Weight)
		}
		if s.Ports[0].Protocol != corev1.ProtocolTCP || *s.Ports[0].TargetPort != intstr.FromInt32(8080) {
			t.Fatalf("port 0: %+v; want TCP, target port kept at 8080", s.Ports[0])
		}
		if s.Ports[1].Protocol != corev1.ProtocolUDP || *s.Ports[1].TargetPort != intstr.FromInt32(53) {
			t.Fatalf("port 1: %+v; want UDP kept, target port = port", s.Ports[1])
		}
		if h := s.PassiveHealth; h == nil || *h.MaxFails != 3 || h.FailTimeout.Duration != 10*time.Second {
			t.Fatalf("passiveHealth %+v; want 3 failures in 10s", h)
		}
		if s.SessionAffinity != networkingv1alpha1.SessionAffinityNone {
			t.Fatalf("sessionAffinity %q; want None", s.SessionAffinity)
		}
	})
	t.Run("keep zero replicas and weight zero", func(t *testing.T) {
		b := balancer(func(b *networkingv1alpha1.Balancer) {
			b.Spec.Replicas = new(int32(0))
			b.Spec.Backends[0].Weight = new(int32(0))
		})
		networkingv1alpha1.DefaultBalancer(b)
		if *b.Spec.Replicas != 0 || *b.Spec.Backends[0].Weight != 0 {
			t.Fatalf("replicas %d, weight %d; want both 0", *b.Spec.Replicas, *b.Spec.Backends[0].Weight)
		}
	})
}

func TestValidateBalancer(t *testing.T) {
	type B = networkingv1alpha1.Balancer
	cases := map[string]struct {
		mutate func(*B)
		want   []string
	}{
		"accept the canary sample":                        {},
		"accept a drained backend next to a weighted one": {mutate: func(b *B) { b.Spec.Backends[0].Weight = new(int32(0)) }},
		"accept the same port number over TCP and UDP": {mutate: func(b *B) {
			b.Spec.Ports = append(b.Spec.Ports, networkingv1alpha1.BalancerPort{Name: "http-udp", Protocol: corev1.ProtocolUDP, Port: 80})
		}},
		"reject no port":    {mutate: func(b *B) { b.Spec.Ports = nil }, want: []string{"spec.ports"}},
		"reject no backend": {mutate: func(b *B) { b.Spec.Backends = nil }, want: []string{"spec.backends"}},
		"accept no top-level selector when every backend has one": {mutate: func(b *B) { b.Spec.Selector = nil }},
		"reject no top-level selector and a backend without one": {
			mutate: func(b *B) { b.Spec.Selector = nil; b.Spec.Backends[1].Selector = nil },
			want:   []string{"spec.backends[1].selector"},
		},
		"accept a named target port": {mutate: func(b *B) { b.Spec.Ports[0].TargetPort = new(intstr.FromString("web")) }},
		"reject a target port name that is not a port name": {
			mutate: func(b *B) { b.Spec.Ports[0].TargetPort = new(intstr.FromString("Web_Port")) },
			want:   []string{"spec.ports[0].targetPort"},
		},
		"accept passive health off and client affinity": {mutate: func(b *B) {
			b.Spec.PassiveHealth = &networkingv1alpha1.BalancerPassiveHealth{MaxFails: new(int32(0))}
			b.Spec.SessionAffinity = networkingv1alpha1.SessionAffinityClientIP
		}},
		"reject passive health out of range": {
			mutate: func(b *B) {
				b.Spec.PassiveHealth = &networkingv1alpha1.BalancerPassiveHealth{MaxFails: new(int32(101)), FailTimeout: &metav1.Duration{Duration: 500 * time.Millisecond}}
			},
			want: []string{"spec.passiveHealth.maxFails", "spec.passiveHealth.failTimeout"},
		},
		"reject a fail timeout that is not whole seconds": {
			mutate: func(b *B) {
				b.Spec.PassiveHealth = &networkingv1alpha1.BalancerPassiveHealth{FailTimeout: &metav1.Duration{Duration: 1500 * time.Millisecond}}
			},
			want: []string{"spec.passiveHealth.failTimeout"},
		},
		"reject an unknown session affinity": {
			mutate: func(b *B) { b.Spec.SessionAffinity = "Cookie" },
			want:   []string{"spec.sessionAffinity"},
		},
		"reject duplicate backend names": {
			mutate: func(b *B) { b.Spec.Backends[1].Name = "v1" },
			want:   []string{"spec.backends[1].name"},
		},
		"reject duplicate port names": {
			mutate: func(b *B) {
				b.Spec.Ports = append(b.Spec.Ports, networkingv1alpha1.BalancerPort{Name: "http", Port: 81})
			},
			want: []string{"spec.ports[1].name"},
		},
		"reject a repeated port and protocol": {
			mutate: func(b *B) {
				b.Spec.Ports = append(b.Spec.Ports, networkingv1alpha1.BalancerPort{Name: "other", Protocol: corev1.ProtocolTCP, Port: 80})
			},
			want: []string{"spec.ports[1]"},
		},
		"reject port 0 and a target port above 65535": {
			mutate: func(b *B) { b.Spec.Ports[0].Port = 0; b.Spec.Ports[0].TargetPort = new(intstr.FromInt32(70000)) },
			want:   []string{"spec.ports[0].port", "spec.ports[0].targetPort"},
		},
		"reject a weight above 1000": {
			mutate: func(b *B) { b.Spec.Backends[0].Weight = new(int32(1001)) },
			want:   []string{"spec.backends[0].weight"},
		},
		"reject a negative weight": {
			mutate: func(b *B) { b.Spec.Backends[0].Weight = new(int32(-1)) },
			want:   []string{"spec.backends[0].weight"},
		},
		"reject weights that add up to 0": {
			mutate: func(b *B) { b.Spec.Backends[0].Weight = new(int32(0)); b.Spec.Backends[1].Weight = new(int32(0)) },
			want:   []string{"spec.backends"},
		},
		"reject an invalid label key and value": {
			mutate: func(b *B) {
				b.Spec.Selector = map[string]string{"bad key!": "x"}
				b.Spec.Backends[0].Selector = map[string]string{"version": "not a value"}
			},
			want: []string{"spec.selector", "spec.backends[0].selector"},
		},
		"reject a backend whose Service name is not a DNS label": {
			mutate: func(b *B) { b.Spec.Backends[0].Name = strings.Repeat("x", 60) },
			want:   []string{"spec.backends[0].name"},
		},
		"reject a backend name that is not a DNS label": {
			mutate: func(b *B) { b.Spec.Backends[0].Name = "V_1" },
			want:   []string{"spec.backends[0].name", "spec.backends[0].name"},
		},
		"reject a name too long for <name>-proxy": {
			mutate: func(b *B) {
				b.Name = strings.Repeat("s", 58)
				b.Spec.Backends = b.Spec.Backends[:1]
				b.Spec.Backends[0].Name = "a"
			},
			want: []string{"metadata.name"},
		},
		"reject an unknown protocol and service type": {
			mutate: func(b *B) { b.Spec.Ports[0].Protocol = "SCTP"; b.Spec.ServiceType = "ExternalName" },
			want:   []string{"spec.ports[0].protocol", "spec.serviceType"},
		},
		"reject negative proxy replicas": {
			mutate: func(b *B) { b.Spec.Replicas = new(int32(-1)) },
			want:   []string{"spec.replicas"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := balancer(tc.mutate)
			var got []string
			for _, e := range Balancer(b) {
				got = append(got, e.Field)
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Fatalf("fields = %q, want %q\n%v", got, tc.want, Balancer(b))
			}
			if n := len(BalancerUpdate(balancer(nil), b)); n != len(tc.want) {
				t.Fatalf("update: %d errors, want %d", n, len(tc.want))
			}
		})
	}
}

func FuzzBalancer(f *testing.F) {
	f.Add([]byte(`{"metadata":{"name":"s"},"spec":{"selector":{"app":"x"},"backends":[{"name":"a","weight":1}],"ports":[{"name":"p","port":80}]}}`))
	f.Add([]byte(`{"spec":{"backends":[{"name":"","weight":-5,"selector":{"":""}}],"ports":[{"port":0,"protocol":"UDP"},{"port":0}],"resources":{"limits":{"cpu":"1"}}}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		b := &networkingv1alpha1.Balancer{}
		if err := json.Unmarshal(raw, b); err != nil {
			return
		}
		// Defaulting then validating must never panic; the result must be stable.
		networkingv1alpha1.DefaultBalancer(b)
		a, c := Balancer(b), Balancer(b)
		if len(a) != len(c) {
			t.Fatalf("validation is not deterministic: %v vs %v", a, c)
		}
	})
}
