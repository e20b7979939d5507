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

package balancer

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	networkingv1alpha1 "github.com/kubeforge/kubeforge/api/networking/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/test/podsecurity"
	"github.com/kubeforge/kubeforge/internal/validation"
	"github.com/kubeforge/kubeforge/internal/workload"
)

func sample() *networkingv1alpha1.Balancer {
	return balancerWith([]networkingv1alpha1.BalancerPort{
		tcp("http", 80, 8080), {Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53, TargetPort: new(intstr.FromInt32(5353))},
	}, backend("v1", 90), backend("v2", 10))
}

var opts = RenderOptions{Resolve: ClusterDNS("cluster.local")}

func TestDesiredObjectsNameEveryOwnedObject(t *testing.T) {
	var got []string
	objs, err := DesiredObjects(sample(), NginxConf(sample(), opts))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		got = append(got, o.GetObjectKind().GroupVersionKind().Kind+"/"+o.GetName())
	}
	want := []string{"Service/shop-v1", "Service/shop-v2", "Deployment/shop-proxy", "Service/shop", "ConfigMap/shop-proxy"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("objects = %v, want %v", got, want)
	}
}

func TestBackendServiceSelectsTheBackendsPodsOnTheTargetPorts(t *testing.T) {
	b := sample()
	b.Spec.Backends[0].Selector["app"] = "shop-canary" // the backend's value wins
	svc := BackendService(b, b.Spec.Backends[0])
	if want := map[string]string{"app": "shop-canary", "version": "v1"}; !reflect.DeepEqual(svc.Spec.Selector, want) {
		t.Errorf("selector = %v, want %v", svc.Spec.Selector, want)
	}
	if svc.Labels[networkingv1alpha1.BalancerLabel] != "shop" || svc.Labels[networkingv1alpha1.BalancerBackendLabel] != "v1" {
		t.Errorf("labels = %v: the EndpointSlices need the balancer and backend labels", svc.Labels)
	}
	want := []corev1.ServicePort{
		{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(8080)},
		{Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53, TargetPort: intstr.FromInt32(5353)},
	}
	if !reflect.DeepEqual(svc.Spec.Ports, want) {
		t.Errorf("ports = %v, want %v", svc.Spec.Ports, want)
	}
}

func TestFrontendServiceSelectsTheProxy(t *testing.T) {
	b := sample()
	b.Spec.ServiceType = corev1.ServiceTypeNodePort
	svc := FrontendService(b)
	if svc.Spec.Type != corev1.ServiceTypeNodePort || !reflect.DeepEqual(svc.Spec.Selector, ProxySelectorLabels(b)) {
		t.Errorf("type %s, selector %v", svc.Spec.Type, svc.Spec.Selector)
	}
	if p := svc.Spec.Ports[1]; p.Port != 53 || p.TargetPort.IntVal != ProxyPortBase+1 || p.Protocol != corev1.ProtocolUDP {
		t.Errorf("the front-end port 53 is not forwarded to the proxy's unprivileged port %d: %+v", ProxyPortBase+1, p)
	}
}

func TestProxyPodPassesPodSecurityRestrictedOnUnprivilegedPorts(t *testing.T) {
	b := sample()
	conf := NginxConf(b, opts)
	dep, err := Deployment(b, conf)
	if err != nil {
		t.Fatal(err)
	}
	spec := dep.Spec.Template.Spec
	if v := podsecurity.Restricted(dep.Spec.Template.ObjectMeta, spec); len(v) > 0 {
		t.Fatalf("the proxy Pod is refused by Pod Security restricted: %v", v)
	}
	if u := spec.SecurityContext.RunAsUser; u == nil || *u == 0 {
		t.Error("nginx runs as the image's user, which may be root")
	}
	c := spec.Containers[0]
	if c.SecurityContext.ReadOnlyRootFilesystem == nil || !*c.SecurityContext.ReadOnlyRootFilesystem {
		t.Error("the proxy's root file system is writable")
	}
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		t.Error("the proxy gets a ServiceAccount token it never uses")
	}
	for i, p := range c.Ports {
		if p.ContainerPort < 1024 {
			t.Errorf("container port %d is privileged", p.ContainerPort)
		}
		if !strings.Contains(conf, fmt.Sprintf("listen %d", p.ContainerPort)) {
			t.Errorf("nginx.conf does not listen on container port %d (spec port %d)", p.ContainerPort, b.Spec.Ports[i].Port)
		}
	}
	if !strings.Contains(strings.Join(c.Command, " "), "pid "+runDir+"/nginx.pid") {
		t.Errorf("command %q: nginx writes its pid file under the read-only root", c.Command)
	}
}

func TestProxyDeploymentCarriesTheConfigAndItsHashInItsTemplate(t *testing.T) {
	b := sample()
	var dep *appsv1.Deployment
	var cm *corev1.ConfigMap
	objs, err := DesiredObjects(b, NginxConf(b, opts))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		switch o := o.(type) {
		case *appsv1.Deployment:
			dep = o
		case *corev1.ConfigMap:
			cm = o
		}
	}
	if got, want := dep.Spec.Template.Annotations[networkingv1alpha1.ConfigHashAnnotation], ConfigHash(cm.Data["nginx.conf"]); got != want {
		t.Errorf("config hash annotation = %q, want the hash of the ConfigMap's nginx.conf %q", got, want)
	}
	c := dep.Spec.Template.Spec.Containers[0]
	if c.Image != networkingv1alpha1.BalancerDefaultImage || c.VolumeMounts[0].MountPath != "/etc/kubeforge" {
		t.Errorf("container = %+v", c)
	}
	// nginx.conf comes from the Pod's own annotation, which holds exactly
	// the ConfigMap's copy: a ConfigMap is anyone's to rewrite who may
	// write ConfigMaps, the template only theirs who may change the proxy.
	v := dep.Spec.Template.Spec.Volumes[0]
	if v.ConfigMap != nil || v.DownwardAPI == nil || len(v.DownwardAPI.Items) != 1 || v.DownwardAPI.Items[0].Path != "nginx.conf" {
		t.Fatalf("volume = %+v, want nginx.conf from the pod's own annotations", v)
	}
	key := strings.TrimSuffix(strings.TrimPrefix(v.DownwardAPI.Items[0].FieldRef.FieldPath, "metadata.annotations['"), "']")
	if got := dep.Spec.Template.Annotations[key]; got != cm.Data["nginx.conf"] || got == "" {
		t.Errorf("the template's annotation %q holds %q, want the ConfigMap's nginx.conf", key, got)
	}
	if c.ReadinessProbe == nil || c.ReadinessProbe.TCPSocket.Port.IntVal != ProxyPortBase {
		t.Errorf("readiness probe = %+v, want a TCP probe on the first port's listening port %d", c.ReadinessProbe, ProxyPortBase)
	}
	for k, v := range dep.Spec.Selector.MatchLabels {
		if dep.Spec.Template.Labels[k] != v {
			t.Errorf("the pod template lacks the selector label %s=%s", k, v)
		}
	}
	if *dep.Spec.Replicas != 1 {
		t.Errorf("replicas = %d, want the default 1", *dep.Spec.Replicas)
	}
}

// The largest Balancer admission lets through — MaxBalancerRoutes (port,
// backend) pairs, names at their limits, passive health, affinity and
// re-resolving — still has its nginx.conf carried in the proxy's pod
// template; one pair more is refused at admission.
func TestTheLargestAdmittedBalancerFitsInItsProxysTemplate(t *testing.T) {
	const nPorts = 64 // the most ports a Balancer has
	var ports []networkingv1alpha1.BalancerPort
	for i := range nPorts {
		ports = append(ports, tcp(fmt.Sprintf("port-%d", i), int32(1000+i), int32(2000+i)))
	}
	var backends []networkingv1alpha1.BalancerBackend
	for i := range validation.MaxBalancerRoutes / nPorts {
		// The backend Service <balancer>-<backend> is a DNS label of 63.
		backends = append(backends, backend(fmt.Sprintf("%s%02d", strings.Repeat("b", 63-len("shop-")-2), i), 100))
	}
	b := balancerWith(ports, backends...)
	b.Namespace = strings.Repeat("n", 63)
	b.Spec.PassiveHealth = &networkingv1alpha1.BalancerPassiveHealth{MaxFails: ptr.To[int32](100), FailTimeout: &metav1.Duration{Duration: 3600 * time.Second}}
	b.Spec.SessionAffinity = networkingv1alpha1.SessionAffinityClientIP
	if errs := validation.Balancer(b); len(errs) != 0 {
		t.Fatalf("refused at admission: %v", errs)
	}
	conf := NginxConf(b, RenderOptions{Resolve: ClusterDNS("cluster.local"), DNSServer: "10.96.0.10"})
	if _, err := Deployment(b, conf); err != nil {
		t.Fatalf("nginx.conf of %d KiB: %v", len(conf)>>10, err)
	}
	t.Logf("nginx.conf of %d routes: %d KiB, a template carries %d KiB", validation.MaxBalancerRoutes, len(conf)>>10, workload.MaxTemplateFiles>>10)
	b.Spec.Backends = append(b.Spec.Backends, backend("one-more", 1))
	if errs := validation.Balancer(b); len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), "routes") {
		t.Errorf("%d routes admitted: %v", len(b.Spec.Ports)*len(b.Spec.Backends), errs)
	}
}
