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

package real

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"

	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/apiserver/seedpb"
	"github.com/kubeforge/kubeforge/internal/test/e2ekit"
)

const (
	ideNS = "real-ide"
	// The namespaces of the NetworkPolicy spec: the one the manager admits
	// by default (--workspace-allow-namespaces), and any other.
	ingressNS = "ingress-nginx"
	otherNS   = "real-ide-other"
)

// ide is an HTTP client for code-server that never follows a redirect: the
// redirects are what the specs look at.
var ide = &http.Client{
	Timeout:       20 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

func ideGet(u string, cookies ...*http.Cookie) (int, string, http.Header) {
	req, err := http.NewRequest(http.MethodGet, u, nil)
	Expect(err).NotTo(HaveOccurred())
	for _, c := range cookies {
		req.AddCookie(c)
	}
	resp, err := ide.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// login posts a password to code-server's login form and returns the
// session cookie it sets, if any.
func login(base, password string) (int, *http.Cookie) {
	resp, err := ide.PostForm(base+"/login", url.Values{"password": {password}})
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	for _, c := range resp.Cookies() {
		if c.Name == "code-server-session" {
			return resp.StatusCode, c
		}
	}
	return resp.StatusCode, nil
}

// probePod runs the echoserver in a namespace, so that specs can send
// requests from there with kubectl exec.
func probePod(ns string) {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "probe", Labels: map[string]string{"app": "probe"}},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers:                    []corev1.Container{{Name: "echo", Image: echoImage, Env: []corev1.EnvVar{{Name: "NAME", Value: ns}}}},
		},
	}
	restricted(&p.Spec)
	Expect(client.IgnoreAlreadyExists(k8sClient.Create(ctx, p))).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(p), p)).To(Succeed())
		g.Expect(podReady(*p)).To(BeTrue())
	}, "2m", "500ms").Should(Succeed())
}

var _ = Describe("Workspace with a real code-server", Ordered, Label("real"), func() {
	key := client.ObjectKey{Namespace: ideNS, Name: "carol"}
	var base, password string
	workspace := func(g Gomega) *idev1alpha1.Workspace {
		ws := &idev1alpha1.Workspace{}
		g.Expect(k8sClient.Get(ctx, key, ws)).To(Succeed())
		return ws
	}
	setStarted := func(started bool) {
		Eventually(func() error {
			ws := &idev1alpha1.Workspace{}
			if err := k8sClient.Get(ctx, key, ws); err != nil {
				return err
			}
			ws.Spec.Started = ptr.To(started)
			return k8sClient.Update(ctx, ws)
		}).Should(Succeed())
	}
	running := func() *idev1alpha1.Workspace {
		var ws *idev1alpha1.Workspace
		Eventually(func(g Gomega) {
			ws = workspace(g)
			g.Expect(ws.Status.ObservedGeneration).To(Equal(ws.Generation))
			g.Expect(ws.Status.Phase).To(Equal(idev1alpha1.PhaseRunning), "%s: %s", ws.Status.Reason, ws.Status.Message)
		}, "4m", time.Second).Should(Succeed())
		return ws
	}

	BeforeAll(func() {
		// NetworkPolicies hold while kube-router runs (hack/real-node.sh:
		// it is started only for the specs that need it).
		_, err := run("hack/real-node.sh", "netpol-up")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() {
			_, err := run("hack/real-node.sh", "netpol-down")
			Expect(err).NotTo(HaveOccurred())
		})
		restrictedNamespace(ideNS)
		restrictedNamespace(otherNS)
		Expect(client.IgnoreAlreadyExists(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ingressNS}}))).To(Succeed())
		// The sample's Workspace, unchanged but for its size: the default
		// image (code-server, built by hack/images.sh), a password.
		ws := &idev1alpha1.Workspace{
			ObjectMeta: metav1.ObjectMeta{Namespace: ideNS, Name: "carol"},
			Spec: idev1alpha1.WorkspaceSpec{
				User:    "carol",
				Storage: idev1alpha1.WorkspaceStorage{Size: ptr.To(resource.MustParse("1Gi"))},
			},
		}
		Expect(k8sClient.Create(ctx, ws)).To(Succeed())
	})

	It("is Running only once code-server answers /healthz", func() {
		created := time.Now()
		ws := running()
		appendArtifact("figures.txt", fmt.Sprintf("Workspace carol (code-server %s) Running %.1fs after create (pull, start, /healthz)\n",
			idev1alpha1.WorkspaceDefaultImage, time.Since(created).Seconds()))
		pod := &corev1.Pod{}
		Expect(k8sClient.Get(ctx, key, pod)).To(Succeed())
		Expect(pod.Spec.NodeName).To(Equal("real-node"))
		probe := pod.Spec.Containers[0].ReadinessProbe
		Expect(probe.HTTPGet).NotTo(BeNil())
		Expect(probe.HTTPGet.Path).To(Equal("/healthz"))
		// Running is the Pod's readiness: the kubelet's GET /healthz got
		// its 200 before the Workspace said Running.
		var ready *corev1.PodCondition
		for i, c := range pod.Status.Conditions {
			if c.Type == corev1.PodReady {
				ready = &pod.Status.Conditions[i]
			}
		}
		Expect(ready).NotTo(BeNil())
		Expect(ready.Status).To(Equal(corev1.ConditionTrue))
		wsReady := meta.FindStatusCondition(ws.Status.Conditions, "Ready")
		Expect(wsReady).NotTo(BeNil())
		Expect(wsReady.Status).To(Equal(metav1.ConditionTrue))
		Expect(wsReady.LastTransitionTime.Time).NotTo(BeTemporally("<", ready.LastTransitionTime.Time))
		// And it is code-server that answers there, as the probe saw it.
		base = fmt.Sprintf("http://%s:8080", pod.Status.PodIP)
		code, body, _ := ideGet(base + "/healthz")
		Expect(code).To(Equal(http.StatusOK))
		Expect(body).To(MatchRegexp(`"status":"(alive|expired)"`))
		Expect(ws.Status.CredentialsSecret).To(Equal("carol-auth"))
	})

	It("gives the login page without the password, and the editor with it", func() {
		s := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ideNS, Name: "carol-auth"}, s)).To(Succeed())
		password = string(s.Data["password"])
		Expect(password).To(HaveLen(24))
		// The Pod holds the hash only, from the Secret; never the password.
		pod := &corev1.Pod{}
		Expect(k8sClient.Get(ctx, key, pod)).To(Succeed())
		for _, e := range pod.Spec.Containers[0].Env {
			Expect(e.Name).NotTo(Equal("PASSWORD"))
			Expect(e.Value).NotTo(ContainSubstring(password))
		}

		code, _, h := ideGet(base + "/")
		Expect(code).To(Equal(http.StatusFound))
		Expect(h.Get("Location")).To(HaveSuffix("/login"))
		code, body, _ := ideGet(base + "/login")
		Expect(code).To(Equal(http.StatusOK))
		Expect(body).To(ContainSubstring(`type="password"`))
		code, body, _ = ideGet(base + "/?folder=/home/coder")
		Expect(code).To(Equal(http.StatusFound), "the editor without a session: %.200s", body)

		code, cookie := login(base, "not-"+password)
		Expect(cookie).To(BeNil(), "a wrong password got a session (HTTP %d)", code)

		code, cookie = login(base, password)
		Expect(code).To(Equal(http.StatusFound))
		Expect(cookie).NotTo(BeNil(), "the right password got no session")
		code, body, _ = ideGet(base+"/?folder=/home/coder", cookie)
		Expect(code).To(Equal(http.StatusOK))
		Expect(body).To(ContainSubstring("workbench.js"), "the editor's page")
	})

	It("opens with kubectl kubeforge workspace open: the printed URL gives the login page, the printed password command signs in", func() {
		out, err := plugin("-n", ideNS, "status", "ws/carol")
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(ContainSubstring("Workspace real-ide/carol  Running"))
		Expect(out).To(MatchRegexp(`(?m)^\s+Pod\s+carol\s+Running 1/1$`))
		Expect(out).To(MatchRegexp(`(?m)^\s+PersistentVolumeClaim\s+carol-home\s+Bound$`))
		Expect(out).To(ContainSubstring("Password:  in Secret carol-auth, key password"))
		Expect(out).To(ContainSubstring("Waiting for: nothing"))

		open := exec.Command(pluginBin(), "--kubeconfig", kubeconfig, "-n", ideNS, "workspace", "open", "carol")
		printed := gbytes.NewBuffer()
		open.Stdout = printed
		open.Stderr = GinkgoWriter
		Expect(open.Start()).To(Succeed())
		ended := make(chan error, 1)
		go func() { ended <- open.Wait() }()
		defer func() { _ = open.Process.Kill() }()
		Eventually(printed, "30s").Should(gbytes.Say(`Open:\s+(http://127\.0\.0\.1:\d+/)\n`))
		Eventually(printed, "5s").Should(gbytes.Say(`Password: in Secret real-ide/carol-auth, key password:\n\s+(kubectl .*)\n`))
		lines := string(printed.Contents())
		appendArtifact("plugin.txt", "$ kubectl kubeforge -n "+ideNS+" workspace open carol\n"+lines+"\n")
		openURL := regexp.MustCompile(`Open:\s+(\S+)`).FindStringSubmatch(lines)[1]
		passwordCmd := regexp.MustCompile(`(?m)^\s+(kubectl -n .*)$`).FindStringSubmatch(lines)[1]

		code, _, _ := ideGet(openURL + "healthz")
		Expect(code).To(Equal(http.StatusOK))
		code, _, h := ideGet(openURL)
		Expect(code).To(Equal(http.StatusFound))
		Expect(h.Get("Location")).To(HaveSuffix("/login"))
		// The password command as printed, in a shell with the suite's cluster.
		pw, err := e2ekit.Run(root, []string{"KUBECONFIG=" + kubeconfig}, nil, "bash", "-c", passwordCmd)
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.TrimSpace(pw)).To(Equal(password))
		code, cookie := login(strings.TrimSuffix(openURL, "/"), strings.TrimSpace(pw))
		Expect(code).To(Equal(http.StatusFound))
		Expect(cookie).NotTo(BeNil(), "the printed password got no session")
		code, body, _ := ideGet(openURL+"?folder=/home/coder", cookie)
		Expect(code).To(Equal(http.StatusOK))
		Expect(body).To(ContainSubstring("workbench.js"), "the editor's page through the forwarded port")

		Expect(open.Process.Signal(os.Interrupt)).To(Succeed())
		Eventually(ended, "10s").Should(Receive(BeNil()), "workspace open ends cleanly on Ctrl-C")
	})

	It("signs in in a real browser (Debian's chromium): the login page, the generated password, code-server's workbench rendered", func() {
		chromium, err := exec.LookPath("chromium")
		Expect(err).NotTo(HaveOccurred(), "make test-deps installs Debian's chromium")
		opts := append(chromedp.DefaultExecAllocatorOptions[:],
			chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.UserDataDir(GinkgoT().TempDir()),
			chromedp.WindowSize(1280, 800), chromedp.Flag("disable-dev-shm-usage", true))
		alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
		defer cancelAlloc()
		browser, cancelBrowser := chromedp.NewContext(alloc)
		defer cancelBrowser()
		c, cancel := context.WithTimeout(browser, 3*time.Minute)
		defer cancel()
		carolPassword := password

		started := time.Now()
		password := chromedp.CSS(`input[type="password"]`)
		Expect(chromedp.Do(c, chromedp.Navigate(base+"/"), chromedp.WaitVisible(password))).To(Succeed(), "code-server's login page")
		loginURL, err := chromedp.Run(c, chromedp.Location())
		Expect(err).NotTo(HaveOccurred())
		Expect(loginURL).To(HaveSuffix("/login"))
		Expect(chromedp.Do(c,
			chromedp.SendKeys(password, carolPassword),
			chromedp.Submit(password),
			// The workbench is the editor's own DOM, made by its JavaScript
			// in the page: it exists only when the IDE really rendered.
			chromedp.WaitVisible(chromedp.CSS(`.monaco-workbench .part.activitybar`)),
		)).To(Succeed(), "code-server's workbench after sign-in")
		workbenches, err := chromedp.Run(c, chromedp.Evaluate[int](`document.querySelectorAll(".monaco-workbench").length`))
		Expect(err).NotTo(HaveOccurred())
		shot, err := chromedp.Run(c, chromedp.FullScreenshot(100))
		Expect(err).NotTo(HaveOccurred())
		Expect(workbenches).To(Equal(1))
		Expect(os.WriteFile(filepath.Join(artifacts, "workspace-workbench.png"), shot, 0o644)).To(Succeed())
		appendArtifact("figures.txt", fmt.Sprintf("Workspace carol: login page to rendered workbench in chromium in %.1fs\n",
			time.Since(started).Seconds()))
	})

	It("keeps a file written in the IDE's Pod across stop and start, and the password", func() {
		mark := fmt.Sprintf("written at %s", time.Now().Format(time.RFC3339Nano))
		_, err := kubectl("-n", ideNS, "exec", "carol", "--", "sh", "-c", "echo '"+mark+"' > /home/coder/notes.txt")
		Expect(err).NotTo(HaveOccurred())

		setStarted(false)
		Eventually(func(g Gomega) {
			ws := workspace(g)
			g.Expect(ws.Status.Phase).To(Equal(idev1alpha1.PhaseStopped))
			err := k8sClient.Get(ctx, key, &corev1.Pod{})
			g.Expect(client.IgnoreNotFound(err)).To(Succeed())
			g.Expect(err).To(HaveOccurred(), "the Pod is gone")
		}, "2m", time.Second).Should(Succeed())

		setStarted(true)
		stopped := time.Now()
		running()
		appendArtifact("figures.txt", fmt.Sprintf("Workspace carol Running again %.1fs after started: true", time.Since(stopped).Seconds())+"\n")
		out, err := kubectl("-n", ideNS, "exec", "carol", "--", "cat", "/home/coder/notes.txt")
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.TrimSpace(out)).To(Equal(mark))

		pod := &corev1.Pod{}
		Expect(k8sClient.Get(ctx, key, pod)).To(Succeed())
		base = fmt.Sprintf("http://%s:8080", pod.Status.PodIP)
		_, cookie := login(base, password)
		Expect(cookie).NotTo(BeNil(), "the password from before the stop")
	})

	It("admits connections from the ingress controller's namespace only", func() {
		probePod(ingressNS)
		probePod(otherNS)
		pod := &corev1.Pod{}
		Expect(k8sClient.Get(ctx, key, pod)).To(Succeed())
		target := fmt.Sprintf("http://%s:8080/healthz", pod.Status.PodIP)
		// kube-router adds a new Pod to the policy's sets within a sync.
		out, err := kubectl("-n", ingressNS, "exec", "probe", "--", "/echoserver", "get", "-wait", "1m", target)
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(ContainSubstring("errors 0"))

		out, err = kubectl("-n", otherNS, "exec", "probe", "--", "/echoserver", "get", "-wait", "15s", target)
		Expect(err).To(HaveOccurred(), "a Pod in %s reached the IDE: %s", otherNS, out)
		// The network itself works for that Pod: it reaches a Pod that no
		// NetworkPolicy selects.
		peer := &corev1.Pod{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ingressNS, Name: "probe"}, peer)).To(Succeed())
		out, err = kubectl("-n", otherNS, "exec", "probe", "--", "/echoserver", "get", "-wait", "30s", "http://"+peer.Status.PodIP+":8080/")
		Expect(err).NotTo(HaveOccurred(), out)
	})

	It("answers the seed IDE client's create-and-wait with the Pod's node, IP and port", func() {
		conn := seedConn()
		defer conn.Close()
		seed := seedpb.NewCloudIdeServiceClient(conn)
		token := apiToken(ideNS, "seed-portal", "workspaces.ide.kubeforge.io")
		c, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token), 4*time.Minute)
		defer cancel()
		start := time.Now()
		info, err := seed.CreateSpaceAndWaitForRunning(c, &seedpb.PodInfo{
			Name: "seedling", Namespace: ideNS, Port: 9000,
			ResourceLimit: &seedpb.ResourceLimit{Cpu: "500m", Memory: "1Gi", Storage: "1Gi"},
		})
		Expect(err).NotTo(HaveOccurred())
		appendArtifact("figures.txt", fmt.Sprintf("seed createSpaceAndWaitForRunning returned in %.1fs: node %s, ip %s, port %d\n",
			time.Since(start).Seconds(), info.GetNodeName(), info.GetIp(), info.GetPort()))
		pod := &corev1.Pod{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ideNS, Name: "seedling"}, pod)).To(Succeed())
		Expect(info.GetNodeName()).To(Equal(pod.Spec.NodeName))
		Expect(info.GetNodeName()).To(Equal("real-node"))
		Expect(info.GetIp()).To(Equal(pod.Status.PodIP))
		Expect(info.GetPort()).To(Equal(int32(9000)))
		// code-server listens where the answer says.
		code, body, _ := ideGet(fmt.Sprintf("http://%s/healthz", net.JoinHostPort(info.GetIp(), fmt.Sprint(info.GetPort()))))
		Expect(code).To(Equal(http.StatusOK), body)

		st, err := seed.GetPodSpaceStatus(c, &seedpb.QueryOption{Name: "seedling", Namespace: ideNS})
		Expect(err).NotTo(HaveOccurred())
		Expect(st.GetStatus()).To(Equal(int32(1)))
		Expect(st.GetMessage()).To(Equal("Running"))
		resp, err := seed.DeleteSpace(c, &seedpb.QueryOption{Name: "seedling", Namespace: ideNS})
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.GetStatus()).To(Equal(int32(200)), resp.GetMessage())
		Eventually(func(g Gomega) {
			err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ideNS, Name: "seedling"}, &corev1.Pod{})
			g.Expect(client.IgnoreNotFound(err)).To(Succeed())
			g.Expect(err).To(HaveOccurred(), "deleteSpace stops the IDE")
		}, "2m", time.Second).Should(Succeed())
		// Its files stay: the claim is still there.
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ideNS, Name: "seedling-home"}, &corev1.PersistentVolumeClaim{})).To(Succeed())
	})
})

// seedConn dials the manager's gRPC API.
func seedConn() *grpc.ClientConn {
	cfg, addr := apiEndpoint()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
	Expect(err).NotTo(HaveOccurred())
	return conn
}

// apiEndpoint is where this host reaches the manager's REST and gRPC API:
// its Service's ClusterIP (kube-proxy runs here), with TLS that trusts
// cert-manager's CA for the API and checks the Service's name.
func apiEndpoint() (*tls.Config, string) {
	s := &corev1.Secret{}
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: managerNS, Name: "api-server-cert"}, s)).To(Succeed())
	pool := x509.NewCertPool()
	Expect(pool.AppendCertsFromPEM(s.Data["ca.crt"])).To(BeTrue())
	svc := &corev1.Service{}
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: managerNS, Name: "kubeforge-api"}, svc)).To(Succeed())
	cfg := &tls.Config{RootCAs: pool, ServerName: "kubeforge-api." + managerNS + ".svc", MinVersion: tls.VersionTLS12}
	return cfg, net.JoinHostPort(svc.Spec.ClusterIP, "8082")
}

// apiToken makes a ServiceAccount that may use the given resources in ns
// and returns a token for the kubeforge API's audience.
func apiToken(ns, name string, resources ...string) string {
	args := []string{"-n", ns, "create", "role", name, "--verb=get,list,watch,create,update,patch,delete"}
	for _, r := range resources {
		args = append(args, "--resource="+r)
	}
	for _, cmd := range [][]string{
		{"-n", ns, "create", "serviceaccount", name},
		args,
		{"-n", ns, "create", "rolebinding", name, "--role=" + name, "--serviceaccount=" + ns + ":" + name},
	} {
		out, err := kubectl(cmd...)
		Expect(err).NotTo(HaveOccurred(), out)
	}
	out, err := kubectl("-n", ns, "create", "token", name, "--audience", "kubeforge", "--duration", "1h")
	Expect(err).NotTo(HaveOccurred())
	return strings.TrimSpace(out)
}
