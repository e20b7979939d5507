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
	"maps"
	"net"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/robfig/cron/v3"
	corev1 "k8s.io/api/core/v1"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
)

// maxObjectName keeps <platform>-<component>-config a DNS label.
const maxObjectName = utilvalidation.DNS1035LabelMaxLength - len("-config")

var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Platform returns every problem with a Platform's spec.
func Platform(p *appsv1alpha1.Platform) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if p.Spec.ImageRepository == "" {
		errs = append(errs, field.Required(spec.Child("imageRepository"), "e.g. registry.example.com/acme"))
	}
	if p.Spec.Version == "" {
		errs = append(errs, field.Required(spec.Child("version"), "the default tag of every component"))
	}
	errs = append(errs, validateDatabase(p)...)
	comps := spec.Child("components")
	if len(p.Spec.Components) == 0 {
		errs = append(errs, field.Required(comps, "at least one component"))
	}
	names := map[string]bool{}
	for i, c := range p.Spec.Components {
		cp := comps.Index(i)
		if names[c.Name] {
			errs = append(errs, field.Duplicate(cp.Child("name"), c.Name))
		}
		names[c.Name] = true
		for _, msg := range utilvalidation.IsDNS1035Label(c.Name) {
			errs = append(errs, field.Invalid(cp.Child("name"), c.Name, msg))
		}
		if obj := p.Name + "-" + c.Name; len(obj) > maxObjectName {
			errs = append(errs, field.Invalid(cp.Child("name"), c.Name,
				fmt.Sprintf("%q with the platform's name is longer than %d characters, too long for its objects' names", obj, maxObjectName)))
		}
		errs = append(errs, validateComponent(c, cp)...)
		errs = append(errs, validateConfig(p, &p.Spec.Components[i], cp)...)
		errs = append(errs, validateHooks(c, cp)...)
		errs = append(errs, validateIngress(c, cp)...)
		errs = append(errs, validateSecretRefs(p, c, cp)...)
		errs = append(errs, validateConfigRefs(p, c, cp)...)
	}
	errs = append(errs, validateSecrets(p)...)
	errs = append(errs, validateUpgradePolicy(p)...)
	for k := range p.Spec.Values {
		if k == "" {
			errs = append(errs, field.Invalid(spec.Child("values"), k, "a value needs a name"))
		}
	}
	for i, c := range p.Spec.Components {
		for j, d := range c.DependsOn {
			dp := comps.Index(i).Child("dependsOn").Index(j)
			switch {
			case d == c.Name:
				errs = append(errs, field.Invalid(dp, d, "a component cannot depend on itself"))
			case !names[d]:
				errs = append(errs, field.NotFound(dp, d))
			}
		}
	}
	if _, cycle := appsv1alpha1.DependencyOrder(p.Spec.Components); len(cycle) > 0 {
		errs = append(errs, field.Invalid(comps, strings.Join(cycle, " → "), "dependsOn forms a cycle"))
	}
	return errs
}

func validateComponent(c appsv1alpha1.PlatformComponent, cp *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch c.Workload {
	case "", appsv1alpha1.WorkloadDeployment, appsv1alpha1.WorkloadStatefulSet, appsv1alpha1.WorkloadDaemonSet, appsv1alpha1.WorkloadCronJob:
	default:
		errs = append(errs, field.NotSupported(cp.Child("workload"), c.Workload, []string{"Deployment", "StatefulSet", "DaemonSet", "CronJob"}))
	}
	if c.Image != "" && (c.ImageName != "" && c.ImageName != c.Name || c.Tag != "") {
		errs = append(errs, field.Invalid(cp.Child("image"), c.Image, "give either image or imageName and tag, not both"))
	}
	if c.Replicas != nil && !appsv1alpha1.HasReplicas(c.Workload) {
		errs = append(errs, field.Forbidden(cp.Child("replicas"), fmt.Sprintf("a %s has no replicas", c.Workload)))
	}
	if c.Workload == appsv1alpha1.WorkloadCronJob {
		if c.Schedule == "" {
			errs = append(errs, field.Required(cp.Child("schedule"), "a CronJob needs a schedule, e.g. \"0 3 * * *\""))
		} else if _, err := cronParser.Parse(c.Schedule); err != nil {
			errs = append(errs, field.Invalid(cp.Child("schedule"), c.Schedule, err.Error()))
		}
		if len(c.Ports) > 0 {
			errs = append(errs, field.Forbidden(cp.Child("ports"), "a CronJob serves no ports"))
		}
	} else if c.Schedule != "" {
		errs = append(errs, field.Forbidden(cp.Child("schedule"), "only a CronJob has a schedule"))
	}
	if s := c.Storage; s != nil {
		sp := cp.Child("storage")
		if c.Workload != "" && c.Workload != appsv1alpha1.WorkloadDeployment && c.Workload != appsv1alpha1.WorkloadStatefulSet {
			errs = append(errs, field.Forbidden(sp, fmt.Sprintf("a %s cannot have storage", c.Workload)))
		}
		if s.Size.Sign() <= 0 {
			errs = append(errs, field.Invalid(sp.Child("size"), s.Size.String(), "must be greater than 0"))
		}
		if s.MountPath != "" && (!path.IsAbs(s.MountPath) || path.Clean(s.MountPath) != s.MountPath) {
			errs = append(errs, field.Invalid(sp.Child("mountPath"), s.MountPath, "must be a clean absolute path"))
		}
		if s.ReclaimPolicy != "" && s.ReclaimPolicy != "Retain" && s.ReclaimPolicy != "Delete" {
			errs = append(errs, field.NotSupported(sp.Child("reclaimPolicy"), s.ReclaimPolicy, []string{"Retain", "Delete"}))
		}
	}
	for j, pt := range c.Ports {
		for _, msg := range utilvalidation.IsValidPortName(pt.Name) {
			errs = append(errs, field.Invalid(cp.Child("ports").Index(j).Child("name"), pt.Name, msg))
		}
	}
	for name := range c.Config {
		for _, msg := range utilvalidation.IsConfigMapKey(name) {
			errs = append(errs, field.Invalid(cp.Child("config").Key(name), name, msg))
		}
	}
	errs = append(errs, envNames(c.Env, cp.Child("env"))...)
	if c.Resources != nil {
		errs = append(errs, Resources(c.Resources, cp.Child("resources"))...)
	}
	if c.ReadinessProbe != nil {
		ports := map[string]bool{}
		for _, pt := range c.Ports {
			ports[pt.Name] = true
		}
		errs = append(errs, Probe(c.ReadinessProbe, ports, cp.Child("readinessProbe"))...)
	}
	return errs
}

// DatabaseEnv are the variables a component with a database gets from its
// Secret; its own env cannot set them.
var DatabaseEnv = []string{"DB_HOST", "DB_PORT", "DB_NAME", "DB_USER", "DB_PASSWORD"}

// databaseIdentifier is what kubeforge accepts as a database or user
// name: nothing that needs quoting on either engine.
var databaseIdentifier = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// Names the servers keep for themselves.
var (
	reservedDatabases = map[appsv1alpha1.DatabaseEngine][]string{
		appsv1alpha1.DatabaseMySQL:      {"mysql", "information_schema", "performance_schema", "sys", "kubeforge"},
		appsv1alpha1.DatabasePostgreSQL: {"postgres", "template0", "template1"},
	}
	reservedUsers = map[appsv1alpha1.DatabaseEngine][]string{
		appsv1alpha1.DatabaseMySQL:      {"root", "mysql", "mariadb_sys", "mysql_sys", "public"},
		appsv1alpha1.DatabasePostgreSQL: {"postgres", "public"},
	}
)

func validateDatabase(p *appsv1alpha1.Platform) field.ErrorList {
	var errs field.ErrorList
	dp := field.NewPath("spec", "database")
	if d := p.Spec.Database; d != nil {
		switch d.Engine {
		case appsv1alpha1.DatabaseMySQL, appsv1alpha1.DatabasePostgreSQL:
		default:
			errs = append(errs, field.NotSupported(dp.Child("engine"), d.Engine, []string{"mysql", "postgresql"}))
		}
		if d.Host == "" {
			errs = append(errs, field.Required(dp.Child("host"), "the server's host name or IP address"))
		} else if net.ParseIP(d.Host) == nil {
			for _, msg := range utilvalidation.IsDNS1123Subdomain(d.Host) {
				errs = append(errs, field.Invalid(dp.Child("host"), d.Host, msg))
			}
		}
		if d.Port < 0 || d.Port > 65535 {
			errs = append(errs, field.Invalid(dp.Child("port"), d.Port, "must be between 1 and 65535"))
		}
		if d.AdminSecretRef.Name == "" {
			errs = append(errs, field.Required(dp.Child("adminSecretRef", "name"), "a Secret with the keys username and password"))
		} else {
			for _, msg := range utilvalidation.IsDNS1123Subdomain(d.AdminSecretRef.Name) {
				errs = append(errs, field.Invalid(dp.Child("adminSecretRef", "name"), d.AdminSecretRef.Name, msg))
			}
		}
		tp := dp.Child("tls")
		switch d.TLS.Mode {
		case "", appsv1alpha1.DatabaseTLSDisable, appsv1alpha1.DatabaseTLSRequire, appsv1alpha1.DatabaseTLSVerifyFull:
		default:
			errs = append(errs, field.NotSupported(tp.Child("mode"), d.TLS.Mode, []string{"disable", "require", "verify-full"}))
		}
		verify := d.TLS.Mode == appsv1alpha1.DatabaseTLSVerifyFull || d.TLS.Mode == "" // "" defaults to verify-full
		switch {
		case verify && d.TLS.CASecretRef != nil && d.TLS.CASecretRef.Name == "":
			errs = append(errs, field.Required(tp.Child("caSecretRef", "name"), "names the Secret whose ca.crt verify-full checks the server's certificate against; leave caSecretRef out to trust the operator's authorities"))
		case !verify && d.TLS.CASecretRef != nil:
			errs = append(errs, field.Forbidden(tp.Child("caSecretRef"), "only verify-full checks a CA; set mode: verify-full"))
		case d.TLS.CASecretRef != nil:
			for _, msg := range utilvalidation.IsDNS1123Subdomain(d.TLS.CASecretRef.Name) {
				errs = append(errs, field.Invalid(tp.Child("caSecretRef", "name"), d.TLS.CASecretRef.Name, msg))
			}
		}
	}

	dbNames, users := map[string]bool{}, map[string]bool{}
	for i := range p.Spec.Components {
		c := &p.Spec.Components[i]
		cp := field.NewPath("spec", "components").Index(i)
		if !c.HasDatabase() {
			continue
		}
		if p.Spec.Database == nil {
			errs = append(errs, field.Required(dp, fmt.Sprintf("component %s asks for a database: name the server", c.Name)))
			continue
		}
		engine := p.Spec.Database.Engine
		name, user := appsv1alpha1.DatabaseName(p, c), appsv1alpha1.DatabaseUser(p, c)
		nameErrs := validateDatabaseIdentifier(cp.Child("database", "name"), name, appsv1alpha1.MaxDatabaseIdentifier, reservedDatabases[engine])
		errs = append(errs, nameErrs...)
		maxUser := appsv1alpha1.MaxDatabaseIdentifier
		if engine == appsv1alpha1.DatabaseMySQL {
			maxUser = appsv1alpha1.MaxMySQLUser
		}
		if len(nameErrs) == 0 || user != name { // a user copied from a bad name is the same mistake
			errs = append(errs, validateDatabaseIdentifier(cp.Child("database", "user"), user, maxUser, reservedUsers[engine])...)
		}
		if engine == appsv1alpha1.DatabasePostgreSQL && strings.HasPrefix(user, "pg_") {
			errs = append(errs, field.Invalid(cp.Child("database", "user"), user, "PostgreSQL reserves names starting with pg_"))
		}
		if dbNames[name] {
			errs = append(errs, field.Duplicate(cp.Child("database", "name"), name))
		}
		if users[user] {
			errs = append(errs, field.Duplicate(cp.Child("database", "user"), user))
		}
		dbNames[name], users[user] = true, true
		for j, e := range c.Env {
			if slices.Contains(DatabaseEnv, e.Name) {
				errs = append(errs, field.Forbidden(cp.Child("env").Index(j).Child("name"), fmt.Sprintf("%s comes from the component's database Secret", e.Name)))
			}
		}
	}
	return errs
}

func validateDatabaseIdentifier(fp *field.Path, name string, maxLen int, reserved []string) field.ErrorList {
	var errs field.ErrorList
	switch {
	case len(name) > maxLen:
		errs = append(errs, field.TooLong(fp, name, maxLen))
	case !databaseIdentifier.MatchString(name):
		errs = append(errs, field.Invalid(fp, name, "lower-case letters, digits and _, starting with a letter or _"))
	case slices.Contains(reserved, name):
		errs = append(errs, field.Invalid(fp, name, "the server keeps this name for itself"))
	}
	return errs
}

// PlatformUpdate returns every problem with a change to a
// Platform: a component keeps its workload type, and its storage keeps its
// class and mount path and never shrinks.
func PlatformUpdate(oldP, newP *appsv1alpha1.Platform) field.ErrorList {
	errs := Platform(newP)
	if o, n := oldP.Spec.Database, newP.Spec.Database; o != nil && n != nil {
		dp := field.NewPath("spec", "database")
		if o.Engine != n.Engine {
			errs = append(errs, field.Forbidden(dp.Child("engine"), fmt.Sprintf("cannot change (it is %s): the databases live on that server", o.Engine)))
		}
		if o.Host != n.Host {
			errs = append(errs, field.Forbidden(dp.Child("host"), fmt.Sprintf("cannot change (it is %s): the databases live on that server", o.Host)))
		}
	}
	old := map[string]appsv1alpha1.PlatformComponent{}
	for _, c := range oldP.Spec.Components {
		old[c.Name] = c
	}
	for i, c := range newP.Spec.Components {
		o, ok := old[c.Name]
		if !ok {
			continue
		}
		cp := field.NewPath("spec", "components").Index(i)
		if o.HasDatabase() && c.HasDatabase() && oldP.Spec.Database != nil && newP.Spec.Database != nil {
			if was, is := appsv1alpha1.DatabaseName(oldP, &o), appsv1alpha1.DatabaseName(newP, &c); was != is {
				errs = append(errs, field.Forbidden(cp.Child("database", "name"), fmt.Sprintf("cannot change (it is %s)", was)))
			}
			if was, is := appsv1alpha1.DatabaseUser(oldP, &o), appsv1alpha1.DatabaseUser(newP, &c); was != is {
				errs = append(errs, field.Forbidden(cp.Child("database", "user"), fmt.Sprintf("cannot change (it is %s)", was)))
			}
		}
		if workload(o) != workload(c) {
			errs = append(errs, field.Forbidden(cp.Child("workload"),
				fmt.Sprintf("cannot change from %s to %s; add a component with a new name instead", workload(o), workload(c))))
		}
		if o.Storage == nil || c.Storage == nil {
			continue
		}
		sp := cp.Child("storage")
		switch cmp := c.Storage.Size.Cmp(o.Storage.Size); {
		case cmp < 0:
			errs = append(errs, field.Forbidden(sp.Child("size"), fmt.Sprintf("cannot shrink from %s to %s", o.Storage.Size.String(), c.Storage.Size.String())))
		case cmp > 0 && workload(c) == appsv1alpha1.WorkloadStatefulSet:
			// A StatefulSet's volumeClaimTemplates cannot change.
			errs = append(errs, field.Forbidden(sp.Child("size"), fmt.Sprintf("cannot change for a StatefulSet (it is %s)", o.Storage.Size.String())))
		}
		if ptrString(o.Storage.StorageClassName) != ptrString(c.Storage.StorageClassName) {
			errs = append(errs, field.Forbidden(sp.Child("storageClassName"), "cannot change"))
		}
		if o.Storage.MountPath != "" && o.Storage.MountPath != c.Storage.MountPath {
			errs = append(errs, field.Forbidden(sp.Child("mountPath"), fmt.Sprintf("cannot change (it is %s)", o.Storage.MountPath)))
		}
	}
	return errs
}

func workload(c appsv1alpha1.PlatformComponent) appsv1alpha1.WorkloadType {
	if c.Workload == "" {
		return appsv1alpha1.WorkloadDeployment
	}
	return c.Workload
}

func ptrString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// validateConfig renders the component's config templates with the
// platform's facts, as the controller will.
func validateConfig(p *appsv1alpha1.Platform, c *appsv1alpha1.PlatformComponent, cp *field.Path) field.ErrorList {
	var errs field.ErrorList
	_, bad := appsv1alpha1.RenderConfig(p, c, p.Spec.Version)
	names := make([]string, 0, len(bad))
	for name := range bad {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		errs = append(errs, field.Invalid(cp.Child("config").Key(name), "(template)",
			"does not render: "+bad[name].Error()+`; write a literal {{ as {{ "{{" }}`))
	}
	return errs
}

func validateHooks(c appsv1alpha1.PlatformComponent, cp *field.Path) field.ErrorList {
	var errs field.ErrorList
	h := c.Hooks
	if h == nil {
		return nil
	}
	hp := cp.Child("hooks")
	if c.Workload == appsv1alpha1.WorkloadCronJob {
		errs = append(errs, field.Forbidden(hp, "a CronJob is never Ready or upgraded as a service is: it has no hooks"))
	}
	for _, hook := range []struct {
		name string
		job  *appsv1alpha1.HookJob
	}{{"bootstrap", h.Bootstrap}, {"preUpgrade", h.PreUpgrade}} {
		j := hook.job
		if j == nil {
			continue
		}
		jp := hp.Child(hook.name)
		if b := j.BackoffLimit; b != nil && (*b < 0 || *b > 20) {
			errs = append(errs, field.Invalid(jp.Child("backoffLimit"), *b, "must be between 0 and 20"))
		}
		if d := j.ActiveDeadlineSeconds; d != nil && (*d < 1 || *d > 86400) {
			errs = append(errs, field.Invalid(jp.Child("activeDeadlineSeconds"), *d, "must be between 1 and 86400"))
		}
		errs = append(errs, envNames(j.Env, jp.Child("env"))...)
	}
	return errs
}

// envNames checks the names of a container's env.
func envNames(env []corev1.EnvVar, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, e := range env {
		for _, msg := range utilvalidation.IsEnvVarName(e.Name) {
			errs = append(errs, field.Invalid(path.Index(i).Child("name"), e.Name, msg))
		}
	}
	return errs
}

func validateIngress(c appsv1alpha1.PlatformComponent, cp *field.Path) field.ErrorList {
	var errs field.ErrorList
	in := c.Ingress
	if in == nil {
		return nil
	}
	ip := cp.Child("ingress")
	if len(c.Ports) == 0 || c.Workload == appsv1alpha1.WorkloadCronJob {
		errs = append(errs, field.Forbidden(ip, "the component has no Service to route to: give it ports"))
	}
	host := strings.TrimPrefix(in.Host, "*.")
	if in.Host == "" {
		errs = append(errs, field.Required(ip.Child("host"), "e.g. api.example.com"))
	} else {
		for _, msg := range utilvalidation.IsDNS1123Subdomain(host) {
			errs = append(errs, field.Invalid(ip.Child("host"), in.Host, msg))
		}
	}
	if in.Path != "" && !strings.HasPrefix(in.Path, "/") {
		errs = append(errs, field.Invalid(ip.Child("path"), in.Path, "must start with /"))
	}
	if in.PathType != nil {
		switch *in.PathType {
		case "Prefix", "Exact", "ImplementationSpecific":
		default:
			errs = append(errs, field.NotSupported(ip.Child("pathType"), *in.PathType, []string{"Prefix", "Exact", "ImplementationSpecific"}))
		}
	}
	if in.Port != "" && !slices.ContainsFunc(c.Ports, func(pt appsv1alpha1.ComponentPort) bool { return pt.Name == in.Port }) {
		errs = append(errs, field.NotFound(ip.Child("port"), in.Port))
	}
	if t := in.TLS; t != nil {
		if t.IssuerRef.Name == "" {
			errs = append(errs, field.Required(ip.Child("tls", "issuerRef", "name"), "the cert-manager Issuer or ClusterIssuer that signs the certificate"))
		}
		if k := t.IssuerRef.Kind; k != "" && k != "Issuer" && k != "ClusterIssuer" {
			errs = append(errs, field.NotSupported(ip.Child("tls", "issuerRef", "kind"), k, []string{"Issuer", "ClusterIssuer"}))
		}
	}
	return errs
}

// validateSecretRefs checks that a reference to one of the Platform's
// generated Secrets names a key it generates.
func validateSecretRefs(p *appsv1alpha1.Platform, c appsv1alpha1.PlatformComponent, cp *field.Path) field.ErrorList {
	var errs field.ErrorList
	keys := map[string][]string{}
	for _, s := range p.Spec.Secrets {
		keys[p.Name+"-"+s.Name] = s.Keys
	}
	for j, e := range c.Env {
		if e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
			continue
		}
		ref := e.ValueFrom.SecretKeyRef
		if want, ours := keys[ref.Name]; ours && !slices.Contains(want, ref.Key) {
			errs = append(errs, field.NotFound(cp.Child("env").Index(j).Child("valueFrom", "secretKeyRef", "key"), ref.Key))
		}
	}
	return errs
}

// validateConfigRefs checks that a reference to a component's config
// (configMapKeyRef to <platform>-<component>-config) names an enabled
// component's file: the value is written in from the file (the ConfigMap
// only shows it), and a disabled component has none — its name is anyone's
// to take who may create ConfigMaps.
func validateConfigRefs(p *appsv1alpha1.Platform, c appsv1alpha1.PlatformComponent, cp *field.Path) field.ErrorList {
	errs := configRefs(p, c.Env, cp.Child("env"))
	if h := c.Hooks; h != nil {
		for _, hook := range []struct {
			name string
			job  *appsv1alpha1.HookJob
		}{{"bootstrap", h.Bootstrap}, {"preUpgrade", h.PreUpgrade}} {
			if hook.job != nil {
				errs = append(errs, configRefs(p, hook.job.Env, cp.Child("hooks", hook.name, "env"))...)
			}
		}
	}
	return errs
}

func configRefs(p *appsv1alpha1.Platform, env []corev1.EnvVar, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for j, e := range env {
		if e.ValueFrom == nil || e.ValueFrom.ConfigMapKeyRef == nil {
			continue
		}
		ref := e.ValueFrom.ConfigMapKeyRef
		rp := path.Index(j).Child("valueFrom", "configMapKeyRef")
		for _, other := range p.Spec.Components {
			if p.Name+"-"+other.Name+"-config" != ref.Name {
				continue
			}
			_, has := other.Config[ref.Key]
			switch {
			case other.Disable:
				errs = append(errs, field.Invalid(rp.Child("name"), ref.Name, fmt.Sprintf("component %s is disabled: it has no config", other.Name)))
			case !has && (ref.Optional == nil || !*ref.Optional):
				errs = append(errs, field.NotFound(rp.Child("key"), ref.Key))
			}
		}
	}
	return errs
}

func validateSecrets(p *appsv1alpha1.Platform) field.ErrorList {
	var errs field.ErrorList
	sp := field.NewPath("spec", "secrets")
	names := map[string]bool{}
	for i, s := range p.Spec.Secrets {
		ip := sp.Index(i)
		if names[s.Name] {
			errs = append(errs, field.Duplicate(ip.Child("name"), s.Name))
		}
		names[s.Name] = true
		for _, msg := range utilvalidation.IsDNS1035Label(s.Name) {
			errs = append(errs, field.Invalid(ip.Child("name"), s.Name, msg))
		}
		if full := p.Name + "-" + s.Name; len(full) > utilvalidation.DNS1123SubdomainMaxLength {
			errs = append(errs, field.Invalid(ip.Child("name"), s.Name, fmt.Sprintf("the Secret name %q is too long", full)))
		}
		if len(s.Keys) == 0 {
			errs = append(errs, field.Required(ip.Child("keys"), "at least one key, e.g. password"))
		}
		seen := map[string]bool{}
		for j, k := range s.Keys {
			for _, msg := range utilvalidation.IsConfigMapKey(k) {
				errs = append(errs, field.Invalid(ip.Child("keys").Index(j), k, msg))
			}
			if seen[k] {
				errs = append(errs, field.Duplicate(ip.Child("keys").Index(j), k))
			}
			seen[k] = true
		}
		if s.Length != 0 && (s.Length < 16 || s.Length > 128) {
			errs = append(errs, field.Invalid(ip.Child("length"), s.Length, "must be between 16 and 128"))
		}
		if s.ReclaimPolicy != "" && s.ReclaimPolicy != "Retain" && s.ReclaimPolicy != "Delete" {
			errs = append(errs, field.NotSupported(ip.Child("reclaimPolicy"), s.ReclaimPolicy, []string{"Retain", "Delete"}))
		}
	}
	return errs
}

func validateUpgradePolicy(p *appsv1alpha1.Platform) field.ErrorList {
	var errs field.ErrorList
	up := field.NewPath("spec", "upgradePolicy")
	switch p.Spec.UpgradePolicy.OnFailure {
	case "", appsv1alpha1.UpgradePause, appsv1alpha1.UpgradeRollback:
	default:
		errs = append(errs, field.NotSupported(up.Child("onFailure"), p.Spec.UpgradePolicy.OnFailure, []string{"Pause", "Rollback"}))
	}
	if d := p.Spec.UpgradePolicy.ProgressDeadlineSeconds; d != nil && (*d < 10 || *d > 86400) {
		errs = append(errs, field.Invalid(up.Child("progressDeadlineSeconds"), *d, "must be between 10 and 86400"))
	}
	return errs
}

// PlatformTransition are the rules a new Platform, or a change of what
// they look at, must pass, while Platforms stored before them stay valid:
// no Ingress annotation that ForbiddenIngressAnnotation refuses (kubeforge's
// own, snippets, certificate issuing, a host alias that is not DNS names).
// The Ingress builder drops such annotations of stored Platforms.
func PlatformTransition(oldP, newP *appsv1alpha1.Platform) field.ErrorList {
	var errs field.ErrorList
	was := map[string]map[string]string{}
	if oldP != nil {
		for _, c := range oldP.Spec.Components {
			if c.Ingress != nil {
				was[c.Name] = c.Ingress.Annotations
			}
		}
	}
	for i, c := range newP.Spec.Components {
		if c.Ingress == nil {
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(c.Ingress.Annotations)) {
			if why := ForbiddenIngressAnnotation(k, c.Ingress.Annotations[k]); why != "" {
				if old, ok := was[c.Name][k]; ok && old == c.Ingress.Annotations[k] {
					continue
				}
				errs = append(errs, field.Forbidden(field.NewPath("spec", "components").Index(i).Child("ingress", "annotations").Key(k), why))
			}
		}
	}
	return errs
}
