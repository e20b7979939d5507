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

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
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
	appsv1alpha1.DefaultPlatform(p)
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
		"accept ingress, hooks, secrets, values and templates": {mutate: func(p *P) {
			p.Spec.Values = map[string]string{"region": "eu"}
			p.Spec.Secrets = []appsv1alpha1.PlatformSecret{{Name: "admin", Keys: []string{"password"}}}
			api := &p.Spec.Components[1]
			api.Ingress = &appsv1alpha1.ComponentIngress{Host: "api.example.com", Port: "http"}
			api.Hooks = &appsv1alpha1.ComponentHooks{Bootstrap: &appsv1alpha1.HookJob{Command: []string{"init"}}}
			api.Config = map[string]string{"a.conf": `{{ .Values.region }} {{ service "api" "http" }} {{ .Platform.Version }}`}
			api.Env = []corev1.EnvVar{{Name: "P", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "acme-admin"}, Key: "password"}}}}
		}},
		"accept a reference to another component's config file, and an optional one to a file it does not have": {mutate: func(p *P) {
			p.Spec.Components[1].Config = map[string]string{"api.conf": "port = 8080"}
			p.Spec.Components[3].Env = []corev1.EnvVar{
				{Name: "A", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "acme-api-config"}, Key: "api.conf"}}},
				{Name: "B", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "acme-api-config"}, Key: "other.conf", Optional: new(true)}}},
			}
		}},
		"reject a reference to a config file a component does not have, or to a disabled component's config": {
			mutate: func(p *P) {
				p.Spec.Components[1].Config = map[string]string{"api.conf": "port = 8080"}
				p.Spec.Components[2].Disable = true
				p.Spec.Components[2].Config = map[string]string{"agent.conf": "x"}
				p.Spec.Components[3].Env = []corev1.EnvVar{
					{Name: "A", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
						LocalObjectReference: corev1.LocalObjectReference{Name: "acme-api-config"}, Key: "other.conf"}}},
					{Name: "B", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
						LocalObjectReference: corev1.LocalObjectReference{Name: "acme-agent-config"}, Key: "agent.conf"}}},
				}
				p.Spec.Components[1].Hooks = &appsv1alpha1.ComponentHooks{Bootstrap: &appsv1alpha1.HookJob{Env: []corev1.EnvVar{
					{Name: "C", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
						LocalObjectReference: corev1.LocalObjectReference{Name: "acme-agent-config"}, Key: "agent.conf"}}}}}}
			},
			want: []string{"spec.components[1].hooks.bootstrap.env[0].valueFrom.configMapKeyRef.name",
				"spec.components[3].env[0].valueFrom.configMapKeyRef.key", "spec.components[3].env[1].valueFrom.configMapKeyRef.name"},
		},
		"reject templates that do not render": {
			mutate: func(p *P) {
				p.Spec.Components[1].Config = map[string]string{
					"a.conf": "{{ .Values.missing }}", "b.conf": `{{ service "nope" "http" }}`, "c.conf": "{{ .Database.Host }}", "d.conf": "{{ unclosed"}
			},
			want: []string{"spec.components[1].config[a.conf]", "spec.components[1].config[b.conf]", "spec.components[1].config[c.conf]", "spec.components[1].config[d.conf]"},
		},
		"reject an ingress without ports, to an unknown port, with a bad host and issuer kind": {
			mutate: func(p *P) {
				p.Spec.Components[0].Ingress = &appsv1alpha1.ComponentIngress{Host: "db.example.com"}
				p.Spec.Components[1].Ingress = &appsv1alpha1.ComponentIngress{Host: "Not A Host", Port: "grpc",
					TLS: &appsv1alpha1.ComponentTLS{IssuerRef: idev1alpha1.IssuerReference{Name: "ca", Kind: "Vault"}}}
			},
			want: []string{"spec.components[0].ingress", "spec.components[1].ingress.host", "spec.components[1].ingress.port", "spec.components[1].ingress.tls.issuerRef.kind"},
		},
		"reject hooks on a CronJob and out of bounds": {
			mutate: func(p *P) {
				p.Spec.Components[3].Hooks = &appsv1alpha1.ComponentHooks{Bootstrap: &appsv1alpha1.HookJob{}}
				p.Spec.Components[1].Hooks = &appsv1alpha1.ComponentHooks{
					Bootstrap:  &appsv1alpha1.HookJob{BackoffLimit: new(int32(21))},
					PreUpgrade: &appsv1alpha1.HookJob{ActiveDeadlineSeconds: new(int64(0)), Env: []corev1.EnvVar{{Name: "1X"}}}}
			},
			want: []string{"spec.components[1].hooks.bootstrap.backoffLimit", "spec.components[1].hooks.preUpgrade.activeDeadlineSeconds",
				"spec.components[1].hooks.preUpgrade.env[0].name", "spec.components[3].hooks"},
		},
		"reject bad secrets, a key they do not generate, and a bad upgrade policy": {
			mutate: func(p *P) {
				p.Spec.Secrets = []appsv1alpha1.PlatformSecret{{Name: "admin", Keys: []string{"password", "password"}, Length: 8},
					{Name: "admin", Keys: nil, ReclaimPolicy: "Keep"}}
				p.Spec.Components[1].Env = []corev1.EnvVar{{Name: "P", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "acme-admin"}, Key: "token"}}}}
				p.Spec.UpgradePolicy = appsv1alpha1.PlatformUpgradePolicy{OnFailure: "Retry", ProgressDeadlineSeconds: new(int32(5))}
			},
			want: []string{"spec.components[1].env[0].valueFrom.secretKeyRef.key",
				"spec.secrets[0].keys[1]", "spec.secrets[0].length", "spec.secrets[1].name", "spec.secrets[1].keys", "spec.secrets[1].reclaimPolicy",
				"spec.upgradePolicy.onFailure", "spec.upgradePolicy.progressDeadlineSeconds"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := platform(tc.mutate)
			got := fieldsOf(Platform(p))
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Fatalf("fields = %q, want %q\n%v", got, tc.want, Platform(p))
			}
		})
	}
}

func TestValidatePlatformUpdate(t *testing.T) {
	old := platform(nil)
	appsv1alpha1.DefaultPlatform(old)
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
			got := fieldsOf(PlatformUpdate(old, p))
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Fatalf("fields = %q, want %q", got, tc.want)
			}
		})
	}
}

func FuzzPlatform(f *testing.F) {
	f.Add([]byte(`{"metadata":{"name":"p"},"spec":{"imageRepository":"r","version":"1","components":[{"name":"a","dependsOn":["b"]},{"name":"b","dependsOn":["a"]}]}}`))
	f.Add([]byte(`{"spec":{"components":[{"name":"c","workload":"CronJob","schedule":"* * *","replicas":2,"storage":{"size":"0"}}]}}`))
	f.Add([]byte(`{"metadata":{"name":"p"},"spec":{"imageRepository":"r","version":"1","database":{"engine":"mysql","host":"h","adminSecretRef":{"name":"s"}},"components":[{"name":"a","database":{"enabled":true,"name":"x` + "`" + `;--","user":"u'"}}]}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		p := &appsv1alpha1.Platform{}
		if err := json.Unmarshal(raw, p); err != nil {
			return
		}
		appsv1alpha1.DefaultPlatform(p)
		a, b := Platform(p), PlatformUpdate(p, p)
		if len(a) != len(b) {
			t.Fatalf("an unchanged update must give the create errors: %v vs %v", a, b)
		}
		if len(a) > 0 {
			return
		}
		// What validation accepts reaches SQL without needing its quotes.
		for i := range p.Spec.Components {
			c := &p.Spec.Components[i]
			if !c.HasDatabase() {
				continue
			}
			for _, n := range []string{appsv1alpha1.DatabaseName(p, c), appsv1alpha1.DatabaseUser(p, c)} {
				if strings.Trim(n, "abcdefghijklmnopqrstuvwxyz0123456789_") != "" || len(n) > 63 {
					t.Fatalf("accepted the database identifier %q", n)
				}
			}
		}
	})
}

// withDatabase gives the platform a PostgreSQL server and api a database.
func withDatabase(p *appsv1alpha1.Platform) {
	p.Spec.Database = &appsv1alpha1.PlatformDatabase{Engine: appsv1alpha1.DatabasePostgreSQL, Host: "db.example.com",
		AdminSecretRef: corev1.LocalObjectReference{Name: "db-admin"}}
	p.Spec.Components[1].Database = &appsv1alpha1.ComponentDatabase{Enabled: true}
}

func TestDefaultPlatformDatabase(t *testing.T) {
	p := platform(withDatabase)
	p.Name = "acme-prod"
	p.Spec.Components = append(p.Spec.Components, appsv1alpha1.PlatformComponent{Name: "billing", Database: &appsv1alpha1.ComponentDatabase{Enabled: true, Name: "ledger"}})
	appsv1alpha1.DefaultPlatform(p)
	d := p.Spec.Database
	if d.Port != 5432 || d.TLS.Mode != appsv1alpha1.DatabaseTLSVerifyFull {
		t.Errorf("port %d, tls %q: the certificate is checked unless asked not to", d.Port, d.TLS.Mode)
	}
	if got := p.Spec.Components[1].Database; got.Name != "default_acme_prod_api_6362a2df896d" || got.User != "default_acme_prod_api_6362a2df896d" {
		t.Errorf("api database %+v", got)
	}
	if got := p.Spec.Components[4].Database; got.Name != "ledger" || got.User != "ledger" {
		t.Errorf("billing database %+v: the user follows a given name", got)
	}

	my := platform(withDatabase)
	my.Name = strings.Repeat("long-platform", 3)
	my.Spec.Database.Engine = appsv1alpha1.DatabaseMySQL
	appsv1alpha1.DefaultPlatform(my)
	if my.Spec.Database.Port != 3306 {
		t.Errorf("mysql port %d", my.Spec.Database.Port)
	}
	db := my.Spec.Components[1].Database
	if db.Name != "default_long_platformlong_platformlong_platform_ap_001382affc11" || len(db.User) != 32 || !strings.HasPrefix(db.User, "default_long_platfo_") {
		t.Errorf("mysql names %+v: the user must fit in 32 characters", db)
	}
	if errs := Platform(my); len(errs) > 0 {
		t.Errorf("defaulted names must be valid: %v", errs)
	}
}

// Sanitising is not one-to-one: a-b/c and a/b-c both read a_b_c. The
// digest of the names keeps their databases apart.
func TestDefaultDatabaseNamesOfPlatformsThatReadAlikeDiffer(t *testing.T) {
	names := map[string]string{}
	for _, nn := range [][2]string{{"a-b", "c"}, {"a", "b-c"}, {"a", "b_c"}} {
		p := platform(withDatabase)
		p.Namespace, p.Name = nn[0], nn[1]
		p.Spec.Components[1].Name = "x"
		appsv1alpha1.DefaultPlatform(p)
		db := p.Spec.Components[1].Database.Name
		if !strings.HasPrefix(db, "a_b_c_x_") {
			t.Errorf("%s/%s: %q does not read as its names", nn[0], nn[1], db)
		}
		if other, ok := names[db]; ok {
			t.Errorf("%s/%s and %s have one database %q", nn[0], nn[1], other, db)
		}
		names[db] = nn[0] + "/" + nn[1]
	}
}

func TestValidatePlatformDatabase(t *testing.T) {
	type P = appsv1alpha1.Platform
	cases := map[string]struct {
		mutate func(*P)
		want   []string
	}{
		"accept a database": {mutate: withDatabase},
		"reject a database component without a server": {
			mutate: func(p *P) { withDatabase(p); p.Spec.Database = nil },
			want:   []string{"spec.database"},
		},
		"reject a server without an admin Secret": {
			mutate: func(p *P) { withDatabase(p); p.Spec.Database.AdminSecretRef.Name = "" },
			want:   []string{"spec.database.adminSecretRef.name"},
		},
		"reject an unknown engine and a host that is no name": {
			mutate: func(p *P) { withDatabase(p); p.Spec.Database.Engine = "oracle"; p.Spec.Database.Host = "db host" },
			want:   []string{"spec.database.engine", "spec.database.host"},
		},
		"accept an IP address as host": {
			mutate: func(p *P) { withDatabase(p); p.Spec.Database.Host = "fd00::10" },
		},
		"accept verify-full without a CA (the operator's authorities); reject a DB_ variable": {
			mutate: func(p *P) {
				withDatabase(p)
				p.Spec.Database.TLS.Mode = appsv1alpha1.DatabaseTLSVerifyFull
				p.Spec.Components[1].Env = []corev1.EnvVar{{Name: "DB_PASSWORD", Value: "x"}}
			},
			want: []string{"spec.components[1].env[0].name"},
		},
		"reject a CA reference without a name": {
			mutate: func(p *P) {
				withDatabase(p)
				p.Spec.Database.TLS.CASecretRef = &corev1.LocalObjectReference{}
			},
			want: []string{"spec.database.tls.caSecretRef.name"},
		},
		"reject a CA without verify-full": {
			mutate: func(p *P) {
				withDatabase(p)
				p.Spec.Database.TLS.Mode = appsv1alpha1.DatabaseTLSRequire
				p.Spec.Database.TLS.CASecretRef = &corev1.LocalObjectReference{Name: "ca"}
			},
			want: []string{"spec.database.tls.caSecretRef"},
		},
		"reject reserved, too long and duplicate names": {
			mutate: func(p *P) {
				withDatabase(p)
				p.Spec.Components[1].Database.Name = "template1"
				p.Spec.Components[1].Database.User = "pg_monitor"
				p.Spec.Components[0].Database = &appsv1alpha1.ComponentDatabase{Enabled: true, Name: strings.Repeat("d", 64), User: "pg_monitor"}
			},
			want: []string{"spec.components[0].database.name", "spec.components[0].database.user",
				"spec.components[1].database.name", "spec.components[1].database.user", "spec.components[1].database.user"},
		},
		"a disabled database asks for nothing": {
			mutate: func(p *P) { p.Spec.Components[1].Database = &appsv1alpha1.ComponentDatabase{Name: "Not Valid"} },
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := platform(tc.mutate)
			got := fieldsOf(Platform(p))
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Fatalf("fields = %q, want %q\n%v", got, tc.want, Platform(p))
			}
		})
	}
}

// Hostile names never pass: whatever validation accepts as a database or
// user name needs no quoting on either engine.
func TestValidatePlatformRejectsHostileDatabaseNames(t *testing.T) {
	for _, name := range []string{"x`; DROP DATABASE y; --", `x"`, "x'", `x\`, "ünï", "a b", "a;b", "A", "1abc", "", "a-b", "a.b", "a%b", "a\x00"} {
		for _, field := range []string{"name", "user"} {
			p := platform(withDatabase)
			db := p.Spec.Components[1].Database
			if field == "name" {
				db.Name = name
			} else {
				db.User = name
			}
			if name == "" {
				continue // empty is the default, not a name
			}
			if errs := Platform(p); len(errs) == 0 {
				t.Errorf("database %s %q was accepted", field, name)
			}
		}
	}
}

func TestValidatePlatformDatabaseUpdate(t *testing.T) {
	old := platform(withDatabase)
	appsv1alpha1.DefaultPlatform(old)
	cases := map[string]struct {
		mutate func(*appsv1alpha1.Platform)
		want   []string
	}{
		"dropOnDelete and TLS may change": {mutate: func(p *appsv1alpha1.Platform) {
			p.Spec.Database.DropOnDelete = true
			p.Spec.Database.TLS.Mode = appsv1alpha1.DatabaseTLSDisable
		}},
		"engine and host cannot change": {
			mutate: func(p *appsv1alpha1.Platform) {
				p.Spec.Database.Engine = appsv1alpha1.DatabaseMySQL
				p.Spec.Database.Host = "other.example.com"
			},
			want: []string{"spec.database.engine", "spec.database.host"},
		},
		"a component's database name and user cannot change": {
			mutate: func(p *appsv1alpha1.Platform) {
				p.Spec.Components[1].Database.Name = "other"
				p.Spec.Components[1].Database.User = "other"
			},
			want: []string{"spec.components[1].database.name", "spec.components[1].database.user"},
		},
		"a database may be turned off, keeping its names": {
			mutate: func(p *appsv1alpha1.Platform) { p.Spec.Components[1].Database.Enabled = false },
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := old.DeepCopy()
			tc.mutate(p)
			got := fieldsOf(PlatformUpdate(old, p))
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Fatalf("fields = %q, want %q", got, tc.want)
			}
		})
	}
}

// fieldsOf are the fields of errs, in order.
func fieldsOf(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Field)
	}
	return out
}
