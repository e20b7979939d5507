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
	"reflect"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kubeforge/kubeforge/api/apps/v1alpha1"
	clusterv1alpha1 "github.com/kubeforge/kubeforge/api/cluster/v1alpha1"
	idev1alpha1 "github.com/kubeforge/kubeforge/api/ide/v1alpha1"
	networkingv1alpha1 "github.com/kubeforge/kubeforge/api/networking/v1alpha1"
	"github.com/kubeforge/kubeforge/internal/workload"
)

// now is the clock ages are measured against; tests fix it.
var now = time.Now

func statusCommand(newEnv func() (*env, error)) *cobra.Command {
	events := 10
	cmd := &cobra.Command{
		Use:   "status KIND/NAME",
		Short: "Conditions, owned objects with their readiness, recent events and what the object waits for",
		Example: `  kubectl kubeforge status ws/alice
  kubectl kubeforge status platform shop -n team-a`,
		Args: cobra.RangeArgs(1, 2),
	}
	cmd.RunE = run(newEnv, func(ctx context.Context, e *env, args []string) error {
		k, name, err := parseRef(args)
		if err != nil {
			return err
		}
		obj := k.newObj()
		if err := e.get(ctx, k.kind, name, obj); err != nil {
			return err
		}
		return e.status(ctx, k.kind, obj, events)
	})
	cmd.Flags().IntVar(&events, "events", events, "how many of the newest events to show")
	return cmd
}

// summary is what the status screen says about one object, read from it
// alone; owned objects and events are read beside it.
type summary struct {
	phase      string
	generation int64
	observed   int64
	details    [][2]string
	conditions []metav1.Condition
	waiting    []string
}

func summarize(obj client.Object) summary {
	s := summary{generation: obj.GetGeneration()}
	switch o := obj.(type) {
	case *idev1alpha1.Workspace:
		s.phase, s.observed, s.conditions = string(o.Status.Phase), o.Status.ObservedGeneration, o.Status.Conditions
		if o.Status.Reason != "" {
			s.phase += " (" + o.Status.Reason + ")"
		}
		s.add("URL", o.Status.URL)
		s.add("Node", o.Status.NodeName)
		if name := credentialsSecret(o); name != "" {
			s.add("Password", "in Secret "+name+", key password")
		}
		if o.Status.Phase != idev1alpha1.PhaseRunning && o.Status.Phase != idev1alpha1.PhaseStopped && o.Status.Message != "" {
			s.waiting = append(s.waiting, o.Status.Message)
		}
	case *networkingv1alpha1.Balancer:
		s.observed, s.conditions = o.Status.ObservedGeneration, o.Status.Conditions
		s.add("Proxy", fmt.Sprintf("%d/%d ready", o.Status.ReadyReplicas, o.Status.Replicas))
		var bs []string
		for _, b := range o.Status.Backends {
			bs = append(bs, fmt.Sprintf("%s (weight %d, %d ready)", b.Name, b.Weight, b.ReadyEndpoints))
			if b.ReadyEndpoints == 0 {
				s.waiting = append(s.waiting, "backend "+b.Name+" has no ready endpoint")
			}
		}
		s.add("Backends", strings.Join(bs, ", "))
	case *appsv1alpha1.PodSet:
		s.observed, s.conditions = o.Status.ObservedGeneration, o.Status.Conditions
		want := int32(1)
		if o.Spec.Replicas != nil {
			want = *o.Spec.Replicas
		}
		s.add("Pods", fmt.Sprintf("%d/%d ready", o.Status.ReadyReplicas, want))
		if o.Status.ReadyReplicas < want {
			s.waiting = append(s.waiting, fmt.Sprintf("%d more Pod(s) to turn Ready", want-o.Status.ReadyReplicas))
		}
	case *appsv1alpha1.Platform:
		s.phase, s.observed, s.conditions = string(o.Status.Phase), o.Status.ObservedGeneration, o.Status.Conditions
		s.add("Version", o.Status.Version)
		s.add("Components", o.Status.Ready+" ready")
		for _, c := range o.Status.Components {
			if c.Phase != appsv1alpha1.ComponentReady && c.Phase != appsv1alpha1.ComponentDisabled {
				w := "component " + c.Name + " is " + string(c.Phase)
				if c.Message != "" {
					w += ": " + c.Message
				}
				s.waiting = append(s.waiting, w)
			}
		}
	case *clusterv1alpha1.KubernetesCluster:
		s.phase, s.observed, s.conditions = string(o.Status.Phase), o.Status.ObservedGeneration, o.Status.Conditions
		s.add("Version", o.Status.Version)
		s.add("Nodes", fmt.Sprintf("%s, %s installed", count(o.Status.MasterCount, "master"), count(o.Status.NodeCount, "node")))
		if o.Status.KubeconfigSecretRef != nil {
			s.add("Kubeconfig", "in Secret "+clusterv1alpha1.KubeconfigSecretName(o)+" (kubectl kubeforge cluster kubeconfig "+o.Name+")")
		}
		if op := currentOperation(o); op != nil && op.Result == clusterv1alpha1.ResultRunning {
			s.waiting = append(s.waiting, fmt.Sprintf("operation %s (%s) in Job %s: kubectl kubeforge cluster logs %s --follow",
				op.ID, op.Type, clusterv1alpha1.JobName(o, op.ID), o.Name))
		}
	}
	if s.observed != s.generation {
		s.waiting = append(s.waiting, fmt.Sprintf("the operator to observe generation %d (status is of %d)", s.generation, s.observed))
	}
	for _, c := range s.conditions {
		if c.Type == "Ready" && c.Status != metav1.ConditionTrue {
			w := "Ready is " + string(c.Status)
			if c.Reason != "" {
				w += " (" + c.Reason + ")"
			}
			if c.Message != "" {
				w += ": " + c.Message
			}
			s.waiting = append(s.waiting, w)
			if c.Reason == "NotAdmitted" {
				// What approves it again (docs/security.md).
				s.waiting = append(s.waiting, fmt.Sprintf("an approval: with kubeforge's webhooks in place, someone who may use what it names runs "+
					`kubectl annotate %s/%s -n %s kubeforge.io/readmit="$(date +%%s)" --overwrite`,
					strings.ToLower(reflect.TypeOf(obj).Elem().Name()), obj.GetName(), obj.GetNamespace()))
			}
		}
	}
	return s
}

func (s *summary) add(k, v string) {
	if v != "" {
		s.details = append(s.details, [2]string{k, v})
	}
}

// owned is one object that names the shown object as its controller.
type owned struct {
	kind, name, ready string
}

// ownedKinds are the kinds kubeforge makes for its objects. Those with a
// readiness are read whole; the rest as metadata only (no Secret's or
// ConfigMap's content is ever read for this screen).
var ownedKinds = []struct {
	kind string
	list func() client.ObjectList
}{
	{"Deployment", func() client.ObjectList { return &appsv1.DeploymentList{} }},
	{"StatefulSet", func() client.ObjectList { return &appsv1.StatefulSetList{} }},
	{"DaemonSet", func() client.ObjectList { return &appsv1.DaemonSetList{} }},
	{"CronJob", func() client.ObjectList { return &batchv1.CronJobList{} }},
	{"Job", func() client.ObjectList { return &batchv1.JobList{} }},
	{"Pod", func() client.ObjectList { return &corev1.PodList{} }},
	{"Service", func() client.ObjectList { return &corev1.ServiceList{} }},
	{"PersistentVolumeClaim", func() client.ObjectList { return &corev1.PersistentVolumeClaimList{} }},
	{"ConfigMap", metadataList(corev1.SchemeGroupVersion.WithKind("ConfigMapList"))},
	{"Secret", metadataList(corev1.SchemeGroupVersion.WithKind("SecretList"))},
	{"ServiceAccount", metadataList(corev1.SchemeGroupVersion.WithKind("ServiceAccountList"))},
	{"Role", metadataList(rbacv1.SchemeGroupVersion.WithKind("RoleList"))},
	{"RoleBinding", metadataList(rbacv1.SchemeGroupVersion.WithKind("RoleBindingList"))},
	{"Ingress", metadataList(networkingv1.SchemeGroupVersion.WithKind("IngressList"))},
	{"NetworkPolicy", metadataList(networkingv1.SchemeGroupVersion.WithKind("NetworkPolicyList"))},
	{"PodDisruptionBudget", metadataList(policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudgetList"))},
	{"Certificate", metadataList(schema.GroupVersionKind{Group: "cert-manager.io", Version: "v1", Kind: "CertificateList"})},
}

func metadataList(gvk schema.GroupVersionKind) func() client.ObjectList {
	return func() client.ObjectList {
		l := &metav1.PartialObjectMetadataList{}
		l.SetGroupVersionKind(gvk)
		return l
	}
}

// ownedBy lists the objects whose controller is uid, and the kinds the
// user may not list (said on the screen, not an error).
func (e *env) ownedBy(ctx context.Context, uid types.UID) ([]owned, []string, error) {
	var out []owned
	var hidden []string
	for _, k := range ownedKinds {
		l := k.list()
		if err := e.c.List(ctx, l, client.InNamespace(e.namespace)); err != nil {
			if apierrors.IsForbidden(err) {
				hidden = append(hidden, k.kind)
				continue
			}
			if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
				continue // a kind this cluster does not serve (cert-manager's)
			}
			return nil, nil, fmt.Errorf("listing %ss: %w", k.kind, err)
		}
		items, err := meta.ExtractList(l)
		if err != nil {
			return nil, nil, err
		}
		for _, it := range items {
			o, ok := it.(client.Object)
			if !ok {
				continue
			}
			if ref := metav1.GetControllerOfNoCopy(o); ref == nil || ref.UID != uid {
				continue
			}
			out = append(out, owned{kind: k.kind, name: o.GetName(), ready: readiness(o)})
		}
	}
	return out, hidden, nil
}

// readiness is one short answer to "is it ready?" for an owned object,
// read as the controllers read it (internal/workload).
func readiness(o client.Object) string {
	if r, ok := workload.Of(o); ok {
		s := fmt.Sprintf("%d/%d ready", r.Ready, r.Desired)
		switch {
		case r.Failed:
			s += ", " + r.Reason
		case !r.Settled:
			s += ", " + r.Progress
		}
		return s
	}
	switch x := o.(type) {
	case *batchv1.Job:
		done, succeeded, reason, _ := workload.JobResult(x)
		switch {
		case !done:
			return fmt.Sprintf("Running (%d active)", x.Status.Active)
		case succeeded:
			return "Complete"
		}
		return "Failed " + reason
	case *batchv1.CronJob:
		if x.Spec.Suspend != nil && *x.Spec.Suspend {
			return "Suspended"
		}
		if x.Status.LastScheduleTime != nil {
			return "last run " + age(x.Status.LastScheduleTime.Time) + " ago"
		}
		return "not run yet"
	case *corev1.Pod:
		ready := 0
		for _, s := range x.Status.ContainerStatuses {
			if s.Ready {
				ready++
			}
		}
		r := fmt.Sprintf("%s %d/%d", x.Status.Phase, ready, len(x.Spec.Containers))
		for _, s := range x.Status.ContainerStatuses {
			if s.State.Waiting != nil && s.State.Waiting.Reason != "" {
				r += " " + s.State.Waiting.Reason
			}
		}
		return r
	case *corev1.PersistentVolumeClaim:
		return string(x.Status.Phase)
	case *corev1.Service:
		if x.Spec.ClusterIP != "" {
			return string(x.Spec.Type) + " " + x.Spec.ClusterIP
		}
		return string(x.Spec.Type)
	}
	return "-"
}

// eventsOf lists the newest events about uid, newest last.
func (e *env) eventsOf(ctx context.Context, uid types.UID, n int) ([]corev1.Event, error) {
	l, err := e.kube.CoreV1().Events(e.namespace).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.uid=" + string(uid)})
	if err != nil {
		return nil, err
	}
	evs := l.Items
	sort.SliceStable(evs, func(i, j int) bool { return eventTime(evs[i]).Before(eventTime(evs[j])) })
	if len(evs) > n {
		evs = evs[len(evs)-n:]
	}
	return evs, nil
}

func eventTime(ev corev1.Event) time.Time {
	switch {
	case !ev.LastTimestamp.IsZero():
		return ev.LastTimestamp.Time
	case !ev.EventTime.IsZero():
		return ev.EventTime.Time
	}
	return ev.CreationTimestamp.Time
}

func (e *env) status(ctx context.Context, kind string, obj client.Object, nEvents int) error {
	s := summarize(obj)
	items, hidden, err := e.ownedBy(ctx, obj.GetUID())
	if err != nil {
		return err
	}
	evs, err := e.eventsOf(ctx, obj.GetUID(), nEvents)
	if err != nil && !apierrors.IsForbidden(err) {
		return fmt.Errorf("listing events: %w", err)
	}
	writeStatus(e.out, kind, obj, s, items, hidden, evs)
	return nil
}

// writeStatus is the one screen.
func writeStatus(w io.Writer, kind string, obj client.Object, s summary, items []owned, hidden []string, evs []corev1.Event) {
	head := fmt.Sprintf("%s %s/%s", kind, obj.GetNamespace(), obj.GetName())
	if s.phase != "" {
		head += "  " + printable(s.phase)
	}
	fmt.Fprintf(w, "%s  (generation %d, observed %d, age %s)\n", head, s.generation, s.observed, age(obj.GetCreationTimestamp().Time))
	var details [][]string
	for _, d := range s.details {
		details = append(details, []string{d[0] + ":", d[1]})
	}
	indented(w, details)

	var rows [][]string
	for _, c := range s.conditions {
		rows = append(rows, []string{c.Type, string(c.Status), c.Reason, age(c.LastTransitionTime.Time), c.Message})
	}
	section(w, "Conditions", "none yet", []string{"TYPE", "STATUS", "REASON", "AGE", "MESSAGE"}, rows)

	rows = nil
	for _, it := range items {
		rows = append(rows, []string{it.kind, it.name, it.ready})
	}
	section(w, "Objects", "none", []string{"KIND", "NAME", "READY"}, rows)
	if len(hidden) > 0 {
		fmt.Fprintf(w, "  (not shown, your RBAC does not let you list: %s)\n", strings.Join(hidden, ", "))
	}

	rows = nil
	for _, ev := range evs {
		rows = append(rows, []string{age(eventTime(ev)), ev.Type, ev.Reason, ev.Message})
	}
	section(w, "Events", "none", []string{"AGE", "TYPE", "REASON", "MESSAGE"}, rows)

	fmt.Fprintln(w)
	if len(s.waiting) == 0 {
		fmt.Fprintln(w, "Waiting for: nothing")
		return
	}
	fmt.Fprintln(w, "Waiting for:")
	for _, x := range s.waiting {
		fmt.Fprintf(w, "  - %s\n", printable(x))
	}
}

// section writes a titled table under its header, or empty when it has
// no rows.
func section(w io.Writer, title, empty string, header []string, rows [][]string) {
	fmt.Fprintf(w, "\n%s:\n", title)
	if len(rows) == 0 {
		fmt.Fprintln(w, "  "+empty)
		return
	}
	indented(w, append([][]string{header}, rows...))
}

// writeTable writes rows with their columns aligned; every cell passes
// through printable.
func writeTable(w io.Writer, rows [][]string) { alignedRows(w, "", rows) }

// indented is writeTable with each line indented under a title.
func indented(w io.Writer, rows [][]string) { alignedRows(w, "  ", rows) }

func alignedRows(w io.Writer, indent string, rows [][]string) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, r := range rows {
		cells := make([]string, len(r))
		for i, c := range r {
			cells[i] = printable(c)
		}
		fmt.Fprintln(tw, indent+strings.Join(cells, "\t"))
	}
	_ = tw.Flush()
}

func age(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return duration.HumanDuration(now().Sub(t))
}

// count says n things: "1 node", "2 nodes".
func count(n int32, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// printable is a value as this screen may print it. Much of what it
// shows was written by others — a condition or event message, a phase in
// status (whoever may write an object's status), a name a message quotes —
// so nothing written reaches the terminal as a control: escape sequences,
// carriage returns, bells and bidirectional overrides are shown escaped
// (\u001b), and runs of white space become one space.
func printable(s string) string {
	var b strings.Builder
	for _, r := range strings.Join(strings.Fields(s), " ") {
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == utf8.RuneError {
			fmt.Fprintf(&b, "\\u%04x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
