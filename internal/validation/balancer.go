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
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	networkingv1alpha1 "github.com/kubeforge/kubeforge/api/networking/v1alpha1"
)

// balancerMaxName keeps <name>-proxy a valid DNS label.
const balancerMaxName = utilvalidation.DNS1035LabelMaxLength - len("-proxy")

// MaxBalancerRoutes is how many (port, backend) pairs a Balancer may
// have: each is a line of the proxy's nginx.conf of at most ≈ 300 bytes
// (Service and namespace names of 63 characters), and nginx.conf is
// carried in the proxy's pod template (workload.MaxTemplateFiles, 128 KiB).
const MaxBalancerRoutes = 256

// Balancer returns every problem with a Balancer's spec.
func Balancer(b *networkingv1alpha1.Balancer) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")

	errs = append(errs, NameAtMost(b.Name, balancerMaxName)...)
	errs = append(errs, metav1validation.ValidateLabels(b.Spec.Selector, spec.Child("selector"))...)

	backends := spec.Child("backends")
	if len(b.Spec.Backends) == 0 {
		errs = append(errs, field.Required(backends, "at least one backend"))
	}
	names := map[string]bool{}
	var sum int64
	for i, be := range b.Spec.Backends {
		p := backends.Index(i)
		for _, msg := range utilvalidation.IsDNS1123Label(be.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), be.Name, msg))
		}
		if names[be.Name] {
			errs = append(errs, field.Duplicate(p.Child("name"), be.Name))
		}
		names[be.Name] = true
		if svc := b.Name + "-" + be.Name; be.Name != "" {
			for _, msg := range utilvalidation.IsDNS1035Label(svc) {
				errs = append(errs, field.Invalid(p.Child("name"), be.Name, fmt.Sprintf("the backend Service name %q is not valid: %s", svc, msg)))
			}
		}
		if w := be.Weight; w != nil {
			if *w < 0 || *w > networkingv1alpha1.BalancerMaxWeight {
				errs = append(errs, field.Invalid(p.Child("weight"), *w, "must be between 0 and 1000"))
			} else {
				sum += int64(*w)
			}
		} else {
			sum += int64(networkingv1alpha1.BalancerDefaultWeight)
		}
		errs = append(errs, metav1validation.ValidateLabels(be.Selector, p.Child("selector"))...)
		if len(b.Spec.Selector) == 0 && len(be.Selector) == 0 {
			errs = append(errs, field.Required(p.Child("selector"),
				"without spec.selector every backend needs a selector of its own; otherwise its Service would select every pod in the namespace"))
		}
	}
	if len(b.Spec.Backends) > 0 && sum == 0 {
		errs = append(errs, field.Invalid(backends, sum, "the weights of the backends must add up to more than 0"))
	}

	ports := spec.Child("ports")
	if len(b.Spec.Ports) == 0 {
		errs = append(errs, field.Required(ports, "at least one port"))
	}
	if n := len(b.Spec.Ports) * len(b.Spec.Backends); n > MaxBalancerRoutes {
		errs = append(errs, field.Invalid(ports, len(b.Spec.Ports), fmt.Sprintf(
			"%d ports × %d backends is %d routes; at most %d (the proxy's nginx.conf is carried in its pod template, which holds 128 KiB)",
			len(b.Spec.Ports), len(b.Spec.Backends), n, MaxBalancerRoutes)))
	}
	portNames := map[string]bool{}
	pairs := map[string]bool{}
	for i, pt := range b.Spec.Ports {
		p := ports.Index(i)
		if pt.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		}
		for _, msg := range utilvalidation.IsValidPortName(pt.Name) {
			if pt.Name != "" {
				errs = append(errs, field.Invalid(p.Child("name"), pt.Name, msg))
			}
		}
		if portNames[pt.Name] {
			errs = append(errs, field.Duplicate(p.Child("name"), pt.Name))
		}
		portNames[pt.Name] = true
		for _, msg := range utilvalidation.IsValidPortNum(int(pt.Port)) {
			errs = append(errs, field.Invalid(p.Child("port"), pt.Port, msg))
		}
		errs = append(errs, TargetPort(pt.TargetPort, p.Child("targetPort"))...)
		proto := pt.Protocol
		if proto == "" {
			proto = corev1.ProtocolTCP
		}
		if proto != corev1.ProtocolTCP && proto != corev1.ProtocolUDP {
			errs = append(errs, field.NotSupported(p.Child("protocol"), proto, []string{string(corev1.ProtocolTCP), string(corev1.ProtocolUDP)}))
		}
		pair := fmt.Sprintf("%d/%s", pt.Port, proto)
		if pairs[pair] {
			errs = append(errs, field.Duplicate(p, pair))
		}
		pairs[pair] = true
	}

	if r := b.Spec.Replicas; r != nil && (*r < 0 || *r > 1000) {
		errs = append(errs, field.Invalid(spec.Child("replicas"), *r, "must be between 0 and 1000"))
	}
	switch b.Spec.ServiceType {
	case "", corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer:
	default:
		errs = append(errs, field.NotSupported(spec.Child("serviceType"), b.Spec.ServiceType,
			[]string{string(corev1.ServiceTypeClusterIP), string(corev1.ServiceTypeNodePort), string(corev1.ServiceTypeLoadBalancer)}))
	}
	if b.Spec.Resources != nil {
		errs = append(errs, Resources(b.Spec.Resources, spec.Child("resources"))...)
	}
	if h := b.Spec.PassiveHealth; h != nil {
		hp := spec.Child("passiveHealth")
		if m := h.MaxFails; m != nil && (*m < 0 || *m > networkingv1alpha1.BalancerMaxMaxFails) {
			errs = append(errs, field.Invalid(hp.Child("maxFails"), *m, "must be between 0 (off) and 100"))
		}
		if t := h.FailTimeout; t != nil {
			switch {
			case t.Duration < time.Second || t.Duration > time.Hour:
				errs = append(errs, field.Invalid(hp.Child("failTimeout"), t.Duration.String(), "must be between 1s and 1h"))
			case t.Duration%time.Second != 0:
				errs = append(errs, field.Invalid(hp.Child("failTimeout"), t.Duration.String(), "must be whole seconds, e.g. 10s"))
			}
		}
	}
	switch b.Spec.SessionAffinity {
	case "", networkingv1alpha1.SessionAffinityNone, networkingv1alpha1.SessionAffinityClientIP:
	default:
		errs = append(errs, field.NotSupported(spec.Child("sessionAffinity"), b.Spec.SessionAffinity,
			[]string{string(networkingv1alpha1.SessionAffinityNone), string(networkingv1alpha1.SessionAffinityClientIP)}))
	}
	return errs
}

// TargetPort checks a Service-style target port: a port number, or the
// name of a container port. Nil (not given) is valid.
func TargetPort(tp *intstr.IntOrString, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case tp == nil:
	case tp.Type == intstr.String:
		for _, msg := range utilvalidation.IsValidPortName(tp.StrVal) {
			errs = append(errs, field.Invalid(path, tp.StrVal, msg))
		}
	default:
		for _, msg := range utilvalidation.IsValidPortNum(int(tp.IntVal)) {
			errs = append(errs, field.Invalid(path, tp.IntVal, msg))
		}
	}
	return errs
}

// BalancerUpdate returns every problem with a change to a
// Balancer. Every field may change; the new spec must be valid.
func BalancerUpdate(_, newB *networkingv1alpha1.Balancer) field.ErrorList {
	return Balancer(newB)
}
