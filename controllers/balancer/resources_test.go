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

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	networkingv1alpha1 "github.com/kubeforge/kubeforge/api/networking/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/test/podsecurity"
)

func sample() *networkingv1alpha1.Balancer {
	return balancerWith([]networkingv1alpha1.BalancerPort{
		tcp("http", 80, 8080), {Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53, TargetPort: new(intstr.FromInt32(5353))},
	}, backend("v1", 90), backend("v2", 10))
}

var opts = RenderOptions{Resolve: ClusterDNS("cluster.local")}

func TestDesiredObjectsNameEveryOwnedObject(t *testing.T) {
	var got []string
	for _, o := range DesiredObjects(sample(), NginxConf(sample(), opts)) {
		got = append(got, o.GetObjectKind().GroupVersionKind().Kind+"/"+o.GetName())
	}
	want := []string{"Service/shop-v1", "Service/shop-v2", "ConfigMap/shop-proxy", "Deployment/shop-proxy", "Service/shop"}
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
	dep := Deployment(b, ConfigHash(conf))
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

func TestProxyDeploymentMountsTheConfigAndCarriesItsHash(t *testing.T) {
	b := sample()
	var dep *appsv1.Deployment
	var cm *corev1.ConfigMap
	for _, o := range DesiredObjects(b, NginxConf(b, opts)) {
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
	if dep.Spec.Template.Spec.Volumes[0].ConfigMap.Name != "shop-proxy" {
		t.Errorf("volume = %+v", dep.Spec.Template.Spec.Volumes[0])
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
