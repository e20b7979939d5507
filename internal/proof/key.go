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

package proof

import (
	"context"
	"crypto/rand"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The keys of the key Secret: the key that signs, and optionally the one
// it replaced, still accepted while objects are sealed again.
const (
	CurrentKey  = "current"
	PreviousKey = "previous"
	// DefaultSecretName is the key Secret's name in the operator's namespace.
	DefaultSecretName = "kubeforge-ownership-key"
)

// Load reads the ownership key Secret, creating it with a new random key
// when it does not exist yet: the first replica to start makes it, the
// others read the same. c must read from the API server, not a cache.
func Load(ctx context.Context, c client.Client, namespace, name string) (*Keyring, error) {
	s := &corev1.Secret{}
	err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, s)
	if apierrors.IsNotFound(err) {
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("generating the ownership key: %w", err)
		}
		s = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: map[string]string{
				"app.kubernetes.io/name": "kubeforge", "app.kubernetes.io/component": "ownership-key",
			}},
			Type: corev1.SecretTypeOpaque,
			Data: map[string][]byte{CurrentKey: key},
		}
		err = c.Create(ctx, s)
		if apierrors.IsAlreadyExists(err) {
			err = c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, s)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("reading the ownership key Secret %s/%s: %w", namespace, name, err)
	}
	keys := [][]byte{s.Data[CurrentKey]}
	if prev := s.Data[PreviousKey]; len(prev) > 0 {
		keys = append(keys, prev)
	}
	k, err := NewKeyring(s.CreationTimestamp.Time, keys...)
	if err != nil {
		return nil, fmt.Errorf("the ownership key Secret %s/%s: %w", namespace, name, err)
	}
	if k.Cluster, err = ClusterID(ctx, c); err != nil {
		return nil, err
	}
	return k, nil
}

// ClusterNamespace is the namespace whose UID names the cluster: every
// cluster has it, and it is not deleted.
const ClusterNamespace = "kube-system"

// +kubebuilder:rbac:groups="",resources=namespaces,resourceNames=kube-system,verbs=get

// ClusterID is the cluster's identity: the UID the API server gave the
// kube-system namespace, the identity Kubernetes tools commonly use.
func ClusterID(ctx context.Context, c client.Reader) (string, error) {
	ns := &corev1.Namespace{}
	if err := c.Get(ctx, client.ObjectKey{Name: ClusterNamespace}, ns); err != nil {
		return "", fmt.Errorf("reading the cluster's identity (the UID of namespace %s): %w", ClusterNamespace, err)
	}
	return string(ns.UID), nil
}
