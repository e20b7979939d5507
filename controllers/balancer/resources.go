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

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/kubeforge/kubeforge/api/networking/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/engine"
	"github.com/kubeforge/kubeforge/internal/workload"
)

// The app.kubernetes.io/component values of a Balancer's objects.
const (
	componentFrontend = "frontend"
	componentProxy    = "proxy"
	componentBackend  = "backend"
)

// configDir is where the proxy container finds nginx.conf; runDir is its
// only writable directory (an emptyDir in memory), for the pid file.
const (
	configDir = "/etc/kubeforge"
	runDir    = "/tmp"
)

// ProxyName is the name of the proxy's Deployment and ConfigMap.
func ProxyName(b *networkingv1alpha1.Balancer) string { return b.Name + "-proxy" }

// ProxySelectorLabels select the proxy pods. They derive from the name
// alone, so the Deployment's (immutable) selector never changes, and no
// backend pod carries them.
func ProxySelectorLabels(b *networkingv1alpha1.Balancer) map[string]string {
	return map[string]string{networkingv1alpha1.BalancerProxyLabel: b.Name}
}

// Selector is ProxySelectorLabels in string form, for the scale subresource.
func Selector(b *networkingv1alpha1.Balancer) string {
	return labels.SelectorFromSet(ProxySelectorLabels(b)).String()
}

// BackendSelector is the selector of a backend's pods: spec.selector with
// the backend's selector laid over it.
func BackendSelector(b *networkingv1alpha1.Balancer, be networkingv1alpha1.BalancerBackend) map[string]string {
	sel := map[string]string{}
	for k, v := range b.Spec.Selector {
		sel[k] = v
	}
	for k, v := range be.Selector {
		sel[k] = v
	}
	return sel
}

// DesiredObjects are the objects a Balancer owns, built from its spec and
// its rendered nginx.conf: the backend Services, the proxy's Deployment,
// the front-end Service and the ConfigMap that shows nginx.conf. The
// backend Services come first so that their names resolve when the proxy
// starts; the ConfigMap last, since nothing uses it (a conflict on it
// stops nothing the proxy needs).
func DesiredObjects(b *networkingv1alpha1.Balancer, conf string) ([]client.Object, error) {
	var objs []client.Object
	for _, be := range b.Spec.Backends {
		objs = append(objs, BackendService(b, be))
	}
	dep, err := Deployment(b, conf)
	if err != nil {
		return nil, err
	}
	objs = append(objs, dep, FrontendService(b), ConfigMap(b, conf))
	return objs, nil
}

// ConfigMap shows the proxy's nginx.conf to whoever reads it. The proxy
// does not mount it: it reads the copy its own pod template carries
// (Deployment), which only someone who may change the Deployment or its
// Pods (and so their image) can change.
func ConfigMap(b *networkingv1alpha1.Balancer, conf string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: objectMeta(b, ProxyName(b), componentProxy),
		Data:       map[string]string{"nginx.conf": conf},
	}
}

// proxyDrainSeconds is how long a terminating proxy Pod keeps serving
// before nginx is stopped.
const proxyDrainSeconds = 5

// Deployment runs the nginx proxy with nginx.conf in its pod template
// (workload.TemplateFiles), as a file at configDir. A change of nginx.conf
// changes the template, which rolls the proxy; the template also carries
// the config hash, which status reports.
func Deployment(b *networkingv1alpha1.Balancer, conf string) (*appsv1.Deployment, error) {
	replicas, image := *b.Spec.Replicas, b.Spec.Image
	podLabels := engine.CommonLabels(b, componentProxy)
	for k, v := range ProxySelectorLabels(b) {
		podLabels[k] = v
	}

	container := corev1.Container{
		Name:            "nginx",
		Image:           image,
		ImagePullPolicy: corev1.PullIfNotPresent,
		// As a non-root user on a read-only root file system: the error
		// log before nginx.conf is read goes to stderr (-e), the pid file
		// to the Pod's run volume.
		Command: []string{"nginx", "-e", "stderr", "-c", configDir + "/nginx.conf", "-g", "daemon off; pid " + runDir + "/nginx.pid;"},
		VolumeMounts: []corev1.VolumeMount{
			{Name: "config", MountPath: configDir, ReadOnly: true},
			{Name: "run", MountPath: runDir},
		},
	}
	for i, p := range b.Spec.Ports {
		container.Ports = append(container.Ports, corev1.ContainerPort{ContainerPort: listenPort(i), Protocol: p.Protocol})
	}
	// Ready when nginx accepts connections on the first TCP port; a
	// UDP-only proxy has nothing to probe and is ready when it runs.
	for i, p := range b.Spec.Ports {
		if p.Protocol == corev1.ProtocolTCP {
			container.ReadinessProbe = &corev1.Probe{
				ProbeHandler:  corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(listenPort(i))}},
				PeriodSeconds: 2,
			}
			break
		}
	}
	// A proxy Pod that is going away keeps serving while the Service stops
	// sending it connections (kube-proxy takes a terminating endpoint out
	// within a second or two), so a roll fails no request.
	container.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: proxyDrainSeconds}}}
	if b.Spec.Resources != nil {
		container.Resources = *b.Spec.Resources
	}

	tmpl := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{
			Labels:      podLabels,
			Annotations: map[string]string{networkingv1alpha1.ConfigHashAnnotation: ConfigHash(conf)},
		},
	}
	config, err := workload.TemplateFiles(&tmpl, "config", map[string]string{"nginx.conf": conf})
	if err != nil {
		return nil, fmt.Errorf("the proxy's nginx.conf: %w", err)
	}
	tmpl.Spec = proxyPodSpec(config, container)
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: objectMeta(b, ProxyName(b), componentProxy),
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: ProxySelectorLabels(b)},
			// A new proxy Pod is Ready before an old one goes: the proxy
			// never has fewer Ready Pods than spec.replicas during a roll.
			Strategy: appsv1.DeploymentStrategy{
				Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{
					MaxUnavailable: ptr.To(intstr.FromInt32(0)),
					MaxSurge:       ptr.To(intstr.FromInt32(1)),
				},
			},
			Template: tmpl,
		},
	}, nil
}

// proxyPodSpec is the proxy's Pod: restricted (workload.Restrict), nginx
// as a non-root user whatever the image's own user, on a read-only root
// file system, with no ServiceAccount token (it never calls the API).
func proxyPodSpec(config corev1.Volume, container corev1.Container) corev1.PodSpec {
	spec := corev1.PodSpec{
		Containers: []corev1.Container{container},
		Volumes: []corev1.Volume{
			config,
			{Name: "run", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{
				Medium: corev1.StorageMediumMemory, SizeLimit: ptr.To(resource.MustParse("1Mi")),
			}}},
		},
	}
	workload.Restrict(&spec, workload.Security{User: ptr.To(workload.NonRootUser), ReadOnlyRoot: true})
	return spec
}

// listenPort is where the proxy Pod serves the i-th spec port.
func listenPort(i int) int32 { return RenderOptions{}.ListenPort(i) }

// FrontendService is the Service clients connect to: it selects the proxy
// pods, one port per spec port.
func FrontendService(b *networkingv1alpha1.Balancer) *corev1.Service {
	svcType := b.Spec.ServiceType
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: objectMeta(b, b.Name, componentFrontend),
		Spec: corev1.ServiceSpec{
			Type:     svcType,
			Selector: ProxySelectorLabels(b),
		},
	}
	for i, p := range b.Spec.Ports {
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{
			Name: p.Name, Protocol: p.Protocol, Port: p.Port, TargetPort: intstr.FromInt32(listenPort(i)),
		})
	}
	return svc
}

// BackendService selects one backend's pods; nginx connects to it by its
// cluster DNS name, on the spec ports, which it forwards to targetPort.
func BackendService(b *networkingv1alpha1.Balancer, be networkingv1alpha1.BalancerBackend) *corev1.Service {
	meta := objectMeta(b, networkingv1alpha1.BackendServiceName(b, be), componentBackend)
	meta.Labels[networkingv1alpha1.BalancerLabel] = b.Name
	meta.Labels[networkingv1alpha1.BalancerBackendLabel] = be.Name
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: meta,
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: BackendSelector(b, be),
		},
	}
	for _, p := range b.Spec.Ports {
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{
			Name: p.Name, Protocol: p.Protocol, Port: p.Port, TargetPort: *p.TargetPort,
		})
	}
	return svc
}

func objectMeta(b *networkingv1alpha1.Balancer, name, component string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: b.Namespace, Labels: engine.CommonLabels(b, component)}
}
