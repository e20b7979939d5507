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

package v1alpha1

import "fmt"

// Names of a KubernetesCluster's objects that the controller, the API
// server and the installers share.

// JobName is the name of an operation's Job (and of its ConfigMap): it
// derives from the cluster and the operation id alone, so a reconcile after
// a crash finds the Job instead of starting another.
func JobName(kc *KubernetesCluster, id string) string { return kc.Name + "-" + id }

// OperationID is the id of the operation started as the seq'th.
func OperationID(t OperationType, seq int64) string {
	return fmt.Sprintf("%s-%d", t, seq)
}

// CallbackSecretName is the name of an operation's callback Secret.
func CallbackSecretName(kc *KubernetesCluster, id string) string {
	return JobName(kc, id) + "-callback"
}

// The keys of an operation's callback Secret.
const (
	// CallbackTokenKey holds the token with which the operation's
	// installer may report to the API server, once.
	CallbackTokenKey = "token"
	// CallbackTokenHashAnnotation on the callback Secret holds the token's
	// SHA-256 (hex): the API checks a token against the Secret's metadata,
	// which its cache holds, and reads the Secret itself only for a token
	// that matches.
	CallbackTokenHashAnnotation = "cluster.kubeforge.io/callback-token-sha256"
	// CallbackURLKey holds the URL it reports to, when the operator was
	// told where its API is reachable.
	CallbackURLKey = "url"
	// CallbackCAKey holds the certificate authority of the API's serving
	// certificate, so that the installer verifies whom it reports to.
	CallbackCAKey = "ca.crt"
)

// KubeconfigSecretName names the Secret the create operation writes the
// admin kubeconfig into (key kubeconfig): <name>-kubeconfig.
func KubeconfigSecretName(kc *KubernetesCluster) string { return kc.Name + "-kubeconfig" }
