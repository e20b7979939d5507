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
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestProbe(t *testing.T) {
	ports := map[string]bool{"http": true}
	httpGet := func(port intstr.IntOrString) corev1.ProbeHandler {
		return corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: port}}
	}
	for _, tc := range []struct {
		name  string
		probe corev1.Probe
		want  []string // the fields of the errors, in order
	}{
		{"named port", corev1.Probe{ProbeHandler: httpGet(intstr.FromString("http")), PeriodSeconds: 2}, nil},
		{"numbered port", corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(5432)}}}, nil},
		{"exec", corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}, nil},
		{"unknown port name", corev1.Probe{ProbeHandler: httpGet(intstr.FromString("metrics"))}, []string{"p.httpGet.port"}},
		{"port out of range", corev1.Probe{ProbeHandler: corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: 70000}}}, []string{"p.grpc.port"}},
		{"no handler", corev1.Probe{PeriodSeconds: 2}, []string{"p"}},
		{"two handlers", corev1.Probe{ProbeHandler: corev1.ProbeHandler{
			HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(80)}, TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(80)}}}, []string{"p"}},
		{"empty command", corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{}}}, []string{"p.exec.command"}},
		{"negative period", corev1.Probe{ProbeHandler: httpGet(intstr.FromInt32(80)), PeriodSeconds: -1}, []string{"p.periodSeconds"}},
		// The kubelet would send them from the node's network, to any host.
		{"an HTTP host", corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Host: "169.254.169.254", Port: intstr.FromInt32(80)}}},
			[]string{"p.httpGet.host"}},
		{"a TCP host", corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Host: "10.0.0.1", Port: intstr.FromInt32(22)}}},
			[]string{"p.tcpSocket.host"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := Probe(&tc.probe, ports, field.NewPath("p"))
			var got []string
			for _, e := range errs {
				got = append(got, e.Field)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("errors on %v, want on %v: %v", got, tc.want, errs)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("error %d on %s, want %s: %v", i, got[i], tc.want[i], errs)
				}
			}
		})
	}
}
