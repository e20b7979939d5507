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

package kubernetescluster

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/engine"
	"github.com/kubeforge/kubeforge/internal/validation"
	"github.com/kubeforge/kubeforge/internal/workload"
)

// Paths in the installer container.
const (
	configDir    = "/kubeforge"
	sshDir       = "/kubeforge-ssh"
	sshKeyPath   = sshDir + "/id_rsa"
	artifactsDir = workDir + "/kubeforge-artifacts"
	// workDir is the installer's only writable directory (an emptyDir):
	// /tmp, and its HOME.
	workDir = "/tmp"
	// givenHostsDir holds known_hosts when the SSH Secret has one: the
	// user's own host keys, checked strictly.
	givenHostsDir = "/kubeforge-ssh-known-hosts"
	// recordedHostsDir holds the host keys kubeforge recorded (the Secret
	// <cluster>-known-hosts), checked strictly; hosts not in it yet are
	// trusted on first use and recorded.
	recordedHostsDir = "/kubeforge-known-hosts"
)

// KnownHostsKey is the key of a known_hosts file: in the SSH Secret (the
// user's, strict) and in the Secret kubeforge records host keys in.
const KnownHostsKey = "known_hosts"

// KnownHostsSecretName names the Secret in which kubeforge records the
// hosts' SSH keys the first time it meets them.
func KnownHostsSecretName(kc *clusterv1alpha1.KubernetesCluster) string {
	return kc.Name + "-known-hosts"
}

const component = "installer"

// InstallerName names the installer's ServiceAccount, Role and RoleBinding.
func InstallerName(kc *clusterv1alpha1.KubernetesCluster) string { return kc.Name + "-installer" }

func meta(kc *clusterv1alpha1.KubernetesCluster, name string) metav1.ObjectMeta {
	labels := engine.CommonLabels(kc, component)
	labels[clusterv1alpha1.ClusterLabel] = kc.Name
	return metav1.ObjectMeta{Name: name, Namespace: kc.Namespace, Labels: labels}
}

// StaticObjects are the objects every cluster has: the kubeconfig and
// known-hosts Secrets (empty until an installer fills them; kubeforge
// never writes their data), then the installer's ServiceAccount, a Role
// that lets it write those two Secrets and nothing else, and their
// binding. The Secrets come first: the Role grants them by name, so it
// may only be applied once both are proven this cluster's — after one
// that is not (someone's own Secret under the name), the engine applies
// nothing more, and the reconciler takes the grant back (RevokeGrant).
func StaticObjects(kc *clusterv1alpha1.KubernetesCluster) []client.Object {
	name := InstallerName(kc)
	return []client.Object{
		&corev1.Secret{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: meta(kc, clusterv1alpha1.KubeconfigSecretName(kc)),
			Type:       corev1.SecretTypeOpaque,
		},
		&corev1.Secret{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: meta(kc, KnownHostsSecretName(kc)),
			Type:       corev1.SecretTypeOpaque,
		},
		&corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"}, ObjectMeta: meta(kc, name)},
		&rbacv1.Role{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
			ObjectMeta: meta(kc, name),
			Rules: []rbacv1.PolicyRule{{
				APIGroups: []string{""}, Resources: []string{"secrets"},
				ResourceNames: []string{clusterv1alpha1.KubeconfigSecretName(kc), KnownHostsSecretName(kc)}, Verbs: []string{"get", "patch", "update"},
			}},
		},
		&rbacv1.RoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
			ObjectMeta: meta(kc, name),
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: kc.Namespace}},
		},
	}
}

// OperationObjects are an operation's ConfigMap (inventory, script,
// helpers) and Job, both created once and never changed.
func OperationObjects(kc *clusterv1alpha1.KubernetesCluster, op clusterv1alpha1.Operation) ([]client.Object, error) {
	version := op.Version
	if version == "" {
		version = kc.Status.Version
	}
	if version == "" {
		version = kc.Spec.Version
	}
	nodes := kc.Spec.Nodes
	if op.Type == clusterv1alpha1.OpScaleDown || op.Type == clusterv1alpha1.OpReset {
		// The inventory must still list the hosts being removed.
		nodes = installedHosts(kc)
	}
	inv, err := Inventory(kc, version, nodes)
	if err != nil {
		return nil, err
	}
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: meta(kc, op.JobName),
		Data: map[string]string{
			"hosts.yaml":      inv,
			"run.sh":          Script(kc, op),
			"precheck.yml":    PrecheckPlaybook,
			"store-secret.py": StoreSecret,
		},
	}
	cm.Labels[clusterv1alpha1.OperationLabel] = op.ID
	job := Job(kc, op)
	// The installer runs the files only when they are exactly these: the
	// Job carries their digests (it cannot change; the ConfigMap is
	// immutable but could be deleted and planted anew under its name
	// before the Pod starts).
	job.Spec.Template.Spec.Containers[0].Env = append(job.Spec.Template.Spec.Containers[0].Env,
		corev1.EnvVar{Name: "KUBEFORGE_OPERATION_SUMS", Value: OperationSums(cm.Data)})
	engine.CreateOnly(cm)
	engine.VerifiedWhereUsed(cm)
	engine.CreateOnly(job)
	return []client.Object{cm, job}, nil
}

// callbackDir is where the installer finds the callback Secret's keys.
const callbackDir = "/var/run/kubeforge/callback"

// OperationSums are the SHA-256 digests of an operation's files, in the
// form sha256sum -c reads.
func OperationSums(files map[string]string) string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		sum := sha256.Sum256([]byte(files[n]))
		fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(sum[:]), n)
	}
	return b.String()
}

// VerifyAndRun is the installer's command: it runs run.sh only when the
// operation's directory holds exactly the files the Job names, with the
// digests it names (KUBEFORGE_OPERATION_SUMS).
const VerifyAndRun = `set -eu
dir=${KUBEFORGE_CONFIG_DIR:-` + configDir + `}
want=$(printf '%s' "$KUBEFORGE_OPERATION_SUMS" | wc -l)
set -- "$dir"/*
if [ "$#" -ne "$want" ] || ! printf '%s' "$KUBEFORGE_OPERATION_SUMS" | (cd "$dir" && sha256sum -c --quiet - >/dev/null 2>&1); then
  echo "kubeforge: the operation's files are not the ones kubeforge made; not running them" >&2
  exit 1
fi
exec /bin/sh "$dir/run.sh"
`

// CallbackSecret holds the token with which an operation's installer may
// report early to the API server (POST .../operations/<id>/callback with
// "Authorization: Bearer <token>"), and the URL to call when the manager
// was given one. It is created once (the token never changes) and goes
// with its operation.
func CallbackSecret(kc *clusterv1alpha1.KubernetesCluster, op clusterv1alpha1.Operation, token, apiURL string, apiCA []byte) *corev1.Secret {
	s := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: meta(kc, clusterv1alpha1.CallbackSecretName(kc, op.ID)),
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{clusterv1alpha1.CallbackTokenKey: []byte(token)},
	}
	s.Labels[clusterv1alpha1.OperationLabel] = op.ID
	sum := sha256.Sum256([]byte(token))
	s.Annotations = map[string]string{clusterv1alpha1.CallbackTokenHashAnnotation: hex.EncodeToString(sum[:])}
	if apiURL != "" {
		s.Data[clusterv1alpha1.CallbackURLKey] = []byte(strings.TrimSuffix(apiURL, "/") + "/api/v1/namespaces/" + kc.Namespace +
			"/kubernetesclusters/" + kc.Name + "/operations/" + op.ID + "/callback")
		if len(apiCA) > 0 {
			s.Data[clusterv1alpha1.CallbackCAKey] = apiCA
		}
	}
	engine.CreateOnly(s)
	return s
}

// installedHosts are the worker hosts installed, with their spec names
// where the spec still lists them.
func installedHosts(kc *clusterv1alpha1.KubernetesCluster) []clusterv1alpha1.Host {
	var out []clusterv1alpha1.Host
	for _, a := range kc.Status.InstalledNodes {
		// A worker no longer in the spec keeps the name it was installed under.
		h := clusterv1alpha1.Host{Address: a, Name: kc.Status.NodeNames[a]}
		for _, n := range kc.Spec.Nodes {
			if n.Address == a {
				h = n
			}
		}
		out = append(out, h)
	}
	return out
}

// Job runs one operation: the installer image with the operation's script,
// the SSH key as a read-only file (never an environment variable), no
// retries, and the timeout as activeDeadlineSeconds, so no goroutine
// watches the clock and a restart loses nothing. The Pod shares one process
// namespace, so that the pause container is PID 1, whatever the installer
// image: it reaps the ssh processes ansible leaves behind, and the
// script, not being PID 1, gets the deadline's SIGTERM like any process
// (run.sh passes it on to ansible: StepRunner).
func Job(kc *clusterv1alpha1.KubernetesCluster, op clusterv1alpha1.Operation) *batchv1.Job {
	in := kc.Spec.Installer
	image, timeout := in.Image, in.Timeout.Duration
	m := meta(kc, op.JobName)
	m.Labels[clusterv1alpha1.OperationLabel] = op.ID
	podLabels := map[string]string{}
	for k, v := range in.PodLabels {
		if validation.ReservedPodLabel(k) == "" { // kubeforge's and the Job controller's labels are theirs
			podLabels[k] = v
		}
	}
	for k, v := range m.Labels {
		podLabels[k] = v
	}
	container := corev1.Container{
		Name:            "installer",
		Image:           image,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Command:         []string{"/bin/sh", "-c", VerifyAndRun},
		Env: []corev1.EnvVar{
			{Name: "KUBEFORGE_OPERATION", Value: string(op.Type)},
			{Name: "KUBEFORGE_KUBECONFIG_SECRET", Value: clusterv1alpha1.KubeconfigSecretName(kc)},
			{Name: "KUBEFORGE_KNOWN_HOSTS_SECRET", Value: KnownHostsSecretName(kc)},
			// Where to report early: the files token and (when the manager
			// knows its API's URL) url, never variables.
			{Name: "KUBEFORGE_CALLBACK_DIR", Value: callbackDir},
			// The installer runs as a user whose home (if any) it cannot
			// write; ansible's own files go to the Pod's work volume. Its
			// remote temporary directory too: for tasks delegated to
			// localhost, ansible makes it under the passwd home of the
			// user it runs as (nobody's is /nonexistent), not $HOME; on
			// the hosts it is a private directory under /tmp.
			{Name: "HOME", Value: workDir},
			{Name: "ANSIBLE_REMOTE_TMP", Value: remoteTmp},
		},
		VolumeMounts: []corev1.VolumeMount{
			{Name: "operation", MountPath: configDir, ReadOnly: true},
			{Name: "ssh", MountPath: sshDir, ReadOnly: true},
			{Name: "given-known-hosts", MountPath: givenHostsDir, ReadOnly: true},
			{Name: "recorded-known-hosts", MountPath: recordedHostsDir, ReadOnly: true},
			{Name: "callback", MountPath: callbackDir, ReadOnly: true},
			{Name: "work", MountPath: workDir},
		},
		// The last lines of the installer's output become the termination
		// message, which a failed operation reports.
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
	if in.Resources != nil {
		container.Resources = *in.Resources
	}
	job := &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: m,
		Spec: batchv1.JobSpec{
			BackoffLimit:          ptr.To[int32](0),
			ActiveDeadlineSeconds: ptr.To(int64(timeout / time.Second)),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
				Spec: corev1.PodSpec{
					RestartPolicy:         corev1.RestartPolicyNever,
					ServiceAccountName:    InstallerName(kc),
					ShareProcessNamespace: ptr.To(true),
					Containers:            []corev1.Container{container},
					Volumes: []corev1.Volume{
						{Name: "operation", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
							LocalObjectReference: corev1.LocalObjectReference{Name: op.JobName},
							DefaultMode:          ptr.To[int32](0o555),
						}}},
						{Name: "ssh", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
							SecretName:  kc.Spec.SSHSecretRef.Name,
							Items:       []corev1.KeyToPath{{Key: corev1.SSHAuthPrivateKey, Path: "id_rsa"}},
							DefaultMode: ptr.To[int32](0o400),
						}}},
						// known_hosts of the SSH Secret, when it has one (optional:
						// a missing key is no file).
						{Name: "given-known-hosts", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
							SecretName:  kc.Spec.SSHSecretRef.Name,
							Items:       []corev1.KeyToPath{{Key: KnownHostsKey, Path: KnownHostsKey}},
							DefaultMode: ptr.To[int32](0o444),
							Optional:    ptr.To(true),
						}}},
						{Name: "recorded-known-hosts", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
							SecretName:  KnownHostsSecretName(kc),
							DefaultMode: ptr.To[int32](0o444),
							Optional:    ptr.To(true),
						}}},
						{Name: "callback", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
							SecretName:  clusterv1alpha1.CallbackSecretName(kc, op.ID),
							DefaultMode: ptr.To[int32](0o400),
						}}},
						{Name: "work", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
					},
				},
			},
		},
	}
	// Restricted: as nobody (a user every installer image has in
	// /etc/passwd, which ssh insists on), on a read-only root with the
	// work volume as /tmp and home; the Secrets' files are readable by
	// the group nobody (fsGroup), never by other users. It keeps its
	// token: it records the kubeconfig and host keys in Secrets.
	workload.Restrict(&job.Spec.Template.Spec, workload.Security{
		User: ptr.To(installerUser), FSGroup: ptr.To(installerUser), ReadOnlyRoot: true, KeepToken: true,
	})
	return job
}

// installerUser is the user the installer runs as: nobody.
const installerUser int64 = 65534

// remoteTmp is ansible's remote temporary directory (ANSIBLE_REMOTE_TMP).
const remoteTmp = workDir + "/.ansible/tmp"
