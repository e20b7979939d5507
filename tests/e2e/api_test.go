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
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/apiserver/idev1"
	"github.com/kubeforge/kubeforge/internal/proof"
)

const apiNS = "e2e-api"

// The manager's API, as a portal uses it: a ServiceAccount token, RBAC
// made with kubectl, the real controllers behind it.
var _ = Describe("API server", Ordered, Label("api"), func() {
	var portal, nobody string
	// The API's certificate is verified, as docs/api.md tells clients to:
	// signed by the local CA, for 127.0.0.1.
	var trusted *tls.Config

	rest := func(method, path, token, body string) (int, string) {
		req, err := http.NewRequest(method, fmt.Sprintf("https://127.0.0.1:%d%s", liveAPIPort(), path), strings.NewReader(body))
		Expect(err).NotTo(HaveOccurred())
		req.Header.Set("Authorization", "Bearer "+token)
		c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: trusted}}
		resp, err := c.Do(req)
		Expect(err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	BeforeAll(func() {
		ca, err := os.ReadFile(filepath.Join(apiCertDir, "ca.crt"))
		Expect(err).NotTo(HaveOccurred())
		pool := x509.NewCertPool()
		Expect(pool.AppendCertsFromPEM(ca)).To(BeTrue())
		trusted = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		kubectlEventually("create", "namespace", apiNS)
		kubectlEventually("create", "serviceaccount", "portal", "-n", apiNS)
		kubectlEventually("create", "serviceaccount", "nobody", "-n", apiNS)
		kubectlEventually("create", "role", "portal", "-n", apiNS, "--verb=create,get,list", "--resource=kubernetesclusters.cluster.kubeforge.io,workspaces.ide.kubeforge.io")
		kubectlEventually("create", "rolebinding", "portal", "-n", apiNS, "--role=portal", "--serviceaccount="+apiNS+":portal")
		// The cluster names the SSH key Secret; its creator must be able to
		// read it (the webhook asks, for the caller the API acts as).
		kubectlEventually("create", "role", "portal-ssh", "-n", apiNS, "--verb=get", "--resource=secrets", "--resource-name=api-ssh")
		kubectlEventually("create", "rolebinding", "portal-ssh", "-n", apiNS, "--role=portal-ssh", "--serviceaccount="+apiNS+":portal")
		kubectlEventually("create", "secret", "generic", "api-ssh", "-n", apiNS, "--type=kubernetes.io/ssh-auth",
			"--from-literal=ssh-privatekey=a throwaway key for kwok, which runs no installer")
		for sa, t := range map[string]*string{"portal": &portal, "nobody": &nobody} {
			out, err := kubectl("create", "token", sa, "-n", apiNS, "--audience", "kubeforge")
			Expect(err).NotTo(HaveOccurred())
			*t = strings.TrimSpace(out)
		}
	})

	It("should create a KubernetesCluster over REST that the operator installs, and refuse a caller without RBAC", func() {
		base := "/api/v1/namespaces/" + apiNS + "/kubernetesclusters"
		code, body := rest("POST", base, nobody, `{"name":"portal","spec":{}}`)
		Expect(code).To(Equal(http.StatusForbidden), body)
		code, body = rest("POST", base, portal, `{"name":"portal","spec":{"version":"v1.31.4","masters":[{"address":"10.2.0.10","name":"cp1"}],`+
			`"nodes":[{"address":"10.2.0.21","name":"w1"}],"sshSecretRef":{"name":"api-ssh"}}}`)
		Expect(code).To(Equal(http.StatusCreated), body)
		Eventually(func(g Gomega) clusterv1alpha1.ClusterPhase {
			code, body := rest("GET", base+"/portal", portal, "")
			g.Expect(code).To(Equal(http.StatusOK), body)
			kc := &clusterv1alpha1.KubernetesCluster{}
			g.Expect(json.Unmarshal([]byte(body), kc)).To(Succeed())
			return kc.Status.Phase
		}, "3m", "1s").Should(Equal(clusterv1alpha1.PhaseRunning))
		// Each operation got its callback token, as a Secret.
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: apiNS, Name: "portal-create-2-callback"}, &corev1.Secret{})).To(Succeed())
		// Made as the caller, not as the operator.
		kc := &clusterv1alpha1.KubernetesCluster{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: apiNS, Name: "portal"}, kc)).To(Succeed())
		Expect(kc.Annotations).To(HaveKeyWithValue(proof.CreatedByAnnotation, "system:serviceaccount:"+apiNS+":portal"))
	})

	It("should create a Workspace over gRPC and return once it is Running", func() {
		conn, err := grpc.NewClient(fmt.Sprintf("127.0.0.1:%d", liveAPIPort()), grpc.WithTransportCredentials(credentials.NewTLS(trusted)))
		Expect(err).NotTo(HaveOccurred())
		defer conn.Close()
		ide := idev1.NewCloudIdeServiceClient(conn)
		c, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+nobody), 10*time.Second)
		defer cancel()
		_, err = ide.CreateSpaceAndWaitForRunning(c, &idev1.PodInfo{Namespace: apiNS, Name: "bob"})
		Expect(status.Code(err)).To(Equal(codes.PermissionDenied))

		c, cancel = context.WithTimeout(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+portal), 2*time.Minute)
		defer cancel()
		start := time.Now()
		info, err := ide.CreateSpaceAndWaitForRunning(c, &idev1.PodInfo{Namespace: apiNS, Name: "bob", User: "bob", Storage: "1Gi"})
		Expect(err).NotTo(HaveOccurred())
		Expect(info.GetPhase()).To(Equal("Running"))
		Expect(info.GetPodIp()).NotTo(BeEmpty())
		GinkgoWriter.Printf("create-and-wait returned after %s\n", time.Since(start).Round(10*time.Millisecond))
		ws := &idev1alpha1.Workspace{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: apiNS, Name: "bob"}, ws)).To(Succeed())
		Expect(ws.Annotations).To(HaveKeyWithValue(proof.CreatedByAnnotation, "system:serviceaccount:"+apiNS+":portal"))
	})
})
