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

package engine

import (
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/kubeforge/kubeforge/internal/refwalk"
)

// AnnotationVerifiedWhereUsed marks a desired ConfigMap whose readers
// check its content against digests their own (sealed) object carries
// before they use it, as an installer Job does (VerifiedWhereUsed).
const AnnotationVerifiedWhereUsed = "kubeforge.io/verified-where-used"

// VerifiedWhereUsed marks a desired ConfigMap that a workload of the same
// owner may mount, because the workload checks what it reads against
// digests it carries itself. Without the mark, an apply in which a
// workload reads a ConfigMap the apply makes is refused (checkOrder): a
// ConfigMap is anyone's to rewrite who may write ConfigMaps in the
// namespace — a right many roles give without the right to change a
// Deployment — and a copy made under its name after a delete is one the
// operator never made, which a Pod started later would mount. Files a
// workload reads go into its pod template (workload.TemplateFiles).
func VerifiedWhereUsed(obj client.Object) { mark(obj, AnnotationVerifiedWhereUsed, "true") }

// ApplyStages stops after an object that is not the owner's, so that
// nothing is pointed at it: that holds only if what an object uses by name
// comes in an earlier stage. A Job in the same stage as the Secret it
// mounts, or a Role before the Secrets it grants, would be applied beside
// someone else's object under the wanted name. checkOrder holds every
// apply to the rule, for every kind, by the same walker that finds a
// spec's references (refwalk.References: what a pod template mounts,
// reads and runs as), and for RBAC by what a Role grants by name and a
// RoleBinding binds. An apply out of order is refused before any write:
// a bug of the kind's, which its tests meet at once.
func (e *Engine) checkOrder(stages [][]client.Object) error {
	at := map[string]int{}
	for i, stage := range stages {
		for _, obj := range stage {
			if k, err := e.keyOf(obj); err == nil {
				at[k] = i
			}
		}
	}
	unverified := map[string]bool{}
	for _, stage := range stages {
		for _, obj := range stage {
			if k, err := e.keyOf(obj); err == nil && strings.HasPrefix(k, "ConfigMap/") && obj.GetAnnotations()[AnnotationVerifiedWhereUsed] != "true" {
				unverified[k] = true
			}
		}
	}
	for i, stage := range stages {
		for _, obj := range stage {
			self, err := e.keyOf(obj)
			if err != nil {
				return err
			}
			uses := usesByName(obj)
			if _, isRole := obj.(*rbacv1.Role); !isRole {
				for _, used := range uses {
					if unverified[used] {
						return fmt.Errorf("%s reads %s, which it makes, by name: anyone who may write ConfigMaps could rewrite it, or make it anew; "+
							"carry the files in the pod template (workload.TemplateFiles), or verify them where they are read (VerifiedWhereUsed) "+
							"(a bug of the kind's, not of the spec)", self, used)
					}
				}
			}
			for _, used := range uses {
				if j, ok := at[used]; ok && j >= i && used != self {
					return fmt.Errorf("%s uses %s by name but is applied with it or before it; "+
						"what an object uses must come in an earlier stage (a bug of the kind's, not of the spec)", self, used)
				}
			}
		}
	}
	return nil
}

func (e *Engine) keyOf(obj client.Object) (string, error) {
	gvk, err := apiutil.GVKForObject(obj, e.Scheme)
	if err != nil {
		return "", err
	}
	return objectKey(gvk, obj.GetName()), nil
}

// rbacResourceKinds are the kinds of the resources a Role may grant by
// name that the operator makes.
var rbacResourceKinds = map[string]string{
	"secrets": "Secret", "configmaps": "ConfigMap", "serviceaccounts": "ServiceAccount", "persistentvolumeclaims": "PersistentVolumeClaim",
}

// usesByName are the "Kind/name" keys of the objects of obj's namespace
// that obj uses by name.
func usesByName(obj client.Object) []string {
	var out []string
	switch o := obj.(type) {
	case *rbacv1.Role:
		for _, r := range o.Rules {
			if !slices.Contains(r.APIGroups, "") {
				continue
			}
			for _, res := range r.Resources {
				if kind, ok := rbacResourceKinds[res]; ok {
					for _, n := range r.ResourceNames {
						out = append(out, kind+"/"+n)
					}
				}
			}
		}
		return out
	case *rbacv1.RoleBinding:
		if o.RoleRef.Kind == "Role" {
			out = append(out, "Role/"+o.RoleRef.Name)
		}
		for _, s := range o.Subjects {
			if s.Kind == rbacv1.ServiceAccountKind && (s.Namespace == "" || s.Namespace == o.Namespace) {
				out = append(out, "ServiceAccount/"+s.Name)
			}
		}
		return out
	}
	for _, ref := range refwalk.References(obj, field.NewPath("")) {
		if ref.Kind != "" && ref.Group == "" && ref.Name != "" && (ref.Namespace == "" || ref.Namespace == obj.GetNamespace()) {
			out = append(out, ref.Kind+"/"+ref.Name)
		}
	}
	return out
}
