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

// Package testenv starts the envtest control plane (a real etcd and
// kube-apiserver, built by hack/test-binaries.sh) for integration tests,
// and counts the API writes a client makes.
package testenv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kubeforge/kubeforge/internal/proof"
	"github.com/kubeforge/kubeforge/internal/scheme"
)

// EventuallyTimeout is how long the envtest suites' Eventually waits by
// default: generous, because CI runs the suites side by side on two cores.
const EventuallyTimeout = 20 * time.Second

// RepoRoot is the root of the kubeforge checkout.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// Env is a running envtest control plane.
type Env struct {
	*envtest.Environment
	Config *rest.Config
	Scheme *kruntime.Scheme
	// Client talks to the API server directly (no cache).
	Client client.Client
	// Proof is the ownership keyring the controllers and webhooks under
	// test seal and check with, loaded as the manager loads it (its Secret
	// in kube-system).
	Proof *proof.Keyring
}

// Options say what to install into the control plane.
type Options struct {
	// CRDs installs config/crd/bases.
	CRDs bool
	// Webhooks installs config/webhook/manifests.yaml, pointing at a local
	// webhook server whose host, port and cert dir are in
	// Env.WebhookInstallOptions.
	Webhooks bool
	// CertManagerCRDs installs cert-manager's CRDs, as the cert-manager Go
	// module that kubeforge builds its Certificates with ships them.
	CertManagerCRDs bool
}

// CertManagerCRDDir is deploy/crds of the cert-manager module in go.mod.
func CertManagerCRDDir() (string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/cert-manager/cert-manager")
	cmd.Dir = RepoRoot()
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("finding the cert-manager module (go mod download): %w", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "deploy", "crds")
	if _, err := os.Stat(filepath.Join(dir, "cert-manager.io_certificates.yaml")); err != nil {
		return "", fmt.Errorf("the cert-manager module has no CRDs: %w", err)
	}
	return dir, nil
}

// DefaultStorageClass is the name of the default StorageClass Start makes.
const DefaultStorageClass = "standard"

// Start starts etcd and kube-apiserver from KUBEBUILDER_ASSETS. It fails,
// rather than skipping, when they are missing: make test builds them.
func Start(opts Options) (*Env, error) {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		return nil, errors.New("KUBEBUILDER_ASSETS is not set: run the tests with 'make test-unit', " +
			"or export KUBEBUILDER_ASSETS=$(hack/test-binaries.sh)")
	}
	for _, b := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(assets, b)); err != nil {
			return nil, fmt.Errorf("KUBEBUILDER_ASSETS=%s has no %s (run hack/test-binaries.sh): %w", assets, b, err)
		}
	}
	root := RepoRoot()
	env := &envtest.Environment{BinaryAssetsDirectory: assets}
	if opts.CRDs {
		env.CRDDirectoryPaths = []string{filepath.Join(root, "config", "crd", "bases")}
		env.ErrorIfCRDPathMissing = true
	}
	if opts.CertManagerCRDs {
		dir, err := CertManagerCRDDir()
		if err != nil {
			return nil, err
		}
		env.CRDDirectoryPaths = append(env.CRDDirectoryPaths, dir)
		env.ErrorIfCRDPathMissing = true
	}
	if opts.Webhooks {
		env.WebhookInstallOptions = envtest.WebhookInstallOptions{
			Paths: []string{filepath.Join(root, "config", "webhook", "manifests.yaml")},
		}
	}
	cfg, err := env.Start()
	if err != nil {
		// envtest leaves etcd and kube-apiserver running when a later step
		// (installing CRDs or webhooks) fails; stop them.
		_ = env.Stop()
		return nil, fmt.Errorf("starting envtest: %w", err)
	}
	s := scheme.New()
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		_ = env.Stop()
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// A default StorageClass, as a real cluster has: the engine makes no
	// claim without a class in a cluster without one (engine.UnclassedClaims).
	if err := c.Create(ctx, &storagev1.StorageClass{
		ObjectMeta:  metav1.ObjectMeta{Name: DefaultStorageClass, Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}},
		Provisioner: "kubernetes.io/no-provisioner",
	}); err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("creating the default StorageClass: %w", err)
	}
	keys, err := proof.Load(ctx, c, "kube-system", proof.DefaultSecretName)
	if err != nil {
		_ = env.Stop()
		return nil, err
	}
	return &Env{Environment: env, Config: cfg, Scheme: s, Client: c, Proof: keys}, nil
}

// NewManager creates a manager on the test control plane with the kubeforge
// scheme and no metrics listener; opts may set anything else.
func (e *Env) NewManager(opts ctrl.Options) (ctrl.Manager, error) {
	opts.Scheme = e.Scheme
	opts.Metrics = metricsserver.Options{BindAddress: "0"}
	return ctrl.NewManager(e.Config, opts)
}

// Object builds an object of any kind from its spec as raw JSON, so that
// tests can send what a typed client could not (a quantity that does not
// parse, a field of the wrong type).
func Object(apiVersion, kind, namespace, name, specJSON string) (*unstructured.Unstructured, error) {
	doc := fmt.Sprintf(`{"apiVersion":%q,"kind":%q,"metadata":{"name":%q,"namespace":%q},"spec":%s}`,
		apiVersion, kind, name, namespace, specJSON)
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal([]byte(doc), &u.Object); err != nil {
		return nil, fmt.Errorf("building %s %s: %w", kind, name, err)
	}
	return u, nil
}

// CountingClient wraps a client and records every write it makes (create,
// update, patch, apply, delete, and the same on subresources such as status).
// Reads pass through uncounted.
type CountingClient struct {
	client.Client
	mu      sync.Mutex
	writes  []string
	refused []string
	after   func(name string)
}

// AfterCreate makes f run, with the object's kind and name ("Job/x"), after each create or
// server-side apply the controller makes succeeds, before the controller
// goes on: a spec can act in the window between two of the controller's
// writes. nil removes it.
func (c *CountingClient) AfterCreate(f func(name string)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.after = f
}

func (c *CountingClient) created(obj any) {
	c.mu.Lock()
	after := c.after
	c.mu.Unlock()
	o, ok := obj.(interface {
		GetName() string
		GetObjectKind() schema.ObjectKind
	})
	if ok && after != nil {
		after(o.GetObjectKind().GroupVersionKind().Kind + "/" + o.GetName())
	}
}

// NewCountingClient wraps c.
func NewCountingClient(c client.Client) *CountingClient { return &CountingClient{Client: c} }

func (c *CountingClient) record(verb string, obj any) {
	name := fmt.Sprintf("%T", obj)
	if o, ok := obj.(client.Object); ok {
		name = fmt.Sprintf("%T %s/%s", obj, o.GetNamespace(), o.GetName())
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes = append(c.writes, verb+" "+name)
}

// Writes returns the writes made since the last Reset.
func (c *CountingClient) Writes() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.writes...)
}

// Refused returns the creates the API server refused since the last
// Reset, each with the reason it gave.
func (c *CountingClient) Refused() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.refused...)
}

// Reset forgets the writes recorded so far.
func (c *CountingClient) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes, c.refused = nil, nil
}

// Create records the create as a write, and, when the API server refuses
// it (the engine's create of what the cache does not hold, when
// something is under the name), in Refused too, with the reason.
func (c *CountingClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	c.record("create", obj)
	if err := c.Client.Create(ctx, obj, opts...); err != nil {
		c.mu.Lock()
		c.refused = append(c.refused, fmt.Sprintf("create %T %s/%s: %s", obj, obj.GetNamespace(), obj.GetName(), apierrors.ReasonForError(err)))
		c.mu.Unlock()
		return err
	}
	c.created(obj)
	return nil
}

func (c *CountingClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	c.record("update", obj)
	return c.Client.Update(ctx, obj, opts...)
}

func (c *CountingClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	c.record("patch", obj)
	return c.Client.Patch(ctx, obj, patch, opts...)
}

func (c *CountingClient) Apply(ctx context.Context, obj kruntime.ApplyConfiguration, opts ...client.ApplyOption) error {
	c.record("apply", obj)
	if err := c.Client.Apply(ctx, obj, opts...); err != nil {
		return err
	}
	c.created(obj)
	return nil
}

func (c *CountingClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	c.record("delete", obj)
	return c.Client.Delete(ctx, obj, opts...)
}

func (c *CountingClient) DeleteAllOf(ctx context.Context, obj client.Object, opts ...client.DeleteAllOfOption) error {
	c.record("deleteallof", obj)
	return c.Client.DeleteAllOf(ctx, obj, opts...)
}

func (c *CountingClient) Status() client.SubResourceWriter {
	return &countingSubResource{SubResourceClient: c.Client.SubResource("status"), parent: c, name: "status"}
}

func (c *CountingClient) SubResource(name string) client.SubResourceClient {
	return &countingSubResource{SubResourceClient: c.Client.SubResource(name), parent: c, name: name}
}

type countingSubResource struct {
	client.SubResourceClient
	parent *CountingClient
	name   string
}

func (s *countingSubResource) Create(ctx context.Context, obj, sub client.Object, opts ...client.SubResourceCreateOption) error {
	s.parent.record("create/"+s.name, obj)
	return s.SubResourceClient.Create(ctx, obj, sub, opts...)
}

func (s *countingSubResource) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	s.parent.record("update/"+s.name, obj)
	return s.SubResourceClient.Update(ctx, obj, opts...)
}

func (s *countingSubResource) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	s.parent.record("patch/"+s.name, obj)
	return s.SubResourceClient.Patch(ctx, obj, patch, opts...)
}

func (s *countingSubResource) Apply(ctx context.Context, obj kruntime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
	s.parent.record("apply/"+s.name, obj)
	return s.SubResourceClient.Apply(ctx, obj, opts...)
}
