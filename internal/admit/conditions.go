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
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/kubeforge/kubeforge/internal/proof"
)

// When the API server calls kubeforge's webhooks (their matchConditions,
// CEL evaluated inside the API server: a request they leave out costs no
// round trip). Every call the webhooks could answer differently from
// "admitted, unchanged" is kept:
//
//   - The mutating webhook is called for every create, and for every
//     update that changes the spec or any annotation or label whose key
//     holds "kubeforge.io/" (the stamp, the creator and owner records, the
//     commands, a Workspace's user label). An update of anything else —
//     other labels and annotations, finalizers — is one the webhooks
//     admit unchanged (MetadataOnly keeps
//     the stamp as it is, and the records and commands did not change).
//   - It refuses itself whatever the validating webhook would (the kind's
//     rules, the access checks: defaulter.Default), so the validating
//     webhook is the backstop for what the mutating one did not stamp: it
//     is called, under the same conditions, only for an object without a
//     stamp. A stamp a client wrote is never trusted for that — the
//     mutating webhook replaces it, and without the mutating webhook a
//     made-up one does not verify, so the reconcilers refuse the object
//     (NotAdmitted) and make nothing for it; an older stamp of the same
//     object written back approves only the spec it approved then. The
//     references policies leave out only a create stamped for its
//     requester and an update stamped over the very object it changes
//     (referencepolicy.go), which such a stamp is not.
//
// An OLM bundle cannot carry matchConditions: under OLM both webhooks are
// called for every request, which changes no answer.
var (
	callWhenChanged = `request.operation != 'UPDATE' || !has(object.spec) || !has(oldObject.spec) || object.spec != oldObject.spec || ` +
		kubeforgeKeysChanged("annotations") + " || " + kubeforgeKeysChanged("labels")
	callWhenUnstamped = `!has(object.metadata.annotations) || !('` + StampAnnotation + `' in object.metadata.annotations)`
	// stampedForThisRequest is CEL that is true for a request the mutating
	// webhook stamped: a create whose stamp records the requester as its
	// creator (the stamp covers the record; the webhook writes the
	// requester there), an update whose stamp was made over the stored
	// object it changes (StampedOverAnnotation). Another user's stamp, or
	// an older stamp written back, says so or verifies for nothing.
	stampedForThisRequest = `has(object.metadata.annotations) && '` + StampAnnotation + `' in object.metadata.annotations && (` +
		`request.operation == 'CREATE' && '` + proof.CreatedByAnnotation + `' in object.metadata.annotations && object.metadata.annotations['` +
		proof.CreatedByAnnotation + `'] == request.userInfo.username || ` +
		`request.operation == 'UPDATE' && '` + StampedOverAnnotation + `' in object.metadata.annotations && object.metadata.annotations['` +
		StampedOverAnnotation + `'] == oldObject.metadata.resourceVersion)`
)

// kubeforgeKeysChanged is CEL that is true when an update sets, changes or
// removes a metadata field's (annotations, labels) key holding
// "kubeforge.io/": the records, commands and labels the webhooks keep.
func kubeforgeKeysChanged(field string) string {
	return fmt.Sprintf(`(has(object.metadata.%[1]s) ? object.metadata.%[1]s : {}).exists(k, k.contains('kubeforge.io/') && `+
		`(!has(oldObject.metadata.%[1]s) || !(k in oldObject.metadata.%[1]s) || oldObject.metadata.%[1]s[k] != object.metadata.%[1]s[k])) || `+
		`(has(oldObject.metadata.%[1]s) ? oldObject.metadata.%[1]s : {}).exists(k, k.contains('kubeforge.io/') && `+
		`(!has(object.metadata.%[1]s) || !(k in object.metadata.%[1]s)))`, field)
}

// MatchConditions are the conditions of kubeforge's mutating (mutating
// true) or validating webhooks; config/webhook/manifests.yaml carries them
// (hack/webhookconditions, run by make manifests).
func MatchConditions(mutating bool) []admissionregistrationv1.MatchCondition {
	if mutating {
		return []admissionregistrationv1.MatchCondition{{Name: "spec-or-kubeforge-annotations-changed", Expression: callWhenChanged}}
	}
	// One expression, the stamp first: the API server evaluates every
	// condition of a webhook, where CEL's && stops at a stamp, before
	// comparing the specs of what the mutating webhook approved.
	return []admissionregistrationv1.MatchCondition{{Name: "not-stamped-and-spec-or-kubeforge-annotations-changed",
		Expression: "(" + callWhenUnstamped + ") && (" + callWhenChanged + ")"}}
}
