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
	"bytes"
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/engine"
	"github.com/kubeforge/kubeforge/internal/proof"
	"github.com/kubeforge/kubeforge/internal/scheme"
)

// The password rotation of a Workspace made before ownership proofs deletes
// its Secret and its Pod each by the UID the apply saw, never whatever is
// under the name by then; a Pod the apply did not see only when it is
// proven ours.
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
	keys, err := proof.NewKeyring(time.Now(), bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	r := &Reconciler{Client: c, Engine: &engine.Engine{Client: c, Scheme: scheme.New(), Proof: keys}}
	applied := engine.Result{
		Migrated: []string{"Secret/" + secretName},
		Live: map[string]client.Object{
			"Secret/" + secretName: &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ws.Namespace, Name: secretName, UID: "secret-as-applied"}},
			"Pod/" + ws.Name:       &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ws.Namespace, Name: ws.Name, UID: "pod-as-applied"}},
		},
	}
	if err := r.rotateMigrated(context.Background(), ws, applied); err != nil {
		t.Fatal(err)
	}
	want := map[string]types.UID{secretName: "secret-as-applied", ws.Name: "pod-as-applied"}
	if len(deleted) != len(want) || deleted[secretName] != want[secretName] || deleted[ws.Name] != want[ws.Name] {
		t.Errorf("deleted %v, want %v", deleted, want)
	}

	// The Pod's stage not applied: the Pod under the name, not proven ours
	// (no seal), is left alone.
	deleted = map[string]types.UID{}
	delete(applied.Live, "Pod/"+ws.Name)
	if err := r.rotateMigrated(context.Background(), ws, applied); err != nil {
		t.Fatal(err)
	}
	if _, ok := deleted[ws.Name]; ok || deleted[secretName] != "secret-as-applied" {
		t.Errorf("Pod not applied, not ours: deleted %v, want only the Secret", deleted)
	}

	// Nothing migrated: nothing deleted.
	deleted = map[string]types.UID{}
	if err := r.rotateMigrated(context.Background(), ws, engine.Result{}); err != nil || len(deleted) != 0 {
		t.Errorf("nothing migrated: deleted %v, err %v", deleted, err)
	}
}
