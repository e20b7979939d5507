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
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
)

// workspaceMaxName keeps the Workspace's name, which is also its Pod's,
// Service's and host name, and <name>-home a DNS label.
const workspaceMaxName = utilvalidation.DNS1035LabelMaxLength - len("-home")

// Workspace returns every problem with a Workspace's spec.
func Workspace(ws *idev1alpha1.Workspace) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	errs = append(errs, NameAtMost(ws.Name, workspaceMaxName)...)
	for _, msg := range utilvalidation.IsDNS1035Label(ws.Name) {
		if len(ws.Name) <= workspaceMaxName {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), ws.Name, msg+" (it names the workspace's Service)"))
		}
	}
	if ws.Spec.Port != 0 {
		for _, msg := range utilvalidation.IsValidPortNum(int(ws.Spec.Port)) {
			errs = append(errs, field.Invalid(spec.Child("port"), ws.Spec.Port, msg))
		}
	}
	switch ws.Spec.ImagePullPolicy {
	case "", corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
	default:
		errs = append(errs, field.NotSupported(spec.Child("imagePullPolicy"), ws.Spec.ImagePullPolicy,
			[]string{string(corev1.PullAlways), string(corev1.PullIfNotPresent), string(corev1.PullNever)}))
	}
	if ws.Spec.Resources != nil {
		errs = append(errs, Resources(ws.Spec.Resources, spec.Child("resources"))...)
	}

	st := spec.Child("storage")
	if sz := ws.Spec.Storage.Size; sz != nil && sz.Sign() <= 0 {
		errs = append(errs, field.Invalid(st.Child("size"), sz.String(), "must be greater than 0"))
	}
	if sc := ws.Spec.Storage.StorageClassName; sc != nil && *sc != "" {
		for _, msg := range utilvalidation.IsDNS1123Subdomain(*sc) {
			errs = append(errs, field.Invalid(st.Child("storageClassName"), *sc, msg))
		}
	}
	if mp := ws.Spec.Storage.MountPath; mp != "" && (!path.IsAbs(mp) || path.Clean(mp) != mp) {
		errs = append(errs, field.Invalid(st.Child("mountPath"), mp, "must be a clean absolute path, e.g. /home/coder"))
	}
	switch ws.Spec.Storage.ReclaimPolicy {
	case "", idev1alpha1.ReclaimDelete, idev1alpha1.ReclaimRetain:
	default:
		errs = append(errs, field.NotSupported(st.Child("reclaimPolicy"), ws.Spec.Storage.ReclaimPolicy,
			[]string{string(idev1alpha1.ReclaimDelete), string(idev1alpha1.ReclaimRetain)}))
	}

	envNames := map[string]bool{}
	for i, e := range ws.Spec.Env {
		p := spec.Child("env").Index(i)
		for _, msg := range utilvalidation.IsEnvVarName(e.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), e.Name, msg))
		}
		if why, set := operatorEnv[e.Name]; set {
			errs = append(errs, field.Invalid(p.Child("name"), e.Name, "is set by the operator "+why))
		} else if envNames[e.Name] {
			errs = append(errs, field.Duplicate(p.Child("name"), e.Name))
		}
		envNames[e.Name] = true
		if e.Value != "" && e.ValueFrom != nil {
			errs = append(errs, field.Invalid(p.Child("valueFrom"), "", "may not be given together with value"))
		}
	}
	if u := ws.Spec.User; u != "" {
		for _, msg := range utilvalidation.IsValidLabelValue(u) {
			errs = append(errs, field.Invalid(spec.Child("user"), u, msg+" (it is recorded as a label)"))
		}
	}
	if d := ws.Spec.MaxRunDuration; d != nil && d.Duration <= 0 {
		errs = append(errs, field.Invalid(spec.Child("maxRunDuration"), d.Duration.String(), "must be greater than 0"))
	}
	switch ws.Spec.Auth.Mode {
	case "", idev1alpha1.AuthPassword, idev1alpha1.AuthNone:
	default:
		errs = append(errs, field.NotSupported(spec.Child("auth", "mode"), ws.Spec.Auth.Mode,
			[]idev1alpha1.AuthMode{idev1alpha1.AuthPassword, idev1alpha1.AuthNone}))
	}
	if hp := ws.Spec.HealthPath; hp != "" && (!strings.HasPrefix(hp, "/") || len(hp) > 1024 || strings.ContainsAny(hp, " \t\r\n?#")) {
		errs = append(errs, field.Invalid(spec.Child("healthPath"), hp, "must be an absolute URL path without query, e.g. /healthz"))
	}
	if in := ws.Spec.Ingress; in != nil {
		ip := spec.Child("ingress")
		for _, msg := range utilvalidation.IsDNS1123Subdomain(in.Host) {
			errs = append(errs, field.Invalid(ip.Child("host"), in.Host, msg))
		}
		if in.ClassName != nil {
			for _, msg := range utilvalidation.IsDNS1123Subdomain(*in.ClassName) {
				errs = append(errs, field.Invalid(ip.Child("className"), *in.ClassName, msg))
			}
		}
		if in.TLS != nil {
			ref := in.TLS.IssuerRef
			rp := ip.Child("tls", "issuerRef")
			if ref.Name == "" {
				errs = append(errs, field.Required(rp.Child("name"), "the cert-manager Issuer or ClusterIssuer to sign the certificate"))
			}
			if ref.Kind != "" && ref.Kind != "Issuer" && ref.Kind != "ClusterIssuer" {
				errs = append(errs, field.NotSupported(rp.Child("kind"), ref.Kind, []string{"Issuer", "ClusterIssuer"}))
			}
		}
	}
	return errs
}

// operatorEnv are the IDE container's variables the operator sets, and
// from what.
var operatorEnv = map[string]string{
	"PORT":               "from spec.port",
	"HASHED_PASSWORD":    "from the Secret <name>-auth (spec.auth)",
	"KUBEFORGE_IDE_AUTH": "from spec.auth.mode",
}

// WorkspaceUpdate returns every problem with a change to a
// Workspace: the home volume's size, class and mount path cannot change.
func WorkspaceUpdate(oldWS, newWS *idev1alpha1.Workspace) field.ErrorList {
	errs := Workspace(newWS)
	st := field.NewPath("spec", "storage")
	o, n := oldWS.Spec.Storage, newWS.Spec.Storage
	if o.Size != nil && (n.Size == nil || o.Size.Cmp(*n.Size) != 0) {
		errs = append(errs, field.Forbidden(st.Child("size"), fmt.Sprintf("cannot change (it is %s)", o.Size.String())))
	}
	if !apiequality.Semantic.DeepEqual(o.StorageClassName, n.StorageClassName) {
		errs = append(errs, field.Forbidden(st.Child("storageClassName"), "cannot change"))
	}
	if o.MountPath != "" && o.MountPath != n.MountPath {
		errs = append(errs, field.Forbidden(st.Child("mountPath"), fmt.Sprintf("cannot change (it is %s)", o.MountPath)))
	}
	return errs
}

// WorkspaceAnonymousIngress refuses an Ingress to an IDE that asks for no
// password (auth.mode None) unless the administrator allows it
// (--workspace-allow-anonymous-ingress): anyone who reaches the host
// would get a shell in the Workspace.
func WorkspaceAnonymousIngress(ws *idev1alpha1.Workspace, allowed bool) field.ErrorList {
	if allowed || ws.Spec.Ingress == nil || ws.Spec.Auth.Mode != idev1alpha1.AuthNone {
		return nil
	}
	return field.ErrorList{field.Forbidden(field.NewPath("spec", "ingress"),
		"an IDE with auth.mode None gets no Ingress unless the administrator allows it (--workspace-allow-anonymous-ingress)")}
}
