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

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/test/testdb"
)

// ordersDB is the default name of the orders component's database:
// <namespace>_<platform>_<component>_<digest of the three>.
var ordersDB = strings.ReplaceAll(platformDBNS, "-", "_") + "_shopfront_orders_96b35ea9fcf7"

const platformDBNS = "e2e-platform-db"

// The database sample against a real PostgreSQL server on loopback, which
// the manager (a process on this machine) reaches as the sample's host.
var _ = Describe("Platform databases", Ordered, Label("platform", "database"), func() {
	var pg *testdb.Server

	shopfront := func(g Gomega) *appsv1alpha1.Platform {
		p := &appsv1alpha1.Platform{}
		g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: platformDBNS, Name: "shopfront"}, p)).To(Succeed())
		g.Expect(p.Status.ObservedGeneration).To(Equal(p.Generation))
		return p
	}
	secret := func(g Gomega, name string) *corev1.Secret {
		s := &corev1.Secret{}
		g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: platformDBNS, Name: name}, s)).To(Succeed())
		return s
	}
	logsIn := func(s *corev1.Secret) error {
		return pg.Exec(string(s.Data["username"]), string(s.Data["password"]), string(s.Data["database"]), "SELECT 1")
	}

	BeforeAll(func() {
		var err error
		pg, err = testdb.Start(testdb.PostgreSQL)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(pg.Close)
		kubectlEventually("create", "namespace", platformDBNS)
		_, err = kubectl("create", "secret", "generic", "-n", platformDBNS, "shopfront-db-admin",
			"--from-literal=username="+pg.AdminUser, "--from-literal=password="+pg.AdminPassword)
		Expect(err).NotTo(HaveOccurred())
		// The sample checks the server's certificate against its CA.
		ca := filepath.Join(GinkgoT().TempDir(), "ca.crt")
		Expect(os.WriteFile(ca, pg.CACert, 0o600)).To(Succeed())
		_, err = kubectl("create", "secret", "generic", "-n", platformDBNS, "shopfront-db-ca", "--from-file=ca.crt="+ca)
		Expect(err).NotTo(HaveOccurred())
	})

	It("should provision the sample's databases and run every component", func() {
		raw, err := os.ReadFile(filepath.Join(root, "config/samples/apps_v1alpha1_platform_database.yaml"))
		Expect(err).NotTo(HaveOccurred())
		sample := strings.NewReplacer(
			"host: postgresql.databases.svc.cluster.local", "host: "+pg.Host,
			"port: 5432", fmt.Sprintf("port: %d", pg.Port),
			"dropOnDelete: false", "dropOnDelete: true",
		).Replace(string(raw))
		_, err = kubectlStdin(sample, "apply", "-n", platformDBNS, "-f", "-")
		Expect(err).NotTo(HaveOccurred())

		Eventually(func(g Gomega) {
			p := shopfront(g)
			g.Expect(p.Status.Phase).To(Equal(appsv1alpha1.PlatformRunning))
			g.Expect(p.Status.Ready).To(Equal("3/3"))
		}, "3m").Should(Succeed())
		out, err := kubectl("get", "plat", "-n", platformDBNS, "shopfront", "-o", "wide", "--no-headers")
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(MatchRegexp(`^shopfront\s+2\.4\.0\s+Running\s+3/3\s+2\.4\.0\s+Provisioned\s+`))

		orders, payments := secret(Default, "shopfront-orders-db"), secret(Default, "shopfront-payments-db")
		Expect(string(orders.Data["database"])).To(Equal(ordersDB), "the default name carries the namespace")
		Expect(string(payments.Data["database"])).To(Equal("payments"))
		Expect(logsIn(orders)).To(Succeed())
		Expect(logsIn(payments)).To(Succeed())
		Expect(pg.Exec(string(orders.Data["username"]), string(orders.Data["password"]), "payments", "SELECT 1")).NotTo(Succeed())
	})

	It("should rotate a password on request and roll the component onto it", func() {
		old := secret(Default, "shopfront-orders-db")
		_, err := kubectl("annotate", "-n", platformDBNS, "plat/shopfront", appsv1alpha1.RotateDatabasePasswordAnnotation+"=orders")
		Expect(err).NotTo(HaveOccurred())
		var rotated *corev1.Secret
		Eventually(func(g Gomega) {
			rotated = secret(g, "shopfront-orders-db")
			g.Expect(rotated.Data["password"]).NotTo(Equal(old.Data["password"]))
			g.Expect(shopfront(g).Annotations).NotTo(HaveKey(appsv1alpha1.RotateDatabasePasswordAnnotation))
			// Every Running pod of orders was started with the new Secret.
			pods := &corev1.PodList{}
			g.Expect(k8sClient.List(ctx, pods, client.InNamespace(platformDBNS),
				client.MatchingLabels{appsv1alpha1.PlatformComponentLabel: "orders"})).To(Succeed())
			g.Expect(pods.Items).NotTo(BeEmpty())
			for _, p := range pods.Items {
				g.Expect(p.DeletionTimestamp).To(BeNil())
				g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning))
				g.Expect(p.Annotations).To(HaveKeyWithValue(appsv1alpha1.DatabaseSecretVersionAnnotation, rotated.ResourceVersion))
			}
		}, "2m").Should(Succeed())
		Expect(logsIn(old)).NotTo(Succeed(), "the old password still logs in")
		Expect(logsIn(rotated)).To(Succeed())
	})

	It("should drop the databases and users when the Platform with dropOnDelete goes", func() {
		orders := secret(Default, "shopfront-orders-db")
		_, err := kubectl("delete", "-n", platformDBNS, "plat/shopfront", "--wait=true", "--timeout=2m")
		Expect(err).NotTo(HaveOccurred())
		dbs, err := pg.Databases()
		Expect(err).NotTo(HaveOccurred())
		Expect(dbs).To(HaveEach(Not(Equal(ordersDB))))
		Expect(dbs).NotTo(ContainElements("payments"))
		users, err := pg.Users()
		Expect(err).NotTo(HaveOccurred())
		Expect(users).NotTo(ContainElement(string(orders.Data["username"])))
	})
})
