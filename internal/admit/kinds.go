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

package admit

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
	networkingv1alpha1 "github.com/kubeforge/kubeforge/api/networking/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/validation"
)

// The admission rules of every kubeforge kind: the defaults live with the
// API, the rules in internal/validation; this table joins them once for
// the webhooks (Register) and the reconcilers (Prepare). What each spec
// references is found by one walker (validation.References), for every
// kind alike.
var (
	PodSet = kind(appsv1alpha1.GroupVersion, "PodSet", appsv1alpha1.DefaultPodSet, validation.PodSet, validation.PodSetUpdate,
		func(ps *appsv1alpha1.PodSet) { ps.Spec.Replicas = nil })
	Platform = kind(appsv1alpha1.GroupVersion, "Platform", appsv1alpha1.DefaultPlatform, validation.Platform, validation.PlatformUpdate,
		func(p *appsv1alpha1.Platform) {
			for i := range p.Spec.Components {
				p.Spec.Components[i].Replicas = nil
			}
		})
	Balancer = kind(networkingv1alpha1.GroupVersion, "Balancer", networkingv1alpha1.DefaultBalancer, validation.Balancer, validation.BalancerUpdate,
		func(b *networkingv1alpha1.Balancer) { b.Spec.Replicas = nil })
	Workspace = kind(idev1alpha1.GroupVersion, "Workspace", idev1alpha1.DefaultWorkspace, validation.Workspace, validation.WorkspaceUpdate,
		func(ws *idev1alpha1.Workspace) { ws.Spec.Started = nil })
	KubernetesCluster = kind(clusterv1alpha1.GroupVersion, "KubernetesCluster", clusterv1alpha1.DefaultKubernetesCluster,
		validation.KubernetesCluster, validation.KubernetesClusterUpdate,
		func(kc *clusterv1alpha1.KubernetesCluster) { kc.Spec.Paused = false })
)

func init() {
	Workspace.Implicit = func(ws *idev1alpha1.Workspace) []validation.Reference {
		made := field.NewPath("spec")
		refs := []validation.Reference{{Kind: validation.RefClaim, Name: idev1alpha1.WorkspaceHomeClaimName(ws), Path: made}}
		if ws.Spec.Auth.Mode != idev1alpha1.AuthNone {
			refs = append(refs, validation.Reference{Kind: validation.RefSecret, Name: idev1alpha1.WorkspaceAuthSecretName(ws), Path: made})
		}
		return refs
	}
	Platform.Implicit = func(p *appsv1alpha1.Platform) []validation.Reference {
		made := field.NewPath("spec")
		var refs []validation.Reference
		for _, s := range p.Spec.Secrets {
			refs = append(refs, validation.Reference{Kind: validation.RefSecret, Name: appsv1alpha1.PlatformGeneratedSecretName(p, s.Name), Path: made})
		}
		for i := range p.Spec.Components {
			c := &p.Spec.Components[i]
			if c.HasDatabase() {
				refs = append(refs, validation.Reference{Kind: validation.RefSecret, Name: appsv1alpha1.PlatformDatabaseSecretName(p, c), Path: made})
			}
			if c.Storage != nil && (c.Workload == "" || c.Workload == appsv1alpha1.WorkloadDeployment) {
				refs = append(refs, validation.Reference{Kind: validation.RefClaim, Name: appsv1alpha1.PlatformClaimName(p, c), Path: made})
			}
		}
		return refs
	}
	Workspace.ImplicitCEL = map[string]string{
		"claims": "[object.metadata.name + '-home']",
		"secrets": "has(object.spec.auth) && has(object.spec.auth.mode) && object.spec.auth.mode == '" + string(idev1alpha1.AuthNone) +
			"' ? [] : [object.metadata.name + '-auth']",
	}
	Platform.ImplicitCEL = map[string]string{
		"secrets": "(has(object.spec.secrets) ? object.spec.secrets.map(s, object.metadata.name + '-' + s.name) : []) + " +
			"(has(object.spec.components) ? object.spec.components.filter(c, has(c.database) && has(c.database.enabled) && c.database.enabled)" +
			".map(c, object.metadata.name + '-' + c.name + '-db') : [])",
		"claims": "has(object.spec.components) ? object.spec.components.filter(c, has(c.storage) && " +
			"(!has(c.workload) || c.workload == '' || c.workload == '" + string(appsv1alpha1.WorkloadDeployment) + "'))" +
			".map(c, object.metadata.name + '-' + c.name + '-data') : []",
	}
	Platform.DefaultNew = appsv1alpha1.DefaultNewPlatform
	Platform.Commands = append(Platform.Commands, appsv1alpha1.RotateSecretAnnotation, appsv1alpha1.RotateDatabasePasswordAnnotation)
	Platform.Consumed = []string{appsv1alpha1.RotateSecretAnnotation, appsv1alpha1.RotateDatabasePasswordAnnotation}
	KubernetesCluster.Commands = append(KubernetesCluster.Commands, clusterv1alpha1.RetryAnnotation)
}

func kind[T client.Object](gv schema.GroupVersion, name string, def func(T), create func(T) field.ErrorList, update func(T, T) field.ErrorList,
	harmless func(T)) Kind[T] {
	// Every kind takes the readmit command (stamp.go).
	return Kind[T]{GVK: gv.WithKind(name), Default: def, ValidateCreate: create, ValidateUpdate: update, Harmless: harmless,
		Commands: []string{ReadmitAnnotation}}
}

// WorkspaceWith is Workspace with the administrator's policy: the Ingress
// hosts and issuers it allows, and whether an IDE without a password may
// have an Ingress. The webhook and the reconciler both apply it.
func WorkspaceWith(pol validation.Policy) Kind[*idev1alpha1.Workspace] {
	return Workspace.With(func(ws *idev1alpha1.Workspace) field.ErrorList {
		return append(pol.Rules(ws.Spec, field.NewPath("spec")), validation.WorkspaceAnonymousIngress(ws, pol.AnonymousIngress)...)
	})
}

// PlatformWith is Platform with the administrator's policy: the Ingress
// hosts and issuers it allows.
func PlatformWith(pol validation.Policy) Kind[*appsv1alpha1.Platform] {
	return Platform.With(func(p *appsv1alpha1.Platform) field.ErrorList {
		return pol.Rules(p.Spec, field.NewPath("spec"))
	})
}
