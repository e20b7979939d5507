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
	"context"
	"fmt"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubeforge/kubeforge/internal/proof"
)

// The owner record (proof.CreatedByAnnotation, proof.OwnerAnnotation)
// holds also when the webhooks are not called — not installed, skipped, or
// their configurations deleted: a ValidatingAdmissionPolicy, which the API
// server evaluates itself, refuses a create whose record is not the
// requester (or a user the requester may impersonate) and any update that
// changes it, metadata-only patches included. It ships in config/policy
// (kustomize, generated from here by `make manifests`); under OLM, whose
// bundle cannot carry one, the manager creates it (--ensure-admission-policy).
// The references' policies are in referencepolicy.go.

// OwnerRecordPolicyName names the policy and its binding.
const OwnerRecordPolicyName = "kubeforge-owner-record"

// OwnerRecordPolicy returns the policy and its binding.
func OwnerRecordPolicy() (*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	annotation := func(obj, key string) string {
		return fmt.Sprintf("has(%[1]s.metadata.annotations) && '%[2]s' in %[1]s.metadata.annotations ? %[1]s.metadata.annotations['%[2]s'] : ''", obj, key)
	}
	rules := []admissionregistrationv1.NamedRuleWithOperations{}
	for group, resources := range map[string][]string{
		"apps.kubeforge.io":       {"podsets", "platforms"},
		"networking.kubeforge.io": {"balancers"},
		"ide.kubeforge.io":        {"workspaces"},
		"cluster.kubeforge.io":    {"kubernetesclusters"},
	} {
		rules = append(rules, admissionregistrationv1.NamedRuleWithOperations{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{group}, APIVersions: []string{"*"}, Resources: resources},
		}})
	}
	sortRules(rules)
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: OwnerRecordPolicyName, Labels: map[string]string{"app.kubernetes.io/name": "kubeforge"}},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy:    ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: rules},
			Variables: []admissionregistrationv1.Variable{
				{Name: "createdBy", Expression: annotation("object", proof.CreatedByAnnotation)},
				{Name: "owner", Expression: annotation("object", proof.OwnerAnnotation)},
				{Name: "user", Expression: "request.userInfo.username"},
			},
			Validations: []admissionregistrationv1.Validation{
				{
					Expression: "request.operation != 'CREATE' || variables.createdBy == '' || variables.createdBy == variables.user",
					Message:    proof.CreatedByAnnotation + " is recorded by kubeforge: it is the user who creates the object",
					Reason:     ptr.To(metav1.StatusReasonForbidden),
				},
				{
					Expression: "request.operation != 'CREATE' || variables.owner == '' || variables.owner == variables.user || " +
						"(variables.owner.startsWith('system:serviceaccount:') && variables.owner.split(':').size() == 4 ? " +
						"authorizer.group('').resource('serviceaccounts').namespace(variables.owner.split(':')[2])." +
						"name(variables.owner.split(':')[3]).check('impersonate').allowed() : " +
						"authorizer.group('').resource('users').name(variables.owner).check('impersonate').allowed())",
					Message: proof.OwnerAnnotation + " names the user the object belongs to: the requester, or a user the requester may impersonate",
					Reason:  ptr.To(metav1.StatusReasonForbidden),
				},
				{
					Expression: "request.operation != 'UPDATE' || (variables.createdBy == (" + annotation("oldObject", proof.CreatedByAnnotation) +
						") && variables.owner == (" + annotation("oldObject", proof.OwnerAnnotation) + "))",
					Message: "the owner record (" + proof.CreatedByAnnotation + ", " + proof.OwnerAnnotation + ") cannot change",
					Reason:  ptr.To(metav1.StatusReasonForbidden),
				},
			},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicyBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: OwnerRecordPolicyName, Labels: map[string]string{"app.kubernetes.io/name": "kubeforge"}},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        OwnerRecordPolicyName,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}
	return policy, binding
}

func sortRules(rules []admissionregistrationv1.NamedRuleWithOperations) {
	slices.SortFunc(rules, func(a, b admissionregistrationv1.NamedRuleWithOperations) int {
		return strings.Compare(a.APIGroups[0], b.APIGroups[0])
	})
}

// Policies are the ValidatingAdmissionPolicies kubeforge ships and their
// bindings: the owner record's, and each kind's references'.
func Policies() []client.Object {
	policy, binding := OwnerRecordPolicy()
	return append([]client.Object{policy, binding}, ReferencePolicies()...)
}

// EnsurePolicies creates or updates every policy and binding with
// server-side apply (the manager under OLM), and says how many objects it
// applied.
func EnsurePolicies(ctx context.Context, c client.Client) (applied int, err error) {
	for _, obj := range Policies() {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return applied, err
		}
		u := &unstructured.Unstructured{Object: m}
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("kubeforge"), client.ForceOwnership); err != nil {
			return applied, fmt.Errorf("applying %s %s: %w", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), err)
		}
		applied++
	}
	return applied, nil
}
