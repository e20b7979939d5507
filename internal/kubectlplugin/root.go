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

// Package kubectlplugin is `kubectl kubeforge`: the daily questions about
// kubeforge's objects answered on one screen. It reads with the user's own
// credentials (cli-runtime's flags: --namespace, --context, --kubeconfig
// and the rest work as in kubectl), so it shows only what their RBAC lets
// them read, and it never writes.
package kubectlplugin

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
	networkingv1alpha1 "github.com/kubeforge/kubeforge/api/networking/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/scheme"
)

// env is what every command works with: the user's clients, the
// namespace the flags chose, and where to write.
type env struct {
	c         client.Client
	kube      kubernetes.Interface
	cfg       *rest.Config
	namespace string
	out       io.Writer
	errOut    io.Writer
}

// NewCommand is the plugin's command tree. newEnv is replaced in tests
// with one over a fake client.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	flags := genericclioptions.NewConfigFlags(true)
	newEnv := func() (*env, error) {
		cfg, err := flags.ToRESTConfig()
		if err != nil {
			return nil, err
		}
		ns, _, err := flags.ToRawKubeConfigLoader().Namespace()
		if err != nil {
			return nil, err
		}
		c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
		if err != nil {
			return nil, err
		}
		kube, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return nil, err
		}
		return &env{c: c, kube: kube, cfg: cfg, namespace: ns, out: streams.Out, errOut: streams.ErrOut}, nil
	}
	root := newRoot(newEnv)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	flags.AddFlags(root.PersistentFlags())
	return root
}

func newRoot(newEnv func() (*env, error)) *cobra.Command {
	root := &cobra.Command{
		Use:   "kubectl-kubeforge",
		Short: "Answers the daily questions about kubeforge's objects",
		Long: `kubectl kubeforge answers the daily questions about kubeforge's objects with
your own credentials: what an object waits for, how to open a Workspace, a
cluster's kubeconfig and installer logs, a Balancer's split, a Platform's
components in dependency order. It never writes to the cluster.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(statusCommand(newEnv), workspaceCommand(newEnv), clusterCommand(newEnv),
		balancerCommand(newEnv), platformCommand(newEnv))
	return root
}

// run wraps a command body: it builds the env and hands the command's
// context to the body.
func run(newEnv func() (*env, error), body func(ctx context.Context, e *env, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		e, err := newEnv()
		if err != nil {
			return err
		}
		return body(cmd.Context(), e, args)
	}
}

// kindInfo is one of kubeforge's kinds as the plugin names it.
type kindInfo struct {
	kind    string
	aliases []string
	newObj  func() client.Object
}

var kinds = []kindInfo{
	{"Workspace", []string{"workspace", "workspaces", "ws", "workspace.ide.kubeforge.io", "workspaces.ide.kubeforge.io"},
		func() client.Object { return &idev1alpha1.Workspace{} }},
	{"Balancer", []string{"balancer", "balancers", "bal", "balancer.networking.kubeforge.io", "balancers.networking.kubeforge.io"},
		func() client.Object { return &networkingv1alpha1.Balancer{} }},
	{"PodSet", []string{"podset", "podsets", "pset", "podset.apps.kubeforge.io", "podsets.apps.kubeforge.io"},
		func() client.Object { return &appsv1alpha1.PodSet{} }},
	{"Platform", []string{"platform", "platforms", "plat", "platform.apps.kubeforge.io", "platforms.apps.kubeforge.io"},
		func() client.Object { return &appsv1alpha1.Platform{} }},
	{"KubernetesCluster", []string{"kubernetescluster", "kubernetesclusters", "kc", "kubernetescluster.cluster.kubeforge.io",
		"kubernetesclusters.cluster.kubeforge.io"},
		func() client.Object { return &clusterv1alpha1.KubernetesCluster{} }},
}

// parseRef reads KIND/NAME, or KIND NAME, into the kind and the name.
func parseRef(args []string) (kindInfo, string, error) {
	var kind, name string
	switch {
	case len(args) == 1 && strings.Contains(args[0], "/"):
		kind, name, _ = strings.Cut(args[0], "/")
	case len(args) == 2:
		kind, name = args[0], args[1]
	default:
		return kindInfo{}, "", fmt.Errorf("want KIND/NAME or KIND NAME, e.g. ws/alice")
	}
	for _, k := range kinds {
		for _, a := range k.aliases {
			if strings.EqualFold(a, kind) {
				if name == "" {
					return kindInfo{}, "", fmt.Errorf("no name after %q", kind+"/")
				}
				return k, name, nil
			}
		}
	}
	var names []string
	for _, k := range kinds {
		names = append(names, k.aliases[0]+" ("+k.aliases[2]+")")
	}
	return kindInfo{}, "", fmt.Errorf("%q is not a kubeforge kind: one of %s", kind, strings.Join(names, ", "))
}

// get reads one object of the env's namespace, with an error that names it.
func (e *env) get(ctx context.Context, kind, name string, obj client.Object) error {
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: e.namespace, Name: name}, obj); err != nil {
		return fmt.Errorf("reading %s %s/%s: %w", kind, e.namespace, name, err)
	}
	return nil
}
