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
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Probe checks a readiness probe the way the API server would check it in
// a pod, at admission instead of when the workload's pods are refused:
// exactly one handler, a port that exists (a number in range, or the name
// of one of ports), no negative timings; and no host, which Pod Security
// forbids.
func Probe(p *corev1.Probe, ports map[string]bool, fp *field.Path) field.ErrorList {
	var errs field.ErrorList
	h := p.ProbeHandler
	handlers := 0
	port := func(v intstr.IntOrString, path *field.Path) {
		switch {
		case v.Type == intstr.Int && (v.IntVal < 1 || v.IntVal > 65535):
			errs = append(errs, field.Invalid(path, v.IntVal, "must be between 1 and 65535"))
		case v.Type == intstr.String && !ports[v.StrVal]:
			errs = append(errs, field.Invalid(path, v.StrVal, "names no port of the component"))
		}
	}
	if h.Exec != nil {
		handlers++
		if len(h.Exec.Command) == 0 {
			errs = append(errs, field.Required(fp.Child("exec", "command"), "the command to run"))
		}
	}
	// A host sends the probe from the node's network to any address (the
	// kubelet's, with the probe's headers): Pod Security's baseline level
	// forbids it, and the pod's own address is what a probe is for.
	const hostWhy = "probes go to the pod's own address; a host has the kubelet send them from the node's network, which Pod Security forbids"
	if h.HTTPGet != nil {
		handlers++
		port(h.HTTPGet.Port, fp.Child("httpGet", "port"))
		if h.HTTPGet.Host != "" {
			errs = append(errs, field.Forbidden(fp.Child("httpGet", "host"), hostWhy))
		}
	}
	if h.TCPSocket != nil {
		handlers++
		port(h.TCPSocket.Port, fp.Child("tcpSocket", "port"))
		if h.TCPSocket.Host != "" {
			errs = append(errs, field.Forbidden(fp.Child("tcpSocket", "host"), hostWhy))
		}
	}
	if h.GRPC != nil {
		handlers++
		port(intstr.FromInt32(h.GRPC.Port), fp.Child("grpc", "port"))
	}
	switch {
	case handlers == 0:
		errs = append(errs, field.Required(fp, "one of exec, httpGet, tcpSocket or grpc"))
	case handlers > 1:
		errs = append(errs, field.Forbidden(fp, "only one of exec, httpGet, tcpSocket or grpc"))
	}
	for name, v := range map[string]int32{
		"initialDelaySeconds": p.InitialDelaySeconds, "timeoutSeconds": p.TimeoutSeconds, "periodSeconds": p.PeriodSeconds,
		"successThreshold": p.SuccessThreshold, "failureThreshold": p.FailureThreshold,
	} {
		if v < 0 {
			errs = append(errs, field.Invalid(fp.Child(name), v, "must not be negative"))
		}
	}
	return errs
}
