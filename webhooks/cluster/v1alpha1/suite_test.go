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

package v1alpha1_test

import (
	"testing"

	"github.com/kubeforge/kubeforge/internal/test/testenv"
	webhooks "github.com/kubeforge/kubeforge/webhooks/cluster/v1alpha1"
)

// These specs run the webhooks in a manager and let a real kube-apiserver
// call them over HTTPS, as envtest's WebhookInstallOptions configure.
var suite = &testenv.WebhookSuite{}

func TestWebhooks(t *testing.T) {
	testenv.RunWebhooks(t, suite, webhooks.SetupKubernetesClusterWebhookWithManager)
}
