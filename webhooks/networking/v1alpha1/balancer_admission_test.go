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
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/kubeforge/kubeforge/api/networking/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/test/testenv"
)

func balancerJSON(name, spec string) *unstructured.Unstructured {
	u, err := testenv.Object("networking.kubeforge.io/v1alpha1", "Balancer", "default", name, spec)
	Expect(err).NotTo(HaveOccurred())
	return u
}

func webhookRequests(path string) float64 {
	n, err := testenv.WebhookRequests(path)
	Expect(err).NotTo(HaveOccurred())
	return n
}

const (
	mutatePath   = "/mutate-networking-kubeforge-io-v1alpha1-balancer"
	validatePath = "/validate-networking-kubeforge-io-v1alpha1-balancer"
	denied       = `admission webhook "vbalancer-v1alpha1.kubeforge.io" denied the request`
	valid        = `{"selector":{"app":"shop"},"backends":[{"name":"v1","weight":90,"selector":{"version":"v1"}},{"name":"v2","weight":10,"selector":{"version":"v2"}}],"ports":[{"name":"http","port":80,"targetPort":8080}]}`
)

var _ = Describe("Balancer webhooks", func() {
	It("should fill in the defaults through the mutating webhook, which stamps it, so the validating webhook is not called", func() {
		mBefore, vBefore := webhookRequests(mutatePath), webhookRequests(validatePath)
		u := balancerJSON("defaults", `{"selector":{"app":"shop"},"backends":[{"name":"v1"}],"ports":[{"name":"dns","protocol":"UDP","port":53}]}`)
		Expect(suite.Client.Create(suite.Ctx, u)).To(Succeed())
		b := &networkingv1alpha1.Balancer{}
		Expect(suite.Client.Get(suite.Ctx, client.ObjectKeyFromObject(u), b)).To(Succeed())
		Expect(*b.Spec.Replicas).To(Equal(int32(1)))
		Expect(b.Spec.Image).To(Equal(networkingv1alpha1.BalancerDefaultImage))
		Expect(string(b.Spec.ServiceType)).To(Equal("ClusterIP"))
		Expect(*b.Spec.Backends[0].Weight).To(Equal(int32(1)))
		Expect(*b.Spec.Ports[0].TargetPort).To(Equal(intstr.FromInt32(53)))
		Expect(*b.Spec.PassiveHealth.MaxFails).To(Equal(networkingv1alpha1.BalancerDefaultMaxFails))
		Expect(b.Spec.PassiveHealth.FailTimeout.Duration).To(Equal(10 * time.Second))
		Expect(b.Spec.SessionAffinity).To(Equal(networkingv1alpha1.SessionAffinityNone))
		Expect(webhookRequests(mutatePath) - mBefore).To(BeNumerically(">=", 1))
		Expect(webhookRequests(validatePath)-vBefore).To(BeZero(), "its matchConditions leave out what the mutating webhook stamped")
	})

	// Each of these passes the CRD schema (or is also caught there) and
	// is refused by the validating webhook with a field error.
	DescribeTable("should reject bad input with field errors",
		func(name, spec string, fields ...string) {
			err := suite.Client.Create(suite.Ctx, balancerJSON(name, spec))
			Expect(err).To(HaveOccurred())
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
			Expect(err.Error()).To(ContainSubstring(denied))
			Expect(testenv.Causes(err)).To(ConsistOf(fields))
		},
		Entry("an invalid label key in the selector", "bad-label",
			`{"selector":{"-app-":"shop"},"backends":[{"name":"v1"}],"ports":[{"name":"http","port":80}]}`,
			"spec.selector"),
		Entry("an invalid label value in a backend selector", "bad-value",
			`{"selector":{"app":"shop"},"backends":[{"name":"v1","selector":{"version":"a b"}}],"ports":[{"name":"http","port":80}]}`,
			"spec.backends[0].selector"),
		Entry("a backend whose Service name would be too long", "long-backend",
			`{"selector":{"app":"shop"},"backends":[{"name":"`+strings.Repeat("b", 60)+`"}],"ports":[{"name":"http","port":80}]}`,
			"spec.backends[0].name"),
		Entry("a target port name that is no port name", "bad-target-name",
			`{"selector":{"app":"shop"},"backends":[{"name":"v1"}],"ports":[{"name":"http","port":80,"targetPort":"Web_Port"}]}`,
			"spec.ports[0].targetPort"),
		Entry("a target port number above 65535", "bad-target-number",
			`{"selector":{"app":"shop"},"backends":[{"name":"v1"}],"ports":[{"name":"http","port":80,"targetPort":70000}]}`,
			"spec.ports[0].targetPort"),
		Entry("a port name that is no IANA service name", "bad-port-name",
			`{"selector":{"app":"shop"},"backends":[{"name":"v1"}],"ports":[{"name":"8080","port":80}]}`,
			"spec.ports[0].name"),
	)

	It("should name the field of a resource quantity that does not parse", func() {
		err := suite.Client.Create(suite.Ctx, balancerJSON("bad-quantity",
			`{"selector":{"app":"shop"},"backends":[{"name":"v1"}],"ports":[{"name":"http","port":80}],"resources":{"limits":{"memory":"lots"}}}`))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
		Expect(testenv.Causes(err)).To(ConsistOf("spec.resources.limits[memory]"))
	})

	// These the CRD schema refuses too (CEL and OpenAPI rules), so they
	// hold without the webhook; the API server answers before calling it.
	DescribeTable("should reject what the CRD schema already refuses",
		func(name, spec, message string) {
			err := suite.Client.Create(suite.Ctx, balancerJSON(name, spec))
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
			Expect(err.Error()).To(ContainSubstring(message))
		},
		Entry("no port", "no-port", `{"selector":{"app":"shop"},"backends":[{"name":"v1"}],"ports":[]}`, "spec.ports"),
		Entry("no backend", "no-backend", `{"selector":{"app":"shop"},"backends":[],"ports":[{"name":"http","port":80}]}`, "spec.backends"),
		Entry("duplicate backend names", "dup-backend",
			`{"selector":{"app":"shop"},"backends":[{"name":"v1"},{"name":"v1"}],"ports":[{"name":"http","port":80}]}`, "Duplicate value"),
		Entry("duplicate port names", "dup-port",
			`{"selector":{"app":"shop"},"backends":[{"name":"v1"}],"ports":[{"name":"http","port":80},{"name":"http","port":81}]}`, "Duplicate value"),
		Entry("a repeated port and protocol", "dup-pair",
			`{"selector":{"app":"shop"},"backends":[{"name":"v1"}],"ports":[{"name":"a","port":80},{"name":"b","port":80,"protocol":"TCP"}]}`,
			"each (port, protocol) pair may appear only once"),
		Entry("port 0", "port-zero", `{"selector":{"app":"shop"},"backends":[{"name":"v1"}],"ports":[{"name":"http","port":0}]}`, "spec.ports[0].port"),
		Entry("port 65536", "port-high", `{"selector":{"app":"shop"},"backends":[{"name":"v1"}],"ports":[{"name":"http","port":65536}]}`, "spec.ports[0].port"),
		Entry("a weight above 1000", "weight-high",
			`{"selector":{"app":"shop"},"backends":[{"name":"v1","weight":1001}],"ports":[{"name":"http","port":80}]}`, "spec.backends[0].weight"),
		Entry("weights that add up to 0", "weights-zero",
			`{"selector":{"app":"shop"},"backends":[{"name":"v1","weight":0},{"name":"v2","weight":0}],"ports":[{"name":"http","port":80}]}`,
			"the weights of the backends must add up to more than 0"),
		Entry("no selector and a backend without one", "no-selector", `{"selector":{},"backends":[{"name":"v1"}],"ports":[{"name":"http","port":80}]}`,
			"give spec.selector, or a selector on every backend"),
		Entry("an unknown session affinity", "bad-affinity",
			`{"selector":{"app":"shop"},"backends":[{"name":"v1"}],"ports":[{"name":"http","port":80}],"sessionAffinity":"Cookie"}`,
			"spec.sessionAffinity"),
		Entry("maxFails above 100", "bad-max-fails",
			`{"selector":{"app":"shop"},"backends":[{"name":"v1"}],"ports":[{"name":"http","port":80}],"passiveHealth":{"maxFails":101}}`,
			"spec.passiveHealth.maxFails"),
	)

	It("should admit the manifests users write: a named target port, and backends that each have their own selector", func() {
		u := balancerJSON("user-manifest", `{"backends":[{"name":"stable","weight":9,"selector":{"app":"shop","track":"stable"}},`+
			`{"name":"canary","weight":1,"selector":{"app":"shop-canary"}}],"ports":[{"name":"http","port":80,"targetPort":"web"}],`+
			`"passiveHealth":{"maxFails":2,"failTimeout":"5s"},"sessionAffinity":"ClientIP"}`)
		Expect(suite.Client.Create(suite.Ctx, u)).To(Succeed())
		b := &networkingv1alpha1.Balancer{}
		Expect(suite.Client.Get(suite.Ctx, client.ObjectKeyFromObject(u), b)).To(Succeed())
		Expect(*b.Spec.Ports[0].TargetPort).To(Equal(intstr.FromString("web")))
		Expect(b.Spec.Selector).To(BeEmpty())
		Expect(*b.Spec.PassiveHealth.MaxFails).To(Equal(int32(2)))
		Expect(b.Spec.PassiveHealth.FailTimeout.Duration).To(Equal(5 * time.Second))
	})

	It("should refuse a fail timeout that is not whole seconds in the range, with a field error", func() {
		err := suite.Client.Create(suite.Ctx, balancerJSON("bad-fail-timeout",
			`{"selector":{"app":"shop"},"backends":[{"name":"v1"}],"ports":[{"name":"http","port":80}],"passiveHealth":{"failTimeout":"2h"}}`))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
		Expect(testenv.Causes(err)).To(ConsistOf("spec.passiveHealth.failTimeout"))
	})

	It("should reject an update that breaks a rule, and keep the stored object", func() {
		u := balancerJSON("update", valid)
		Expect(suite.Client.Create(suite.Ctx, u)).To(Succeed())
		b := &networkingv1alpha1.Balancer{}
		Expect(suite.Client.Get(suite.Ctx, client.ObjectKeyFromObject(u), b)).To(Succeed())
		b.Spec.Backends[1].Selector = map[string]string{"version": "not valid"}
		err := suite.Client.Update(suite.Ctx, b)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring(denied))
		Expect(suite.Client.Get(suite.Ctx, client.ObjectKeyFromObject(u), b)).To(Succeed())
		Expect(b.Spec.Backends[1].Selector).To(Equal(map[string]string{"version": "v2"}))
	})
})
