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
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/workload"
)

// KubeconfigKey is the key of the cluster's admin kubeconfig in the
// Secret that status.kubeconfigSecretRef names.
const KubeconfigKey = "kubeconfig"

func clusterCommand(newEnv func() (*env, error)) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "cluster",
		Aliases: []string{"kc"},
		Short:   "A KubernetesCluster's kubeconfig and installer logs",
	}
	kubeconfig := &cobra.Command{
		Use:     "kubeconfig NAME",
		Short:   "Print the installed cluster's admin kubeconfig (needs get on the Secret)",
		Example: `  kubectl kubeforge cluster kubeconfig prod > prod.kubeconfig`,
		Args:    cobra.ExactArgs(1),
		RunE: run(newEnv, func(ctx context.Context, e *env, args []string) error {
			kc := &clusterv1alpha1.KubernetesCluster{}
			if err := e.get(ctx, "KubernetesCluster", args[0], kc); err != nil {
				return err
			}
			// The Secret as the controller names it; status, which others may
			// write, only says whether it was written yet.
			if kc.Status.KubeconfigSecretRef == nil {
				return fmt.Errorf("KubernetesCluster %s/%s has no kubeconfig yet (phase %s): it is written when the create operation succeeds",
					kc.Namespace, kc.Name, orNone(string(kc.Status.Phase)))
			}
			s := &corev1.Secret{}
			if err := e.get(ctx, "Secret", clusterv1alpha1.KubeconfigSecretName(kc), s); err != nil {
				return err
			}
			b := s.Data[KubeconfigKey]
			if len(b) == 0 {
				return fmt.Errorf("secret %s/%s has no %q yet", s.Namespace, s.Name, KubeconfigKey)
			}
			if err := inertKubeconfig(b); err != nil {
				return fmt.Errorf("secret %s/%s: not printed: %w", s.Namespace, s.Name, err)
			}
			out, err := ownNames(b, "kubeforge-"+kc.Namespace+"-"+kc.Name)
			if err != nil {
				return fmt.Errorf("secret %s/%s: not printed: %w", s.Namespace, s.Name, err)
			}
			_, err = e.out.Write(out)
			return err
		}),
	}
	var follow bool
	var operation string
	logs := &cobra.Command{
		Use:   "logs NAME",
		Short: "Print the installer's log of the running operation, or of the last one",
		Example: `  kubectl kubeforge cluster logs prod --follow
  kubectl kubeforge cluster logs prod --operation create-1`,
		Args: cobra.ExactArgs(1),
		RunE: run(newEnv, func(ctx context.Context, e *env, args []string) error {
			kc := &clusterv1alpha1.KubernetesCluster{}
			if err := e.get(ctx, "KubernetesCluster", args[0], kc); err != nil {
				return err
			}
			op := currentOperation(kc)
			if operation != "" {
				op = nil
				for i := range kc.Status.Operations {
					if kc.Status.Operations[i].ID == operation {
						op = &kc.Status.Operations[i]
					}
				}
				if op == nil {
					return fmt.Errorf("KubernetesCluster %s/%s has no operation %q in its last ten", kc.Namespace, kc.Name, operation)
				}
			}
			if op == nil {
				return fmt.Errorf("KubernetesCluster %s/%s has run no operation yet", kc.Namespace, kc.Name)
			}
			// The Job as the controller names it for the operation's id.
			job := clusterv1alpha1.JobName(kc, op.ID)
			fmt.Fprintln(e.errOut, printable(fmt.Sprintf("operation %s (%s, %s) in Job %s", op.ID, op.Type, op.Result, job)))
			return e.jobLogs(ctx, kc, job, follow)
		}),
	}
	logs.Flags().BoolVarP(&follow, "follow", "f", false, "keep streaming until the installer ends")
	logs.Flags().StringVar(&operation, "operation", "", "the operation's id (status.operations[].id); default the running or last one")
	cmd.AddCommand(kubeconfig, logs)
	return cmd
}

// currentOperation is the running operation, or else the last one.
func currentOperation(kc *clusterv1alpha1.KubernetesCluster) *clusterv1alpha1.Operation {
	ops := kc.Status.Operations
	for i := range ops {
		if ops[i].ID == kc.Status.CurrentOperation && kc.Status.CurrentOperation != "" {
			return &ops[i]
		}
	}
	if len(ops) == 0 {
		return nil
	}
	return &ops[len(ops)-1]
}

// jobPod is the Pod the Job itself made: the one whose controller is the
// Job's UID (the API server assigned it; a name or label anyone may copy
// is not enough).
func (e *env) jobPod(ctx context.Context, job *batchv1.Job) (*corev1.Pod, error) {
	pods := &corev1.PodList{}
	if err := e.c.List(ctx, pods, client.InNamespace(e.namespace),
		client.MatchingLabels{batchv1.ControllerUidLabel: string(job.UID)}); err != nil {
		return nil, fmt.Errorf("listing the Pods of Job %s: %w", job.Name, err)
	}
	mine := workload.JobPods(pods.Items, job)
	switch len(mine) {
	case 0:
		return nil, nil
	case 1:
		return &mine[0], nil
	}
	// An installer's Job makes one Pod (backoffLimit 0): with more than one
	// claiming it, some were made by someone else, as the controller says
	// when it does not quote their output either.
	return nil, fmt.Errorf("%d Pods claim Job %s, which makes one: not printing any of their logs", len(mine), job.Name)
}

var errNoLogYet = errors.New("no log yet")

// jobLogs prints the installer container's log of the Job's Pod; with
// follow it waits for the Pod and its container to start, then streams
// until the container ends.
func (e *env) jobLogs(ctx context.Context, kc *clusterv1alpha1.KubernetesCluster, jobName string, follow bool) error {
	for {
		err := e.jobLogsOnce(ctx, kc, jobName, follow)
		if !errors.Is(err, errNoLogYet) || !follow {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

func (e *env) jobLogsOnce(ctx context.Context, kc *clusterv1alpha1.KubernetesCluster, jobName string, follow bool) error {
	job := &batchv1.Job{}
	if err := e.get(ctx, "Job", jobName, job); err != nil {
		return err
	}
	// The plugin cannot check the Job's seal (the key is the operator's):
	// it takes only a Job whose controller is the cluster, by its UID. One
	// someone else made under the name is not printed at all.
	if ref := metav1.GetControllerOfNoCopy(job); ref == nil || ref.UID != kc.UID {
		return fmt.Errorf("job %s/%s is not KubernetesCluster %s's (its controller is not the cluster): not printing its log", job.Namespace, job.Name, kc.Name)
	}
	pod, err := e.jobPod(ctx, job)
	if err != nil {
		return err
	}
	if pod == nil {
		if follow {
			return errNoLogYet
		}
		return fmt.Errorf("job %s has no Pod (yet): try --follow", jobName)
	}
	container := pod.Spec.Containers[0].Name
	started := false
	for _, s := range pod.Status.ContainerStatuses {
		if s.Name == container && (s.State.Running != nil || s.State.Terminated != nil) {
			started = true
		}
	}
	if !started {
		if follow {
			return errNoLogYet
		}
		return fmt.Errorf("the installer in Pod %s has not started yet: try --follow", pod.Name)
	}
	stream, err := e.kube.CoreV1().Pods(e.namespace).GetLogs(pod.Name, &corev1.PodLogOptions{Container: container, Follow: follow}).Stream(ctx)
	if err != nil {
		return fmt.Errorf("reading the log of Pod %s: %w", pod.Name, err)
	}
	defer stream.Close()
	return copyPrintable(e.out, stream)
}

// copyPrintable copies a log line by line with every control character
// but the tab and the line's end escaped, as printable does: a log is
// what a Pod wrote, and nothing it wrote reaches the terminal as a
// control (an escape sequence, a carriage return over the line before).
func copyPrintable(w io.Writer, r io.Reader) error {
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			var b strings.Builder
			for _, c := range line {
				if c != '\n' && c != '\t' && (unicode.IsControl(c) || unicode.Is(unicode.Bidi_Control, c) || c == utf8.RuneError) {
					fmt.Fprintf(&b, "\\u%04x", c)
					continue
				}
				b.WriteRune(c)
			}
			if _, werr := io.WriteString(w, b.String()); werr != nil {
				return werr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func orNone(s string) string {
	if s == "" {
		return "none yet"
	}
	return s
}

// ownNames gives every cluster, user and context of a kubeconfig a name of
// its own, prefix (kubeforge-<namespace>-<cluster>), or prefix-<name> when
// the file has more than one of them. Merged with other kubeconfigs
// (KUBECONFIG=a:b), where the first file to define a name wins, the
// installer's usual names (kubernetes-admin, cluster.local) would meet the
// reader's own: a context of one file would use a user or a server of
// another — the reader's credentials sent to a server someone who may
// update the Secret chose. Every context must name a user and a cluster
// of the file (inertKubeconfig).
func ownNames(b []byte, prefix string) ([]byte, error) {
	cfg, err := clientcmd.Load(b)
	if err != nil {
		return nil, err
	}
	name := func(n string, count int) string {
		if count == 1 {
			return prefix
		}
		return prefix + "-" + n
	}
	out := clientcmdapi.NewConfig()
	for n, c := range cfg.Clusters {
		out.Clusters[name(n, len(cfg.Clusters))] = c
	}
	for n, u := range cfg.AuthInfos {
		out.AuthInfos[name(n, len(cfg.AuthInfos))] = u
	}
	for n, c := range cfg.Contexts {
		c.Cluster, c.AuthInfo = name(c.Cluster, len(cfg.Clusters)), name(c.AuthInfo, len(cfg.AuthInfos))
		out.Contexts[name(n, len(cfg.Contexts))] = c
	}
	if cfg.CurrentContext != "" {
		out.CurrentContext = name(cfg.CurrentContext, len(cfg.Contexts))
	}
	return clientcmd.Write(*out)
}

// inertKubeconfig refuses a kubeconfig that would do more on the reader's
// machine than talk to its server: run a command (a user's exec plugin),
// call an auth provider, or read a local file (a token, a certificate or
// a key by path) and send what it holds. The installer writes every
// credential inline; whoever may update the Secret could have written
// anything else, and the plugin does not hand that to kubectl.
func inertKubeconfig(b []byte) error {
	cfg, err := clientcmd.Load(b)
	if err != nil {
		return fmt.Errorf("the kubeconfig does not parse: %w", err)
	}
	var why []string
	for _, name := range slices.Sorted(maps.Keys(cfg.AuthInfos)) {
		u := cfg.AuthInfos[name]
		switch {
		case u.Exec != nil:
			why = append(why, fmt.Sprintf("user %q runs a command (exec)", name))
		case u.AuthProvider != nil:
			why = append(why, fmt.Sprintf("user %q calls an auth provider", name))
		case u.TokenFile != "" || u.ClientCertificate != "" || u.ClientKey != "":
			why = append(why, fmt.Sprintf("user %q reads a local file", name))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Clusters)) {
		if cfg.Clusters[name].CertificateAuthority != "" {
			why = append(why, fmt.Sprintf("cluster %q reads a local file", name))
		}
	}
	// Merged with the reader's own kubeconfigs (KUBECONFIG=a:b), a context
	// naming a user this file does not define would send the reader's
	// credentials of that name to this file's server.
	for _, name := range slices.Sorted(maps.Keys(cfg.Contexts)) {
		c := cfg.Contexts[name]
		if _, ok := cfg.AuthInfos[c.AuthInfo]; !ok {
			why = append(why, fmt.Sprintf("context %q uses a user it does not define (%q)", name, c.AuthInfo))
		}
		if _, ok := cfg.Clusters[c.Cluster]; !ok {
			why = append(why, fmt.Sprintf("context %q uses a cluster it does not define (%q)", name, c.Cluster))
		}
	}
	if _, ok := cfg.Contexts[cfg.CurrentContext]; cfg.CurrentContext != "" && !ok {
		why = append(why, fmt.Sprintf("the current context %q is not in it", cfg.CurrentContext))
	}
	if len(why) > 0 {
		return fmt.Errorf("the kubeconfig would do more than the installer writes (%s): someone who may update the Secret changed it", strings.Join(why, "; "))
	}
	return nil
}
