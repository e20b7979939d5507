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

package engine_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kubeforge/kubeforge/internal/engine"
	"github.com/kubeforge/kubeforge/internal/scheme"
)

var _ = Describe("MetadataFromCache", func() {
	// Two stores that disagree, so each answer shows where it came from:
	// the cache holds Secret and ConfigMap "cached", the API server
	// "live" (and a Pod "live").
	var c client.Client
	BeforeEach(func() {
		s := scheme.New()
		inCache := fake.NewClientBuilder().WithScheme(s).WithObjects(
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cached"}},
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cached"}},
			&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cached"}}).Build()
		live := fake.NewClientBuilder().WithScheme(s).WithObjects(
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "live"}},
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "live"}},
			&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "live"}}).Build()
		c = engine.MetadataFromCache(live, client.Options{Cache: &client.CacheOptions{Reader: inCache}})
	})
	meta := func(kind string) *metav1.PartialObjectMetadata {
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(kind))
		return m
	}
	key := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: "ns", Name: name} }

	It("reads the metadata of Secrets and ConfigMaps from the cache", func(ctx context.Context) {
		for _, kind := range []string{"Secret", "ConfigMap"} {
			Expect(c.Get(ctx, key("cached"), meta(kind))).To(Succeed(), kind)
			Expect(apierrors.IsNotFound(c.Get(ctx, key("live"), meta(kind)))).To(BeTrue(), kind)
			l := &metav1.PartialObjectMetadataList{}
			l.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(kind + "List"))
			Expect(c.List(ctx, l, client.InNamespace("ns"))).To(Succeed())
			Expect(l.Items).To(HaveLen(1))
			Expect(l.Items[0].Name).To(Equal("cached"), kind)
		}
	})

	It("reads their content, and the metadata of every other kind, through the client", func(ctx context.Context) {
		Expect(c.Get(ctx, key("live"), &corev1.Secret{})).To(Succeed())
		Expect(apierrors.IsNotFound(c.Get(ctx, key("cached"), &corev1.Secret{}))).To(BeTrue())
		Expect(c.Get(ctx, key("live"), &corev1.ConfigMap{})).To(Succeed())
		Expect(c.Get(ctx, key("live"), meta("Pod"))).To(Succeed())
		Expect(apierrors.IsNotFound(c.Get(ctx, key("cached"), meta("Pod")))).To(BeTrue())
		secrets := &corev1.SecretList{}
		Expect(c.List(ctx, secrets, client.InNamespace("ns"))).To(Succeed())
		Expect(secrets.Items).To(HaveLen(1))
		Expect(secrets.Items[0].Name).To(Equal("live"))
	})

	It("is the client itself when it was made without a cache", func() {
		live := fake.NewClientBuilder().Build()
		Expect(engine.MetadataFromCache(live, client.Options{})).To(BeIdenticalTo(live))
	})
})
