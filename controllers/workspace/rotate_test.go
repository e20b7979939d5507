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

package workspace

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/engine"
	"github.com/kubeforge/kubeforge/internal/scheme"
)

// The password rotation of a Workspace made before ownership proofs deletes
// its Secret and its Pod each by the UID the apply (or, for the Pod, the
// cache) saw, never whatever is under the name by then.
func TestRotateMigratedDeletesByUID(t *testing.T) {
	ws := workspace(func(ws *idev1alpha1.Workspace) { ws.Spec.Auth.Mode = idev1alpha1.AuthPassword })
	secretName := idev1alpha1.WorkspaceAuthSecretName(ws)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ws.Namespace, Name: ws.Name, UID: "pod-in-cache"}}
	deleted := map[string]types.UID{}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(pod).WithInterceptorFuncs(interceptor.Funcs{
		Delete: func(_ context.Context, _ client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			o := &client.DeleteOptions{}
			o.ApplyOptions(opts)
			if o.Preconditions == nil || o.Preconditions.UID == nil {
				t.Errorf("%T %s deleted by name alone", obj, obj.GetName())
				return nil
			}
			deleted[obj.GetName()] = *o.Preconditions.UID
			return nil
		},
	}).Build()
	r := &Reconciler{Client: c, Engine: &engine.Engine{Client: c, Scheme: scheme.New()}}
	applied := engine.Result{
		Migrated: []string{"Secret/" + secretName},
		Live: map[string]client.Object{"Secret/" + secretName: &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
			Namespace: ws.Namespace, Name: secretName, UID: "secret-as-applied"}}},
	}
	if err := r.rotateMigrated(context.Background(), ws, applied); err != nil {
		t.Fatal(err)
	}
	want := map[string]types.UID{secretName: "secret-as-applied", ws.Name: "pod-in-cache"}
	if len(deleted) != len(want) || deleted[secretName] != want[secretName] || deleted[ws.Name] != want[ws.Name] {
		t.Errorf("deleted %v, want %v", deleted, want)
	}

	// Nothing migrated: nothing deleted.
	deleted = map[string]types.UID{}
	if err := r.rotateMigrated(context.Background(), ws, engine.Result{}); err != nil || len(deleted) != 0 {
		t.Errorf("nothing migrated: deleted %v, err %v", deleted, err)
	}
}
