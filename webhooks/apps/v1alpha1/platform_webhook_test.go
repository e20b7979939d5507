/*
Copyright 2026 The kubeforge Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package v1alpha1

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
)

func platform(mutate func(*appsv1alpha1.Platform)) *appsv1alpha1.Platform {
	p := &appsv1alpha1.Platform{
		ObjectMeta: metav1.ObjectMeta{Name: "acme", Namespace: "default"},
		Spec: appsv1alpha1.PlatformSpec{
			ImageRepository: "reg.example.com/acme", Version: "1.0.0",
			Components: []appsv1alpha1.PlatformComponent{
				{Name: "db", Workload: appsv1alpha1.WorkloadStatefulSet, Storage: &appsv1alpha1.ComponentStorage{Size: resource.MustParse("1Gi")}},
				{Name: "api", DependsOn: []string{"db"}, Ports: []appsv1alpha1.ComponentPort{{Name: "http", Port: 8080}}},
				{Name: "agent", Workload: appsv1alpha1.WorkloadDaemonSet},
				{Name: "report", Workload: appsv1alpha1.WorkloadCronJob, Schedule: "0 3 * * *", DependsOn: []string{"api"}},
			},
		},
	}
	if mutate != nil {
		mutate(p)
	}
	return p
}

func TestDefaultPlatform(t *testing.T) {
	p := platform(nil)
	DefaultPlatform(p)
	db, api, agent, report := p.Spec.Components[0], p.Spec.Components[1], p.Spec.Components[2], p.Spec.Components[3]
	if api.Workload != appsv1alpha1.WorkloadDeployment || api.ImageName != "api" || *api.Replicas != 1 {
		t.Errorf("api: workload %s, imageName %s, replicas %v", api.Workload, api.ImageName, api.Replicas)
	}
	if api.Tag != "" {
		t.Errorf("the tag must stay empty so the version cascades, got %q", api.Tag)
	}
	if api.Ports[0].Protocol != "TCP" || api.Service.Type != "ClusterIP" {
		t.Errorf("api port %+v service %+v", api.Ports[0], api.Service)
	}
	if db.Storage.MountPath != "/var/lib/db" || db.Storage.ReclaimPolicy != "Retain" || *db.Replicas != 1 {
		t.Errorf("db storage %+v", db.Storage)
	}
	if agent.Replicas != nil || report.Replicas != nil {
		t.Error("DaemonSets and CronJobs get no replicas")
	}
	if report.Service.Type != "" {
		t.Error("a component without ports gets no Service type")
	}
}

func TestValidatePlatform(t *testing.T) {
	type P = appsv1alpha1.Platform
	cases := map[string]struct {
		mutate func(*P)
		want   []string
	}{
		"accept the four workload types": {},
		"reject duplicate names":         {mutate: func(p *P) { p.Spec.Components[2].Name = "api" }, want: []string{"spec.components[2].name"}},
		"reject a dependency that does not exist": {
			mutate: func(p *P) { p.Spec.Components[1].DependsOn = []string{"cache"} }, want: []string{"spec.components[1].dependsOn[0]"},
		},
		"reject a self-dependency": {
			mutate: func(p *P) { p.Spec.Components[0].DependsOn = []string{"db"} }, want: []string{"spec.components[0].dependsOn[0]"},
		},
		"reject a cycle": {
			mutate: func(p *P) { p.Spec.Components[0].DependsOn = []string{"report"} }, want: []string{"spec.components"},
		},
		"reject a CronJob without a schedule": {
			mutate: func(p *P) { p.Spec.Components[3].Schedule = "" }, want: []string{"spec.components[3].schedule"},
		},
		"reject a schedule that does not parse": {
			mutate: func(p *P) { p.Spec.Components[3].Schedule = "every night" }, want: []string{"spec.components[3].schedule"},
		},
		"reject a schedule on a Deployment": {
			mutate: func(p *P) { p.Spec.Components[1].Schedule = "0 3 * * *" }, want: []string{"spec.components[1].schedule"},
		},
		"reject replicas on a DaemonSet and a CronJob": {
			mutate: func(p *P) {
				p.Spec.Components[2].Replicas = new(int32(2))
				p.Spec.Components[3].Replicas = new(int32(1))
			},
			want: []string{"spec.components[2].replicas", "spec.components[3].replicas"},
		},
		"reject storage on a DaemonSet": {
			mutate: func(p *P) {
				p.Spec.Components[2].Storage = &appsv1alpha1.ComponentStorage{Size: resource.MustParse("1Gi")}
			},
			want: []string{"spec.components[2].storage"},
		},
		"reject both image and a tag": {
			mutate: func(p *P) { p.Spec.Components[1].Image = "redis:7"; p.Spec.Components[1].Tag = "x" },
			want:   []string{"spec.components[1].image"},
		},
		"reject a config file name that is no ConfigMap key": {
			mutate: func(p *P) { p.Spec.Components[1].Config = map[string]string{"a/b": "x"} },
			want:   []string{"spec.components[1].config[a/b]"},
		},
		"reject a component name too long for its objects": {
			mutate: func(p *P) { p.Name = strings.Repeat("p", 30); p.Spec.Components[2].Name = strings.Repeat("a", 30) },
			want:   []string{"spec.components[2].name"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := platform(tc.mutate)
			var got []string
			for _, e := range ValidatePlatform(p) {
				got = append(got, e.Field)
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Fatalf("fields = %q, want %q\n%v", got, tc.want, ValidatePlatform(p))
			}
		})
	}
}

func TestValidatePlatformUpdate(t *testing.T) {
	old := platform(nil)
	DefaultPlatform(old)
	cases := map[string]struct {
		mutate func(*appsv1alpha1.Platform)
		want   []string
	}{
		"a version bump is fine": {mutate: func(p *appsv1alpha1.Platform) { p.Spec.Version = "1.1.0" }},
		"a workload cannot change": {
			mutate: func(p *appsv1alpha1.Platform) { p.Spec.Components[1].Workload = appsv1alpha1.WorkloadStatefulSet },
			want:   []string{"spec.components[1].workload"},
		},
		"storage cannot shrink": {
			mutate: func(p *appsv1alpha1.Platform) { p.Spec.Components[0].Storage.Size = resource.MustParse("512Mi") },
			want:   []string{"spec.components[0].storage.size"},
		},
		"a StatefulSet's storage cannot grow either": {
			mutate: func(p *appsv1alpha1.Platform) { p.Spec.Components[0].Storage.Size = resource.MustParse("2Gi") },
			want:   []string{"spec.components[0].storage.size"},
		},
		"storage class and mount path cannot change": {
			mutate: func(p *appsv1alpha1.Platform) {
				class := "fast"
				p.Spec.Components[0].Storage.StorageClassName = &class
				p.Spec.Components[0].Storage.MountPath = "/data"
			},
			want: []string{"spec.components[0].storage.storageClassName", "spec.components[0].storage.mountPath"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := old.DeepCopy()
			tc.mutate(p)
			var got []string
			for _, e := range ValidatePlatformUpdate(old, p) {
				got = append(got, e.Field)
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Fatalf("fields = %q, want %q", got, tc.want)
			}
		})
	}
}

func FuzzValidatePlatform(f *testing.F) {
	f.Add([]byte(`{"metadata":{"name":"p"},"spec":{"imageRepository":"r","version":"1","components":[{"name":"a","dependsOn":["b"]},{"name":"b","dependsOn":["a"]}]}}`))
	f.Add([]byte(`{"spec":{"components":[{"name":"c","workload":"CronJob","schedule":"* * *","replicas":2,"storage":{"size":"0"}}]}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		p := &appsv1alpha1.Platform{}
		if err := json.Unmarshal(raw, p); err != nil {
			return
		}
		DefaultPlatform(p)
		a, b := ValidatePlatform(p), ValidatePlatformUpdate(p, p)
		if len(a) != len(b) {
			t.Fatalf("an unchanged update must give the create errors: %v vs %v", a, b)
		}
	})
}
