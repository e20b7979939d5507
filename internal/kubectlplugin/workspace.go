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
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"

	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
)

func workspaceCommand(newEnv func() (*env, error)) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "workspace",
		Aliases: []string{"ws"},
		Short:   "Open a Workspace's IDE",
	}
	address := "127.0.0.1"
	port := 0
	open := &cobra.Command{
		Use:   "open NAME",
		Short: "Port-forward to the Workspace's IDE and print its URL and where its password is",
		Long: `open forwards a local port to the IDE's Pod (as kubectl port-forward does,
with your credentials: it needs create on pods/portforward) and prints the
URL to open and the command that prints the password. It runs until
interrupted.`,
		Example: `  kubectl kubeforge workspace open alice
  kubectl kubeforge ws open alice --port 8080`,
		Args: cobra.ExactArgs(1),
		RunE: run(newEnv, func(ctx context.Context, e *env, args []string) error {
			ws := &idev1alpha1.Workspace{}
			if err := e.get(ctx, "Workspace", args[0], ws); err != nil {
				return err
			}
			pod, err := e.workspacePod(ctx, ws)
			if err != nil {
				return err
			}
			return e.forward(ctx, ws, pod, address, port)
		}),
	}
	open.Flags().StringVar(&address, "address", address, "the local address to listen on")
	open.Flags().IntVar(&port, "port", port, "the local port (0: any free port)")
	cmd.AddCommand(open)
	return cmd
}

// workspacePod is the IDE's Pod if the Workspace runs: the Pod under the
// Workspace's name whose controller is the Workspace's UID.
func (e *env) workspacePod(ctx context.Context, ws *idev1alpha1.Workspace) (*corev1.Pod, error) {
	if ws.Status.Phase != idev1alpha1.PhaseRunning {
		hint := ""
		if ws.Status.Phase == idev1alpha1.PhaseStopped {
			hint = fmt.Sprintf(`: start it with kubectl -n %s patch ws %s --type=merge -p '{"spec":{"started":true}}'`, ws.Namespace, ws.Name)
		} else if ws.Status.Message != "" {
			hint = ": " + ws.Status.Message
		}
		return nil, fmt.Errorf("workspace %s/%s is %s, not Running%s", ws.Namespace, ws.Name, orNone(string(ws.Status.Phase)), hint)
	}
	pod := &corev1.Pod{}
	if err := e.get(ctx, "Pod", ws.Name, pod); err != nil {
		return nil, err
	}
	if ref := metav1.GetControllerOfNoCopy(pod); ref == nil || ref.UID != ws.UID {
		return nil, fmt.Errorf("pod %s/%s is not the IDE of Workspace %s (its controller is not the Workspace)", pod.Namespace, pod.Name, ws.Name)
	}
	return pod, nil
}

// credentialsSecret is the Secret that holds ws's password, named from its
// spec as the controller names it — never from status, which whoever may
// write the Workspace's status could point at another Secret, or at a
// "name" that is a shell command in the line printed to be run.
func credentialsSecret(ws *idev1alpha1.Workspace) string {
	d := ws.DeepCopy()
	idev1alpha1.DefaultWorkspace(d)
	return idev1alpha1.WorkspaceCredentialsSecret(d)
}

// openLines are what open prints once the port is forwarded.
func openLines(w io.Writer, ws *idev1alpha1.Workspace, pod *corev1.Pod, address string, local uint16) {
	fmt.Fprintf(w, "Forwarding %s:%d to Workspace %s/%s (Pod %s, port %d). Ctrl-C stops.\n",
		address, local, ws.Namespace, ws.Name, pod.Name, ws.Spec.Port)
	fmt.Fprintf(w, "Open:     http://%s:%d/\n", address, local)
	secret := credentialsSecret(ws)
	if secret == "" {
		fmt.Fprintln(w, "Password: none (auth mode None)")
		return
	}
	fmt.Fprintf(w, "Password: in Secret %s/%s, key password:\n", ws.Namespace, secret)
	fmt.Fprintf(w, "          kubectl -n %s get secret %s -o jsonpath='{.data.password}' | base64 -d; echo\n",
		ws.Namespace, secret)
}

func (e *env) forward(ctx context.Context, ws *idev1alpha1.Workspace, pod *corev1.Pod, address string, port int) error {
	tr, upgrader, err := spdy.RoundTripperFor(e.cfg)
	if err != nil {
		return err
	}
	url := e.kube.CoreV1().RESTClient().Post().Resource("pods").Namespace(pod.Namespace).Name(pod.Name).SubResource("portforward").URL()
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: tr}, http.MethodPost, url)
	ready := make(chan struct{})
	stop := make(chan struct{})
	pf, err := portforward.NewOnAddresses(dialer, []string{address}, []string{fmt.Sprintf("%d:%d", port, ws.Spec.Port)}, stop, ready, io.Discard, e.errOut)
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- pf.ForwardPorts() }()
	go func() {
		<-ctx.Done()
		close(stop)
	}()
	select {
	case err := <-done:
		return fmt.Errorf("port-forward to Pod %s: %w", pod.Name, err)
	case <-ready:
	}
	ports, err := pf.GetPorts()
	if err != nil || len(ports) == 0 {
		return fmt.Errorf("port-forward to Pod %s: no local port: %v", pod.Name, err)
	}
	openLines(e.out, ws, pod, address, ports[0].Local)
	return <-done
}
