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

package platform

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/engine"
	"github.com/kubeforge/kubeforge/internal/test/podsecurity"
	"github.com/kubeforge/kubeforge/internal/workload"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// goldenPlatform has one component of each workload type, with the
// features each type supports.
func goldenPlatform() *appsv1alpha1.Platform {
	p := platform("1.0.0", "db", "api:db", "agent", "report:api")
	p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "regcred"}}
	db, api, agent, report := &p.Spec.Components[0], &p.Spec.Components[1], &p.Spec.Components[2], &p.Spec.Components[3]
	db.Workload = appsv1alpha1.WorkloadStatefulSet
	db.Ports = []appsv1alpha1.ComponentPort{{Name: "postgres", Port: 5432}}
	db.Storage = &appsv1alpha1.ComponentStorage{Size: resource.MustParse("1Gi"), MountPath: "/var/lib/postgresql/data", ReclaimPolicy: "Delete"}
	api.Replicas = new(int32(2))
	api.Ports = []appsv1alpha1.ComponentPort{{Name: "http", Port: 8080}}
	api.Config = map[string]string{"api.yaml": "listen: :8080\ndatabase: {{ service \"db\" \"postgres\" }}\nversion: {{ .Platform.Version }}\nregion: {{ .Values.region }}\n"}
	api.Ingress = &appsv1alpha1.ComponentIngress{Host: "api.example.com",
		TLS: &appsv1alpha1.ComponentTLS{IssuerRef: idev1alpha1.IssuerReference{Name: "letsencrypt", Kind: "ClusterIssuer"}}}
	api.Hooks = &appsv1alpha1.ComponentHooks{
		Bootstrap:  &appsv1alpha1.HookJob{Command: []string{"/app/create-admin"}},
		PreUpgrade: &appsv1alpha1.HookJob{Args: []string{"migrate"}, Env: []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "debug"}}},
	}
	p.Spec.Values = map[string]string{"region": "eu-west"}
	api.Env = []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "info"}}
	api.Storage = &appsv1alpha1.ComponentStorage{Size: resource.MustParse("2Gi"), MountPath: "/data"}
	agent.Workload = appsv1alpha1.WorkloadDaemonSet
	agent.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
	report.Workload = appsv1alpha1.WorkloadCronJob
	report.Schedule = "0 3 * * *"
	report.Args = []string{"--nightly"}
	appsv1alpha1.DefaultPlatform(p)
	return p
}

func TestComponentObjectsMatchGoldenFiles(t *testing.T) {
	p := goldenPlatform()
	for i := range p.Spec.Components {
		c := &p.Spec.Components[i]
		t.Run(string(c.Workload)+"-"+c.Name, func(t *testing.T) {
			objs := ComponentObjects(p, c, Input{Image: EffectiveImage(p, c), Version: p.Spec.Version, CertManager: true})
			if h := c.Hooks; h != nil {
				in := Input{Image: EffectiveImage(p, c), Version: p.Spec.Version}
				objs = append(objs, HookJob(p, c, HookBootstrap, h.Bootstrap, in), HookJob(p, c, HookPreUpgrade, h.PreUpgrade, in))
			}
			raw, err := yaml.Marshal(objs)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", c.Name+".yaml")
			if *update {
				if err := os.WriteFile(path, raw, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("reading golden file (run go test -update to write it): %v", err)
			}
			if string(raw) != string(want) {
				t.Errorf("objects of %s differ from %s:\n--- got\n%s\n--- want\n%s", c.Name, path, raw, want)
			}
		})
	}
}

func TestBuildersFollowStoragePolicyAndConfig(t *testing.T) {
	p := goldenPlatform()
	api := &p.Spec.Components[1]
	pvc := PVC(p, api)
	if pvc.Annotations[engine.AnnotationRetain] != "true" {
		t.Error("a Retain volume must outlive its owner")
	}
	in := Input{Image: "x", Version: p.Spec.Version}
	dep := Workload(p, api, in, RenderedConfig(p, api, in.Version)).(*appsv1.Deployment)
	if dep.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		t.Error("a Deployment with a ReadWriteOnce volume must be recreated, not rolled")
	}
	before := dep.Spec.Template.Annotations[appsv1alpha1.PlatformConfigHashAnnotation]
	api.Config["api.yaml"] = "listen: :9090\n"
	after := Workload(p, api, in, RenderedConfig(p, api, in.Version)).(*appsv1.Deployment).Spec.Template.Annotations[appsv1alpha1.PlatformConfigHashAnnotation]
	if before == "" || before == after {
		t.Errorf("a config change must change the pod template's hash: %q → %q", before, after)
	}
	sts := Workload(p, &p.Spec.Components[0], in, nil).(*appsv1.StatefulSet)
	if sts.Spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted != appsv1.DeletePersistentVolumeClaimRetentionPolicyType {
		t.Error("a StatefulSet with reclaimPolicy Delete must delete its claims with it")
	}
}

// podSpecOf is the pod spec of a component's workload or hook Job.
func podSpecOf(t *testing.T, obj any) corev1.PodTemplateSpec {
	t.Helper()
	switch w := obj.(type) {
	case *appsv1.Deployment:
		return w.Spec.Template
	case *appsv1.StatefulSet:
		return w.Spec.Template
	case *appsv1.DaemonSet:
		return w.Spec.Template
	case *batchv1.CronJob:
		return w.Spec.JobTemplate.Spec.Template
	case *batchv1.Job:
		return w.Spec.Template
	}
	t.Fatalf("%T has no pod template", obj)
	return corev1.PodTemplateSpec{}
}

func TestRestrictedComponentsAndHooksPassPodSecurityRestricted(t *testing.T) {
	p := goldenPlatform()
	for i := range p.Spec.Components {
		c := &p.Spec.Components[i]
		in := Input{Image: EffectiveImage(p, c), Version: p.Spec.Version, PodSecurity: appsv1alpha1.PodSecurityRestricted}
		objs := []any{Workload(p, c, in, RenderedConfig(p, c, in.Version))}
		if h := c.Hooks; h != nil {
			objs = append(objs, HookJob(p, c, HookBootstrap, h.Bootstrap, in), HookJob(p, c, HookPreUpgrade, h.PreUpgrade, in))
		}
		for _, obj := range objs {
			tmpl := podSpecOf(t, obj)
			if v := podsecurity.Restricted(tmpl.ObjectMeta, tmpl.Spec); len(v) > 0 {
				t.Errorf("%s's %T is refused by Pod Security restricted: %v", c.Name, obj, v)
			}
			if tmpl.Spec.AutomountServiceAccountToken == nil || *tmpl.Spec.AutomountServiceAccountToken {
				t.Errorf("%s's %T mounts a ServiceAccount token", c.Name, obj)
			}
			if g := tmpl.Spec.SecurityContext.FSGroup; (c.Storage != nil) != (g != nil) {
				t.Errorf("%s (storage %v): fsGroup %v; a volume needs a group its non-root user can write with, and only then", c.Name, c.Storage != nil, g)
			}
		}
		// Baseline: as the image says, and so refused by restricted.
		in.PodSecurity = appsv1alpha1.PodSecurityBaseline
		tmpl := podSpecOf(t, Workload(p, c, in, RenderedConfig(p, c, in.Version)))
		if tmpl.Spec.SecurityContext != nil || tmpl.Spec.AutomountServiceAccountToken != nil {
			t.Errorf("%s Baseline: pod security context %+v, token %v; want the image's own", c.Name, tmpl.Spec.SecurityContext, tmpl.Spec.AutomountServiceAccountToken)
		}
	}
}

func TestPodSecurityOfKeepsOnlyAnUnrestrictedWorkloadOfAnUnsetComponentAsItWas(t *testing.T) {
	c := func(ps appsv1alpha1.PodSecurity) *appsv1alpha1.PlatformComponent {
		return &appsv1alpha1.PlatformComponent{Name: "api", PodSecurity: ps}
	}
	for _, tc := range []struct {
		name   string
		c      *appsv1alpha1.PlatformComponent
		live   Live
		want   appsv1alpha1.PodSecurity
		legacy bool
	}{
		{"set Restricted over an old workload", c(appsv1alpha1.PodSecurityRestricted), Live{Exists: true, Unrestricted: true}, appsv1alpha1.PodSecurityRestricted, false},
		{"set Baseline", c(appsv1alpha1.PodSecurityBaseline), Live{}, appsv1alpha1.PodSecurityBaseline, false},
		{"unset, the old operator's workload", c(""), Live{Exists: true, Unrestricted: true}, appsv1alpha1.PodSecurityBaseline, true},
		{"unset, a restricted workload (the field removed without the webhook)", c(""), Live{Exists: true}, appsv1alpha1.PodSecurityRestricted, false},
		{"unset, no workload yet (admitted without the webhook)", c(""), Live{}, appsv1alpha1.PodSecurityRestricted, false},
	} {
		got, legacy := PodSecurityOf(tc.c, tc.live)
		if got != tc.want || legacy != tc.legacy {
			t.Errorf("%s: %s (legacy %v), want %s (legacy %v)", tc.name, got, legacy, tc.want, tc.legacy)
		}
	}
}

// What RenderConfig lets a component's files come to is what a pod
// template carries (workload.TemplateFiles), so a component that passed
// admission always gets its files.
func TestRenderedConfigFitsInAPodTemplate(t *testing.T) {
	if appsv1alpha1.MaxRenderedConfig > workload.MaxTemplateFiles {
		t.Fatalf("config files may render to %d bytes, a template carries %d", appsv1alpha1.MaxRenderedConfig, workload.MaxTemplateFiles)
	}
	p := &appsv1alpha1.Platform{}
	p.Name, p.Namespace = "big", "ns"
	c := &appsv1alpha1.PlatformComponent{Name: "api", Replicas: ptr.To[int32](1), Workload: appsv1alpha1.WorkloadDeployment,
		Config: map[string]string{"a.conf": strings.Repeat("x", appsv1alpha1.MaxRenderedConfig-len("a.conf"))}}
	dep := Workload(p, c, Input{Image: "i", Version: "1"}, RenderedConfig(p, c, "1")).(*appsv1.Deployment)
	var v *corev1.Volume
	for i := range dep.Spec.Template.Spec.Volumes {
		if dep.Spec.Template.Spec.Volumes[i].Name == "config" {
			v = &dep.Spec.Template.Spec.Volumes[i]
		}
	}
	if v == nil || v.DownwardAPI == nil || len(v.DownwardAPI.Items) != 1 {
		t.Fatalf("a config of exactly the limit is not in the template: %+v", v)
	}
}

// A component reads another's config file from its own template: the
// reference becomes the file's rendered content; an optional one to a file
// the config does not have sets nothing; a reference to anything else stays.
func TestConfigEnvWritesInTheFileAComponentReads(t *testing.T) {
	p := &appsv1alpha1.Platform{}
	p.Name, p.Namespace = "acme", "ns"
	p.Spec.Components = []appsv1alpha1.PlatformComponent{{Name: "api", Config: map[string]string{"api.conf": "name = {{ .Platform.Name }}"}}}
	ref := func(name, key string, optional bool) corev1.EnvVar {
		return corev1.EnvVar{Name: "V", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key, Optional: ptr.To(optional)}}}
	}
	users := ref("users-own", "k", false)
	got := configEnv(p, []corev1.EnvVar{{Name: "PLAIN", Value: "x"}, ref("acme-api-config", "api.conf", false), ref("acme-api-config", "nope", true), users}, "1")
	want := []corev1.EnvVar{{Name: "PLAIN", Value: "x"}, {Name: "V", Value: "name = acme"}, users}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2].ValueFrom == nil || got[2].ValueFrom.ConfigMapKeyRef.Name != "users-own" {
		t.Errorf("env = %+v\nwant %+v", got, want)
	}
}

// A hook reads a component's config file as the component does: from its
// own template.
func TestHookJobWritesInTheConfigFileItsEnvReads(t *testing.T) {
	p := &appsv1alpha1.Platform{}
	p.Name, p.Namespace = "acme", "ns"
	p.Spec.Components = []appsv1alpha1.PlatformComponent{{Name: "api", Config: map[string]string{"api.conf": "port = 8080"}}}
	h := &appsv1alpha1.HookJob{Env: []corev1.EnvVar{{Name: "CONF", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: "acme-api-config"}, Key: "api.conf"}}}},
		BackoffLimit: ptr.To[int32](0), ActiveDeadlineSeconds: ptr.To[int64](60)}
	job := HookJob(p, &p.Spec.Components[0], HookBootstrap, h, Input{Image: "i", Version: "1"})
	env := job.Spec.Template.Spec.Containers[0].Env
	if len(env) != 1 || env[0].Value != "port = 8080" || env[0].ValueFrom != nil {
		t.Errorf("hook env = %+v, want CONF written in", env)
	}
}
