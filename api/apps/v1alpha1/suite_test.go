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
	"context"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubeforge/kubeforge/internal/test/testenv"
)

// These specs install the CRDs into a real kube-apiserver with no webhook,
// to prove that the schema and its CEL rules hold on their own.

var (
	env       *testenv.Env
	k8sClient client.Client
	ctx       = context.Background()
)

func TestAPI(t *testing.T) {
	testenv.Run(t, testenv.Suite{
		Name:    "apps.kubeforge.io API schema (no webhooks)",
		Options: testenv.Options{CRDs: true},
		Setup:   func(_ context.Context, e *testenv.Env) error { env, k8sClient = e, e.Client; return nil },
	})
}
