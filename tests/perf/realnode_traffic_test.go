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

package perf

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/kubeforge/kubeforge/api/networking/v1alpha1"
)

// The traffic: two echoserver backend Pods (HTTP on 8080, UDP echo on
// 9000), a Balancer "bal" of one backend selecting both, a plain ClusterIP
// Service "direct" selecting the same two, and a client Pod that runs
// `echoserver load` against either — all on the real node, with the same
// CPU limit on the client, each backend and the proxy.
const (
	trafficApp  = "perf-echo"
	udpPort     = 9000
	loadTimeout = 500 * time.Millisecond
)

type traffic struct {
	r   *realEnv
	cpu string
	// targets by "Balancer"/"ClusterIP" and protocol.
	targets map[string]map[string]string
}

var protocols = []string{"HTTP", "UDP"}

// startTraffic creates the backends, the client, the Balancer and the
// plain Service; waitServing waits until both answer.
func (r *realEnv) startTraffic(cpu string) *traffic {
	t := r.t
	labels := map[string]string{"app": trafficApp}
	backend := echoContainer(cpu, "-udp", fmt.Sprintf(":%d", udpPort))
	backend.Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}, {Name: "udp", ContainerPort: udpPort, Protocol: corev1.ProtocolUDP}}
	backend.ReadinessProbe = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}},
		PeriodSeconds: 1,
	}
	objs := []client.Object{
		&appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: realNS, Name: "echo"},
			Spec: appsv1.DeploymentSpec{Replicas: new(int32(2)), Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: onRealNode(corev1.PodSpec{Containers: []corev1.Container{backend}})}},
		},
		&corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: realNS, Name: "client", Labels: map[string]string{"app": "perf-client"}},
			Spec:       onRealNode(corev1.PodSpec{Containers: []corev1.Container{echoContainer(cpu)}}),
		},
		&corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: realNS, Name: "direct"},
			Spec: corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{
				{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)},
				{Name: "udp", Protocol: corev1.ProtocolUDP, Port: udpPort, TargetPort: intstr.FromInt32(udpPort)},
			}},
		},
		&networkingv1alpha1.Balancer{
			ObjectMeta: metav1.ObjectMeta{Namespace: realNS, Name: "bal"},
			Spec: networkingv1alpha1.BalancerSpec{
				Selector: labels,
				Backends: []networkingv1alpha1.BalancerBackend{{Name: "echo"}},
				Ports: []networkingv1alpha1.BalancerPort{
					{Name: "http", Port: 80, TargetPort: new(intstr.FromInt32(8080))},
					{Name: "udp", Protocol: corev1.ProtocolUDP, Port: udpPort, TargetPort: new(intstr.FromInt32(udpPort))},
				},
				// The proxy's container: the same CPU limit as the client's
				// and each backend's.
				Resources: new(cpuLimit(cpu)),
			},
		},
	}
	for _, o := range objs {
		if err := r.c.Create(context.Background(), o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
	return &traffic{r: r, cpu: cpu}
}

// waitServing waits until the backends, the client and the proxy are
// Ready and both targets answer both protocols from the client.
func (tr *traffic) waitServing() {
	t, c := tr.r.t, tr.r.raw
	ctx := context.Background()
	waitFor(t, 3*time.Minute, "the backends, the client and the Balancer's proxy to be Ready", func() bool {
		d, proxy, pod, bal := &appsv1.Deployment{}, &appsv1.Deployment{}, &corev1.Pod{}, &networkingv1alpha1.Balancer{}
		if c.Get(ctx, client.ObjectKey{Namespace: realNS, Name: "echo"}, d) != nil ||
			c.Get(ctx, client.ObjectKey{Namespace: realNS, Name: "bal-proxy"}, proxy) != nil ||
			c.Get(ctx, client.ObjectKey{Namespace: realNS, Name: "client"}, pod) != nil ||
			c.Get(ctx, client.ObjectKey{Namespace: realNS, Name: "bal"}, bal) != nil {
			return false
		}
		return d.Status.ReadyReplicas == 2 && proxy.Status.ReadyReplicas == 1 && podReady(pod) &&
			meta.IsStatusConditionTrue(bal.Status.Conditions, "Ready") && bal.Status.ObservedGeneration == bal.Generation
	})
	tr.targets = map[string]map[string]string{}
	for name, svc := range map[string]string{"Balancer": "bal", "ClusterIP": "direct"} {
		s := &corev1.Service{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: realNS, Name: svc}, s); err != nil {
			t.Fatal(err)
		}
		tr.targets[name] = map[string]string{
			"HTTP": "http://" + net.JoinHostPort(s.Spec.ClusterIP, "80") + "/healthz",
			"UDP":  net.JoinHostPort(s.Spec.ClusterIP, strconv.Itoa(udpPort)),
		}
	}
	// kube-proxy routes a Service a moment after its endpoints are Ready.
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(time.Second) {
		failed := ""
		for _, proto := range protocols {
			res, err := tr.load([]string{"Balancer", "ClusterIP"}, proto, 1, 300*time.Millisecond)
			if err != nil || res[0].Requests == 0 || res[0].Errors > 0 || res[1].Requests == 0 || res[1].Errors > 0 {
				failed = fmt.Sprintf("%s (Balancer, ClusterIP): %+v %v", proto, res, err)
			}
		}
		if failed == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for both targets to answer HTTP and UDP from the client Pod; the last failure: %s", failed)
		}
	}
}

// load runs `echoserver load` in the client Pod against the targets
// ("Balancer", "ClusterIP"), one after the other, each for d.
func (tr *traffic) load(targets []string, proto string, conc int, d time.Duration) ([]loadResult, error) {
	args := []string{"exec", "-n", realNS, "client", "--", "/echoserver", "load",
		"-c", strconv.Itoa(conc), "-d", d.String(), "-timeout", loadTimeout.String(),
		// Bounded in count as in time: far more than these Pods answer.
		"-n", strconv.Itoa(min(10_000_000, int(200_000*d.Seconds())+1000))}
	if proto == "UDP" {
		args = append(args, "-udp")
	}
	for _, target := range targets {
		args = append(args, tr.targets[target][proto])
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(len(targets))*d+time.Minute)
	defer cancel()
	out, err := tr.r.kubectl(ctx, args...)
	if err != nil {
		return nil, err
	}
	return parseLoad(out, len(targets))
}

// measure runs each protocol at 1, 8 and 32 concurrent connections (or
// senders) for d against both targets, which goes first alternating from
// point to point and run to run.
func (tr *traffic) measure(d time.Duration, reps int) []TrafficPoint {
	t := tr.r.t
	type runs struct{ rps, p50, p99 []float64 }
	var points []TrafficPoint
	for _, proto := range protocols {
		for _, conc := range []int{1, 8, 32} {
			points = append(points, TrafficPoint{Protocol: proto, Concurrency: conc})
		}
	}
	got := make([]map[string]*runs, len(points))
	ratios, added := make([][]float64, len(points)), make([][]float64, len(points))
	for i := range got {
		got[i] = map[string]*runs{"Balancer": {}, "ClusterIP": {}}
	}
	for rep := range reps {
		for i := range points {
			p := &points[i]
			order := []string{"Balancer", "ClusterIP"}
			if (rep+i)%2 == 1 {
				order[0], order[1] = order[1], order[0]
			}
			lrs, err := tr.load(order, p.Protocol, p.Concurrency, d)
			if err != nil {
				t.Fatalf("%s at %d: %v", p.Protocol, p.Concurrency, err)
			}
			res := map[string]loadResult{}
			for j, target := range order {
				lr := lrs[j]
				// A measurement that lost more than 1% is broken, not slow.
				if lr.Requests == 0 || float64(lr.Errors) > 0.01*float64(lr.Requests) {
					t.Fatalf("%s %s at %d: %d answered, %d errors: a broken measurement", target, p.Protocol, p.Concurrency, lr.Requests, lr.Errors)
				}
				res[target] = lr
				g := got[i][target]
				g.rps, g.p50, g.p99 = append(g.rps, lr.RPS), append(g.p50, lr.P50ms), append(g.p99, lr.P99ms)
				if target == "Balancer" {
					p.Balancer.Errors += lr.Errors
				} else {
					p.ClusterIP.Errors += lr.Errors
				}
			}
			b, c := res["Balancer"], res["ClusterIP"]
			ratios[i] = append(ratios[i], b.RPS/c.RPS)
			added[i] = append(added[i], b.P99ms-c.P99ms)
			t.Logf("%s ×%d run %d: Balancer %.0f/s p50 %.3f p99 %.3f ms, ClusterIP %.0f/s p50 %.3f p99 %.3f ms (%s first): %.2f×, p99 %+.3f ms",
				p.Protocol, p.Concurrency, rep+1, b.RPS, b.P50ms, b.P99ms, c.RPS, c.P50ms, c.P99ms, order[0], b.RPS/c.RPS, b.P99ms-c.P99ms)
		}
	}
	for i := range points {
		p := &points[i]
		for target, lf := range map[string]*LoadFigures{"Balancer": &p.Balancer, "ClusterIP": &p.ClusterIP} {
			g := got[i][target]
			lf.RPS, lf.P50ms, lf.P99ms = summarize(g.rps), summarize(g.p50), summarize(g.p99)
		}
		p.Ratio, p.P99Added = summarize(ratios[i]), summarize(added[i])
	}
	return points
}

// stop deletes the traffic's objects and waits until their Pods are gone,
// so that they take nothing from what is measured next.
func (tr *traffic) stop() {
	ctx := context.Background()
	for _, o := range []client.Object{
		&networkingv1alpha1.Balancer{ObjectMeta: metav1.ObjectMeta{Namespace: realNS, Name: "bal"}},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: realNS, Name: "echo"}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: realNS, Name: "client"}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: realNS, Name: "direct"}},
	} {
		if err := tr.r.raw.Delete(ctx, o, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
			tr.r.t.Fatal(err)
		}
	}
	tr.r.waitNoPods("the traffic's Pods to go", nil)
}

// waitNoPods waits until no Pod matching labels (all when nil) is left in
// the namespace.
func (r *realEnv) waitNoPods(what string, labels map[string]string) {
	waitFor(r.t, 3*time.Minute, what, func() bool {
		pods := &corev1.PodList{}
		if err := r.raw.List(context.Background(), pods, client.InNamespace(realNS), client.MatchingLabels(labels)); err != nil {
			return false
		}
		return len(pods.Items) == 0
	})
}

func podReady(p *corev1.Pod) bool {
	if p.DeletionTimestamp != nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
