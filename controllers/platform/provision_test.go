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

package platform_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	"github.com/kubeforge/kubeforge/controllers/platform"
	"github.com/kubeforge/kubeforge/controllers/platform/database"
	"github.com/kubeforge/kubeforge/internal/engine"
	"github.com/kubeforge/kubeforge/internal/test/testdb"
	"github.com/kubeforge/kubeforge/internal/test/testenv"
)

// dbPlatform has three components: api and worker with a database, web
// without, on the server of engine. MariaDB is reached with TLS required,
// PostgreSQL with the certificate verified against its CA.
func dbPlatform(name, engine string) *appsv1alpha1.Platform {
	s := dbServers[engine]
	adminSecret(name+"-admin", s.AdminUser, s.AdminPassword)
	db := &appsv1alpha1.PlatformDatabase{
		Engine: appsv1alpha1.DatabaseEngine(engine), Host: s.Host, Port: int32(s.Port),
		AdminSecretRef: corev1.LocalObjectReference{Name: name + "-admin"},
		TLS:            appsv1alpha1.DatabaseTLS{Mode: appsv1alpha1.DatabaseTLSRequire},
	}
	if engine == testdb.PostgreSQL {
		ca := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name + "-ca", Namespace: "default"}, Data: map[string][]byte{"ca.crt": s.CACert}}
		Expect(suite.Client.Create(suite.Ctx, ca)).To(Succeed())
		db.TLS = appsv1alpha1.DatabaseTLS{Mode: appsv1alpha1.DatabaseTLSVerifyFull, CASecretRef: &corev1.LocalObjectReference{Name: name + "-ca"}}
	}
	p := newPlatform(name, "1.0.0",
		appsv1alpha1.PlatformComponent{Name: "api", Database: &appsv1alpha1.ComponentDatabase{Enabled: true}},
		appsv1alpha1.PlatformComponent{Name: "worker", Database: &appsv1alpha1.ComponentDatabase{Enabled: true}},
		appsv1alpha1.PlatformComponent{Name: "web"},
	)
	p.Spec.Database = db
	return p
}

// defaultDatabase is the default database name of component c of the
// Platform name in default.
func defaultDatabase(name, c string) string {
	return appsv1alpha1.DatabaseName(&appsv1alpha1.Platform{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}, &appsv1alpha1.PlatformComponent{Name: c})
}

func adminSecret(name, user, password string) {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Data: map[string][]byte{"username": []byte(user), "password": []byte(password)}}
	Expect(suite.Client.Create(suite.Ctx, s)).To(Succeed())
}

func setAdminPassword(name, password string) {
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s := &corev1.Secret{}
		if err := suite.Client.Get(suite.Ctx, key(name), s); err != nil {
			return err
		}
		s.Data["password"] = []byte(password)
		return suite.Client.Update(suite.Ctx, s)
	})).To(Succeed())
}

// credentials reads a component's database Secret.
func credentials(g Gomega, name string) map[string]string {
	s := &corev1.Secret{}
	g.Expect(suite.Client.Get(suite.Ctx, key(name), s)).To(Succeed())
	out := map[string]string{"resourceVersion": s.ResourceVersion}
	for k, v := range s.Data {
		out[k] = string(v)
	}
	return out
}

func databaseCondition(name string) func(g Gomega) metav1.Condition {
	return func(g Gomega) metav1.Condition {
		p := getPlatform(name)(g)
		c := meta.FindStatusCondition(p.Status.Conditions, appsv1alpha1.DatabaseConditionType)
		g.Expect(c).NotTo(BeNil())
		return *c
	}
}

func deploymentOf(g Gomega, name string) *appsv1.Deployment {
	d := &appsv1.Deployment{}
	g.Expect(suite.Client.Get(suite.Ctx, key(name), d)).To(Succeed())
	return d
}

var _ = Describe("Platform databases", func() {
	for _, engine := range []string{testdb.MariaDB, testdb.PostgreSQL} {
		Context("on "+engine, func() {
			var s *testdb.Server
			BeforeEach(func() { s = dbServers[engine] })
			name := func(n string) string { return "db" + engine[:2] + "-" + n }

			It("should give each component its own database and user, hand them over from a Secret, and rotate a password", func() {
				n := name("iso")
				Expect(suite.Client.Create(suite.Ctx, dbPlatform(n, engine))).To(Succeed())

				Eventually(databaseCondition(n)).Should(And(
					HaveField("Status", metav1.ConditionTrue), HaveField("Reason", platform.ReasonProvisioned)))
				api, worker := map[string]string{}, map[string]string{}
				Eventually(func(g Gomega) {
					api, worker = credentials(g, n+"-api-db"), credentials(g, n+"-worker-db")
				}).Should(Succeed())
				Expect(api).To(HaveKeyWithValue("database", defaultDatabase(n, "api")))
				Expect(api["database"]).To(HavePrefix("default_"+strings.ReplaceAll(n, "-", "_")+"_api_"), "the names, then a digest of them")
				Expect(api).To(HaveKeyWithValue("host", s.Host))
				Expect(api).To(HaveKeyWithValue("port", fmt.Sprint(s.Port)))
				Expect(api["url"]).To(HavePrefix(engine + "://" + api["username"] + ":" + api["password"] + "@"))
				Expect(len(api["password"])).To(BeNumerically(">=", 24))

				// Each component's pods get the variables from the Secret, never as values.
				Eventually(func(g Gomega) {
					d := deploymentOf(g, n+"-api")
					g.Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue(appsv1alpha1.DatabaseSecretVersionAnnotation, api["resourceVersion"]))
					env := d.Spec.Template.Spec.Containers[0].Env
					g.Expect(env).To(HaveLen(5))
					for _, e := range env {
						g.Expect(e.Value).To(BeEmpty())
						g.Expect(e.ValueFrom.SecretKeyRef.Name).To(Equal(n + "-api-db"))
					}
					raw, _ := json.Marshal(d)
					g.Expect(string(raw)).NotTo(ContainSubstring(api["password"]))
					g.Expect(deploymentOf(g, n+"-web").Spec.Template.Spec.Containers[0].Env).To(BeEmpty())
				}).Should(Succeed())
				Eventually(func(g Gomega) {
					p := getPlatform(n)(g)
					g.Expect(p.Status.Components).To(HaveLen(3))
					g.Expect(p.Status.Components[0].DatabaseReady).To(HaveValue(BeTrue()))
					g.Expect(p.Status.Components[1].DatabaseReady).To(HaveValue(BeTrue()))
					g.Expect(p.Status.Components[2].DatabaseReady).To(BeNil())
				}).Should(Succeed())

				// The Secret logs in; each user works in its own database, not in the other's.
				Expect(s.Exec(api["username"], api["password"], api["database"], "CREATE TABLE orders (id INT)")).To(Succeed())
				Expect(s.Exec(worker["username"], worker["password"], worker["database"], "CREATE TABLE jobs (id INT)")).To(Succeed())
				Expect(s.Exec(api["username"], api["password"], worker["database"], "CREATE TABLE intruder (id INT)")).NotTo(Succeed())
				Expect(s.Exec(worker["username"], worker["password"], api["database"], "SELECT * FROM orders")).NotTo(Succeed())

				By("rotating api's password")
				Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
					p := getPlatform(n)(Default)
					p.Annotations = map[string]string{appsv1alpha1.RotateDatabasePasswordAnnotation: "api"}
					return suite.Client.Update(suite.Ctx, p)
				})).To(Succeed())
				var rotated map[string]string
				Eventually(func(g Gomega) {
					rotated = credentials(g, n+"-api-db")
					g.Expect(rotated["password"]).NotTo(Equal(api["password"]))
					g.Expect(getPlatform(n)(g).Annotations).NotTo(HaveKey(appsv1alpha1.RotateDatabasePasswordAnnotation))
					// The component rolls onto the new Secret.
					g.Expect(deploymentOf(g, n+"-api").Spec.Template.Annotations).To(
						HaveKeyWithValue(appsv1alpha1.DatabaseSecretVersionAnnotation, rotated["resourceVersion"]))
				}).Should(Succeed())
				Expect(s.Exec(api["username"], api["password"], api["database"], "SELECT 1")).NotTo(Succeed(), "the old password still logs in")
				Expect(s.Exec(rotated["username"], rotated["password"], rotated["database"], "SELECT * FROM orders")).To(Succeed())
				Expect(credentials(Default, n+"-worker-db")["password"]).To(Equal(worker["password"]), "worker's password was rotated too")

				By("disabling worker: its database and Secret stay")
				update(n, func(p *appsv1alpha1.Platform) { p.Spec.Components[1].Disable = true })
				Eventually(gone(&appsv1.Deployment{}, n+"-worker")).Should(BeTrue())
				Consistently(exists(&corev1.Secret{}, n+"-worker-db"), "2s").Should(Succeed())
				Expect(s.Exec(worker["username"], worker["password"], worker["database"], "SELECT * FROM jobs")).To(Succeed())

				By("deleting the Platform without dropOnDelete: the databases stay")
				Expect(suite.Client.Delete(suite.Ctx, getPlatform(n)(Default))).To(Succeed())
				Eventually(gone(&appsv1alpha1.Platform{}, n)).Should(BeTrue())
				Expect(s.Databases()).To(ContainElements(api["database"], worker["database"]))
				Expect(s.Exec(worker["username"], worker["password"], worker["database"], "SELECT * FROM jobs")).To(Succeed())

				By("creating a Platform of the same name again: the data of the one before is not its own")
				for _, sec := range []string{n + "-api-db", n + "-worker-db"} { // as the garbage collector would (envtest has none)
					Expect(client.IgnoreNotFound(suite.Client.Delete(suite.Ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: sec}}))).To(Succeed())
				}
				again := dbPlatform(n+"-x", engine)
				again.Name = n
				Expect(suite.Client.Create(suite.Ctx, again)).To(Succeed())
				Eventually(databaseCondition(n)).Should(And(HaveField("Status", metav1.ConditionFalse),
					HaveField("Reason", database.ReasonNameConflict),
					HaveField("Message", ContainSubstring("was not created for Platform default/"+n))))
				Expect(s.Exec(worker["username"], worker["password"], worker["database"], "SELECT * FROM jobs")).To(Succeed(), "the first Platform's login and data")
				Expect(suite.Client.Delete(suite.Ctx, again)).To(Succeed())
				Eventually(gone(&appsv1alpha1.Platform{}, n)).Should(BeTrue())
			})

			It("should not take over a database someone made by hand: NameConflict, and the database untouched after the Platform goes", func() {
				n := name("theirs")
				db := defaultDatabase(n, "api")
				Expect(s.Exec(s.AdminUser, s.AdminPassword, "", "CREATE DATABASE "+db)).To(Succeed())
				Expect(s.Exec(s.AdminUser, s.AdminPassword, db, "CREATE TABLE precious (id INT)", "INSERT INTO precious VALUES (42)")).To(Succeed())
				p := dbPlatform(n, engine)
				p.Spec.Database.DropOnDelete = true
				Expect(suite.Client.Create(suite.Ctx, p)).To(Succeed())
				Eventually(databaseCondition(n)).Should(And(HaveField("Status", metav1.ConditionFalse),
					HaveField("Reason", database.ReasonNameConflict), HaveField("Message", ContainSubstring("the database "+db+" exists on the server"))))
				Expect(suite.Client.Delete(suite.Ctx, p)).To(Succeed())
				Eventually(func() bool {
					return apierrors.IsNotFound(suite.Client.Get(suite.Ctx, key(n), &appsv1alpha1.Platform{}))
				}, "30s").Should(BeTrue())
				Expect(s.Exec(s.AdminUser, s.AdminPassword, db, "SELECT id FROM precious WHERE id = 42")).To(Succeed(), "the table is still there")
				Expect(s.Exec(s.AdminUser, s.AdminPassword, "", "DROP DATABASE "+db)).To(Succeed())
			})

			It("should drop the databases and users on delete with dropOnDelete, and wait while the server is away", func() {
				n := name("drop")
				p := dbPlatform(n, engine)
				p.Spec.Database.DropOnDelete = true
				Expect(suite.Client.Create(suite.Ctx, p)).To(Succeed())
				Eventually(databaseCondition(n)).Should(HaveField("Status", metav1.ConditionTrue))
				Eventually(func(g Gomega) []string { return getPlatform(n)(g).Finalizers }).Should(ContainElement(appsv1alpha1.DatabaseFinalizer))
				api := credentials(Default, n+"-api-db")
				worker := credentials(Default, n+"-worker-db")

				By("deleting it while the server is stopped: the finalizer holds it and says why")
				Expect(s.Stop()).To(Succeed())
				started := false
				DeferCleanup(func() {
					if !started {
						Expect(s.Start()).To(Succeed())
					}
				})
				Expect(suite.Client.Delete(suite.Ctx, getPlatform(n)(Default))).To(Succeed())
				Eventually(databaseCondition(n)).Should(And(
					HaveField("Status", metav1.ConditionFalse), HaveField("Reason", "ServerUnreachable"),
					HaveField("Message", ContainSubstring("dropOnDelete"))))
				Consistently(exists(&appsv1alpha1.Platform{}, n), "2s").Should(Succeed())

				By("starting the server: the databases are dropped and the Platform goes")
				Expect(s.Start()).To(Succeed())
				started = true
				Eventually(gone(&appsv1alpha1.Platform{}, n), "90s").Should(BeTrue())
				Expect(s.Databases()).NotTo(ContainElements(api["database"]))
				Expect(s.Databases()).NotTo(ContainElements(worker["database"]))
				users, err := s.Users()
				Expect(err).NotTo(HaveOccurred())
				Expect(slices.Contains(users, api["username"]) || slices.Contains(users, worker["username"])).To(BeFalse(), "users left: %v", users)
			})

			It("should say the same of every address it cannot log in at, whatever answers there: nothing, HTTP or a banner", func() {
				closed, err := net.Listen("tcp", "127.0.0.1:0")
				Expect(err).NotTo(HaveOccurred())
				nothing := closed.Addr().String()
				Expect(closed.Close()).To(Succeed())
				web := httptest.NewServer(http.NotFoundHandler())
				DeferCleanup(web.Close)
				banner, err := net.Listen("tcp", "127.0.0.1:0")
				Expect(err).NotTo(HaveOccurred())
				DeferCleanup(banner.Close)
				go func() {
					for {
						c, err := banner.Accept()
						if err != nil {
							return
						}
						_, _ = c.Write([]byte("SSH-2.0-OpenSSH_9.6\r\n"))
						time.Sleep(100 * time.Millisecond)
						_ = c.Close()
					}
				}()
				var messages []string
				for i, addr := range []string{nothing, web.Listener.Addr().String(), banner.Addr().String()} {
					n := name(fmt.Sprintf("probe%d", i))
					p := dbPlatform(n, engine)
					host, port, err := net.SplitHostPort(addr)
					Expect(err).NotTo(HaveOccurred())
					p.Spec.Database.Host = host
					fmt.Sscan(port, &p.Spec.Database.Port)
					Expect(suite.Client.Create(suite.Ctx, p)).To(Succeed())
					// The message of the condition that says ServerUnreachable, read
					// with it: a retry reports Provisioning again meanwhile.
					var message string
					Eventually(func(g Gomega) {
						c := databaseCondition(n)(g)
						g.Expect(c).To(And(HaveField("Status", metav1.ConditionFalse), HaveField("Reason", database.ReasonServerUnreachable)))
						message = c.Message
					}, "30s").Should(Succeed(), "what answers at %s", addr)
					messages = append(messages, strings.ReplaceAll(message, addr, "<address>"))
					Expect(suite.Client.Delete(suite.Ctx, p)).To(Succeed())
				}
				Expect(messages[1]).To(Equal(messages[0]), "HTTP is told apart from nothing")
				Expect(messages[2]).To(Equal(messages[0]), "a banner is told apart from nothing")
			})

			It("should report a wrong admin password and a stopped server, start the other components, and recover without help", func() {
				n := name("fail")
				p := dbPlatform(n, engine)
				Expect(suite.Client.Create(suite.Ctx, p)).To(Succeed())
				Eventually(databaseCondition(n)).Should(HaveField("Status", metav1.ConditionTrue))

				By("a new Platform whose admin password is wrong")
				m := name("auth")
				q := dbPlatform(m, engine)
				Expect(suite.Client.Create(suite.Ctx, q)).To(Succeed())
				setAdminPassword(m+"-admin", "not-the-password")
				// The first reconcile may have provisioned with the right
				// one; a rotation makes it log in again.
				Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
					p := getPlatform(m)(Default)
					p.Annotations = map[string]string{appsv1alpha1.RotateDatabasePasswordAnnotation: "api"}
					return suite.Client.Update(suite.Ctx, p)
				})).To(Succeed())
				Eventually(databaseCondition(m)).Should(And(
					HaveField("Status", metav1.ConditionFalse), HaveField("Reason", "AuthenticationFailed")))
				// Degraded, once no new attempt is pending (one may be under
				// way, as the rotation asked, with the condition as it was).
				Eventually(func(g Gomega) appsv1alpha1.PlatformPhase { return getPlatform(m)(g).Status.Phase }).Should(Equal(appsv1alpha1.PlatformDegraded))
				Expect(databaseCondition(m)(Default).Message).NotTo(ContainSubstring("not-the-password"))
				setAdminPassword(m+"-admin", s.AdminPassword)
				Eventually(databaseCondition(m), "90s").Should(HaveField("Status", metav1.ConditionTrue))

				By("a new Platform while the server is stopped")
				Expect(s.Stop()).To(Succeed())
				started := false
				DeferCleanup(func() {
					if !started {
						Expect(s.Start()).To(Succeed())
					}
				})
				o := name("down")
				Expect(suite.Client.Create(suite.Ctx, dbPlatform(o, engine))).To(Succeed())
				Eventually(databaseCondition(o)).Should(And(
					HaveField("Status", metav1.ConditionFalse), HaveField("Reason", "ServerUnreachable")))
				// web has no database: it is deployed; api and worker wait for theirs.
				Eventually(exists(&appsv1.Deployment{}, o+"-web")).Should(Succeed())
				Expect(componentPhase(o, "api")(Default)).To(Equal(appsv1alpha1.ComponentWaiting))
				Consistently(gone(&appsv1.Deployment{}, o+"-api"), "2s").Should(BeTrue())

				By("starting the server again")
				Expect(s.Start()).To(Succeed())
				started = true
				Eventually(databaseCondition(o), "90s").Should(HaveField("Status", metav1.ConditionTrue))
				Eventually(exists(&appsv1.Deployment{}, o+"-api")).Should(Succeed())
				creds := credentials(Default, o+"-api-db")
				Expect(s.Exec(creds["username"], creds["password"], creds["database"], "SELECT 1")).To(Succeed())
			})
		})
	}

	It("should converge a Platform of another namespace in its usual time while three Platforms wait on a silent server, and say the same of a silent and a refusing address", func() {
		// A server that accepts connections and never says a word.
		silent, err := net.Listen("tcp", "127.0.0.1:0")
		Expect(err).NotTo(HaveOccurred())
		var mu sync.Mutex
		var held []net.Conn
		go func() {
			for {
				c, err := silent.Accept()
				if err != nil {
					return
				}
				mu.Lock()
				held = append(held, c)
				mu.Unlock()
			}
		}()
		for _, ns := range []string{"tenant-slow", "tenant-other"} {
			Expect(client.IgnoreAlreadyExists(suite.Client.Create(suite.Ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))).To(Succeed())
		}
		var made []client.Object
		DeferCleanup(func() {
			for _, o := range made {
				_ = suite.Client.Delete(suite.Ctx, o)
			}
			_ = silent.Close()
			mu.Lock()
			defer mu.Unlock()
			for _, c := range held {
				_ = c.Close()
			}
		})
		// And an address that refuses.
		closed, err := net.Listen("tcp", "127.0.0.1:0")
		Expect(err).NotTo(HaveOccurred())
		refusing := closed.Addr().(*net.TCPAddr).Port
		Expect(closed.Close()).To(Succeed())

		my := dbServers[testdb.MariaDB]
		at := func(ns, name string, port int, user, password string) *appsv1alpha1.Platform {
			admin := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-admin"},
				Data: map[string][]byte{"username": []byte(user), "password": []byte(password)}}
			Expect(suite.Client.Create(suite.Ctx, admin)).To(Succeed())
			p := newPlatform(name, "1.0.0", appsv1alpha1.PlatformComponent{Name: "api", Database: &appsv1alpha1.ComponentDatabase{Enabled: true}})
			p.Namespace = ns
			p.Spec.Database = &appsv1alpha1.PlatformDatabase{Engine: appsv1alpha1.DatabaseMySQL, Host: "127.0.0.1", Port: int32(port),
				AdminSecretRef: corev1.LocalObjectReference{Name: name + "-admin"}, TLS: appsv1alpha1.DatabaseTLS{Mode: appsv1alpha1.DatabaseTLSDisable}}
			Expect(suite.Client.Create(suite.Ctx, p)).To(Succeed())
			made = append(made, p, admin)
			return p
		}
		condition := func(p *appsv1alpha1.Platform) func(g Gomega) metav1.Condition {
			return func(g Gomega) metav1.Condition {
				got := &appsv1alpha1.Platform{}
				g.Expect(suite.Client.Get(suite.Ctx, client.ObjectKeyFromObject(p), got)).To(Succeed())
				c := meta.FindStatusCondition(got.Status.Conditions, appsv1alpha1.DatabaseConditionType)
				g.Expect(c).NotTo(BeNil())
				return *c
			}
		}
		// converge is how long a Platform of tenant-other with a database
		// on the real server takes until its database is ready and its
		// workload made.
		converge := func(name string) time.Duration {
			start := time.Now()
			p := at("tenant-other", name, my.Port, my.AdminUser, my.AdminPassword)
			Eventually(condition(p), "60s", "20ms").Should(HaveField("Status", metav1.ConditionTrue))
			Eventually(func() error {
				return suite.Client.Get(suite.Ctx, types.NamespacedName{Namespace: "tenant-other", Name: name + "-api"}, &appsv1.Deployment{})
			}, "60s", "20ms").Should(Succeed())
			return time.Since(start)
		}

		usual := converge("usual")
		silentPort := silent.Addr().(*net.TCPAddr).Port
		var slow []*appsv1alpha1.Platform
		for i := range 3 {
			slow = append(slow, at("tenant-slow", fmt.Sprintf("silent-%d", i), silentPort, "admin", "secret"))
		}
		Eventually(condition(slow[0])).Should(HaveField("Reason", platform.ReasonProvisioning))
		// The suite runs one worker: a reconcile that waited on the silent
		// server (5 s to connect) would hold it 15 s before the bystander.
		beside := converge("bystander")
		GinkgoWriter.Printf("a Platform of another namespace converged in %s alone and in %s beside 3 Platforms on a silent server\n", usual, beside)
		Expect(beside).To(BeNumerically("<=", 2*usual+2*time.Second),
			"the bystander took %s, its usual time is %s: it waited behind the silent servers", beside, usual)

		// What status says of a silent and a refusing address, read when
		// each says it cannot connect.
		refused := at("tenant-slow", "refused", refusing, "admin", "secret")
		unreachable := func(p *appsv1alpha1.Platform, port int) string {
			var msg string
			Eventually(func(g Gomega) {
				c := condition(p)(g)
				g.Expect(c.Reason).To(Equal("ServerUnreachable"))
				msg = c.Message
			}, "30s").Should(Succeed())
			return strings.ReplaceAll(msg, fmt.Sprint(port), "PORT")
		}
		fromSilent, fromRefused := unreachable(slow[0], silentPort), unreachable(refused, refusing)
		Expect(fromSilent).To(Equal(fromRefused), "a silent address and a refusing one read alike: status is no port scanner")
		Expect(fromRefused).NotTo(ContainSubstring("refused"))
		Consistently(condition(slow[0]), "2s").Should(HaveField("Reason", "ServerUnreachable"),
			"while it retries, the failure stands (no flapping to Provisioning)")
	})

	It("should refuse a spec whose database names the webhook would refuse, without touching the server", func() {
		s := dbServers[testdb.MariaDB]
		p := dbPlatform("dbhostile", testdb.MariaDB)
		p.Spec.Components[0].Database.Name = "x`; DROP DATABASE mysql; --"
		Expect(suite.Client.Create(suite.Ctx, p)).To(Succeed())
		Eventually(func(g Gomega) string {
			c := meta.FindStatusCondition(getPlatform("dbhostile")(g).Status.Conditions, "Ready")
			g.Expect(c).NotTo(BeNil())
			return c.Reason
		}).Should(Equal("InvalidSpec"))
		dbs, err := s.Databases()
		Expect(err).NotTo(HaveOccurred())
		Expect(dbs).To(ContainElement("mysql"))
		Expect(dbs).NotTo(ContainElement(ContainSubstring("DROP")))
		Expect(suite.Client.Get(suite.Ctx, key("dbhostile-api-db"), &corev1.Secret{})).NotTo(Succeed())
	})

	It("should let a Platform with dropOnDelete go, with a Warning, when its admin Secret is gone (as in a namespace being deleted)", func() {
		n := "dbgone"
		p := dbPlatform(n, testdb.PostgreSQL)
		p.Spec.Database.DropOnDelete = true
		Expect(suite.Client.Create(suite.Ctx, p)).To(Succeed())
		Eventually(databaseCondition(n)).Should(HaveField("Status", metav1.ConditionTrue))
		Expect(suite.Client.Delete(suite.Ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: n + "-admin", Namespace: "default"}})).To(Succeed())
		Expect(suite.Client.Delete(suite.Ctx, getPlatform(n)(Default))).To(Succeed())
		Consistently(exists(&appsv1alpha1.Platform{}, n), "1s").Should(Succeed(), "it waits a while for the Secret to come back")
		Eventually(gone(&appsv1alpha1.Platform{}, n)).Should(BeTrue())
		Eventually(func(g Gomega) []string {
			reasons, err := testenv.WarningReasons(suite.Ctx, suite.Client, "default", n)
			g.Expect(err).NotTo(HaveOccurred())
			return reasons
		}).Should(ContainElement(engine.ReasonCleanupSkipped))
	})

	It("should let a Platform with dropOnDelete but no database component go without reaching the server", func() {
		p := newPlatform("dbnone", "1.0.0", appsv1alpha1.PlatformComponent{Name: "web"})
		p.Spec.Database = &appsv1alpha1.PlatformDatabase{Engine: appsv1alpha1.DatabasePostgreSQL, Host: "127.0.0.1", Port: 1,
			AdminSecretRef: corev1.LocalObjectReference{Name: "nowhere"}, DropOnDelete: true}
		Expect(suite.Client.Create(suite.Ctx, p)).To(Succeed())
		Eventually(func(g Gomega) []string { return getPlatform("dbnone")(g).Finalizers }).Should(ContainElement(appsv1alpha1.DatabaseFinalizer))
		Expect(meta.FindStatusCondition(getPlatform("dbnone")(Default).Status.Conditions, appsv1alpha1.DatabaseConditionType)).To(BeNil())
		Expect(suite.Client.Delete(suite.Ctx, getPlatform("dbnone")(Default))).To(Succeed())
		Eventually(gone(&appsv1alpha1.Platform{}, "dbnone")).Should(BeTrue())
	})

	It("should make no write at rest with databases", func() {
		n := "dbrest"
		Expect(suite.Client.Create(suite.Ctx, dbPlatform(n, testdb.PostgreSQL))).To(Succeed())
		Eventually(databaseCondition(n)).Should(HaveField("Status", metav1.ConditionTrue))
		Eventually(func(g Gomega) {
			d := deploymentOf(g, n+"-api")
			g.Expect(d.Spec.Template.Annotations).To(HaveKey(appsv1alpha1.DatabaseSecretVersionAnnotation))
		}).Should(Succeed())
		settled()
		suite.Counting.Reset()
		// Reconciles with nothing new: the provisioning is remembered, the
		// Secrets and workloads match; the databases are checked again later.
		for range 3 {
			res, err := suite.Reconciler.Reconcile(suite.Ctx, ctrl.Request{NamespacedName: key(n)})
			Expect(err).NotTo(HaveOccurred())
			Expect(res).To(Equal(ctrl.Result{RequeueAfter: platform.DatabaseRecheck}))
		}
		Expect(suite.Counting.Writes()).To(BeEmpty())
		Consistently(suite.Counting.Writes, "2s").Should(BeEmpty())
	})
})
