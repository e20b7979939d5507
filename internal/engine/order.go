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

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/kubeforge/kubeforge/internal/refwalk"
)

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
	for i, stage := range stages {
		for _, obj := range stage {
			self, err := e.keyOf(obj)
			if err != nil {
				return err
			}
			for _, used := range usesByName(obj) {
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
