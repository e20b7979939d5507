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

// Package workload answers, once for every kind, the question each of
// them asks of the Deployments, StatefulSets and DaemonSets it runs: has
// the workload's controller rolled out the current pod template, are all
// the pods there and available, or does it say it cannot make progress.
package workload

import (
	"fmt"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubeforge/kubeforge/internal/conditions"
)

// Reasons a workload's controller gives for not making progress.
const (
	ReasonReplicaFailure   = "ReplicaFailure"
	ReasonProgressDeadline = "ProgressDeadlineExceeded"
)

// ReasonRollingOut is the Progressing reason while pods run an old template.
const ReasonRollingOut = "RollingOut"

// Rollout is what was observed of one workload.
type Rollout struct {
	// Desired is how many pods the workload wants (nodes, for a DaemonSet).
	Desired int32
	// Replicas, Updated, Ready and Available count its pods.
	Replicas, Updated, Ready, Available int32
	// UpToDate is true when the controller has seen the current spec and
	// every wanted pod runs the current template.
	UpToDate bool
	// Settled is true when it is UpToDate with exactly the wanted pods,
	// every one of them available.
	Settled bool
	// AvailableCondition is the Deployment's Available condition.
	AvailableCondition bool
	// Failed is true when the controller says it cannot make progress;
	// Reason and Message are its words.
	Failed          bool
	Reason, Message string
	// Progress says, while not Settled, how far the rollout got.
	Progress string
}

// Of reads a Deployment, StatefulSet or DaemonSet, each with the pods its
// own spec wants; ok is false for any other object.
func Of(obj client.Object) (r Rollout, ok bool) {
	switch w := obj.(type) {
	case *appsv1.Deployment:
		return Deployment(w, replicas(w.Spec.Replicas)), true
	case *appsv1.StatefulSet:
		return StatefulSet(w), true
	case *appsv1.DaemonSet:
		return DaemonSet(w), true
	}
	return Rollout{}, false
}

// Deployment reads a Deployment that should run desired pods.
func Deployment(d *appsv1.Deployment, desired int32) Rollout {
	s := d.Status
	r := Rollout{Desired: desired, Replicas: s.Replicas, Updated: s.UpdatedReplicas, Ready: s.ReadyReplicas, Available: s.AvailableReplicas}
	r.UpToDate = s.ObservedGeneration >= d.Generation && s.UpdatedReplicas == desired
	r.Settled = r.UpToDate && s.Replicas == desired && s.AvailableReplicas == desired
	for _, c := range s.Conditions {
		switch {
		case c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionTrue:
			r.AvailableCondition = true
		case c.Type == appsv1.DeploymentReplicaFailure && c.Status == corev1.ConditionTrue:
			r.Failed, r.Reason, r.Message = true, ReasonReplicaFailure, c.Message
		case c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse && c.Reason == ReasonProgressDeadline:
			r.Failed, r.Reason, r.Message = true, ReasonProgressDeadline, c.Message
		}
	}
	if !r.Settled {
		r.Progress = fmt.Sprintf("%d of %d pods updated and available", s.AvailableReplicas, desired)
	}
	return r
}

// StatefulSet reads a StatefulSet: settled when every pod runs the update
// revision and is ready and available.
func StatefulSet(st *appsv1.StatefulSet) Rollout {
	s := st.Status
	want := replicas(st.Spec.Replicas)
	r := Rollout{Desired: want, Replicas: s.Replicas, Updated: s.UpdatedReplicas, Ready: s.ReadyReplicas, Available: s.AvailableReplicas}
	r.UpToDate = s.ObservedGeneration >= st.Generation && s.UpdatedReplicas == want &&
		(want == 0 || s.CurrentRevision == s.UpdateRevision)
	r.Settled = r.UpToDate && s.ReadyReplicas == want && s.AvailableReplicas == want
	if !r.Settled {
		r.Progress = fmt.Sprintf("%d of %d pods updated and ready", s.UpdatedReplicas, want)
	}
	return r
}

// DaemonSet reads a DaemonSet: settled when every node it should run on
// runs the updated pod, available.
func DaemonSet(ds *appsv1.DaemonSet) Rollout {
	s := ds.Status
	want := s.DesiredNumberScheduled
	r := Rollout{Desired: want, Replicas: s.CurrentNumberScheduled, Updated: s.UpdatedNumberScheduled, Ready: s.NumberReady, Available: s.NumberAvailable}
	r.UpToDate = s.ObservedGeneration >= ds.Generation && s.UpdatedNumberScheduled == want
	r.Settled = r.UpToDate && s.NumberAvailable == want
	if !r.Settled {
		r.Progress = fmt.Sprintf("%d of %d nodes run the updated pod", s.UpdatedNumberScheduled, want)
	}
	return r
}

// Progressing is the Progressing condition of a kind whose workload this
// is: whether the rollout still moves, its reason and a message that
// counts pods (named by pods, e.g. "proxy pods"). scaling is the reason
// while every pod runs the current template but their number is not there.
func (r Rollout) Progressing(pods, scaling string) (bool, string, string) {
	switch {
	case r.Settled:
		return false, conditions.ReasonRolloutDone, fmt.Sprintf("%d of %d %s updated and available", r.Desired, r.Desired, pods)
	case !r.UpToDate:
		return true, ReasonRollingOut, fmt.Sprintf("%d of %d %s updated", r.Updated, r.Desired, pods)
	default:
		return true, scaling, fmt.Sprintf("%d %s, %d available, %d desired", r.Replicas, pods, r.Available, r.Desired)
	}
}

// replicas is a workload's spec.replicas as the API server defaults it.
func replicas(r *int32) int32 {
	if r == nil {
		return 1
	}
	return *r
}

// Controlled are those of items whose controller reference names uid:
// the objects a controller made (a Job's or a ReplicaSet's Pods, a
// Service's EndpointSlices). Labels are anyone's to copy onto an object of
// their own; a UID is the API server's. The reference is still written by
// whoever creates the object (the UID is readable), but one that claims
// the controller is counted by that controller too, so it is the
// controller's as far as Kubernetes is concerned. An empty uid controls
// nothing.
func Controlled[T any, P interface {
	*T
	metav1.Object
}](items []T, uid types.UID) []T {
	if uid == "" {
		return nil
	}
	var out []T
	for i := range items {
		if ref := metav1.GetControllerOfNoCopy(P(&items[i])); ref != nil && ref.UID == uid {
			out = append(out, items[i])
		}
	}
	return out
}

// JobPods are those of pods that name job (its UID) as their controller
// (Controlled). A Job that makes one pod (backoffLimit 0) with more than
// one claiming it has pods planted beside its own.
func JobPods(pods []corev1.Pod, job *batchv1.Job) []corev1.Pod {
	return Controlled(pods, job.UID)
}

// DeploymentPods are those of pods that Kubernetes counts as dep's: each
// names as its controller one of sets (the ReplicaSets, metadata is
// enough) that names dep as its controller (Controlled, twice), and is
// active — not being deleted, not Succeeded or Failed, as a ReplicaSet
// counts its pods. A ReplicaSet being deleted counts none: its controller
// no longer scales it, so pods claiming one that someone holds in
// deletion with a finalizer would never be removed. A pod that claims one
// of dep's ReplicaSets and is active is counted by it, and removed by it
// when surplus; one that is finished is not, and would stay.
func DeploymentPods(pods []corev1.Pod, sets []metav1.PartialObjectMetadata, dep *appsv1.Deployment) []corev1.Pod {
	if dep == nil {
		return nil
	}
	var out []corev1.Pod
	for _, rs := range Controlled(sets, dep.UID) {
		if rs.DeletionTimestamp != nil {
			continue
		}
		for _, p := range Controlled(pods, rs.UID) {
			if p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
				out = append(out, p)
			}
		}
	}
	return out
}

// EndpointSliceControllerName is the value of discoveryv1.LabelManagedBy
// on the EndpointSlices Kubernetes' EndpointSlice controller makes.
const EndpointSliceControllerName = "endpointslice-controller.k8s.io"

// ServiceSlices are those of slices that svc's EndpointSlice controller
// made and keeps: its UID as their controller, and the controller's
// managed-by label, by which it lists the slices it keeps true (a slice
// claiming svc without the label is never corrected or removed; one with
// it is rewritten or deleted on the Service's next sync).
func ServiceSlices(slices []discoveryv1.EndpointSlice, svc *corev1.Service) []discoveryv1.EndpointSlice {
	var out []discoveryv1.EndpointSlice
	for _, s := range Controlled(slices, svc.UID) {
		if s.Labels[discoveryv1.LabelManagedBy] == EndpointSliceControllerName {
			out = append(out, s)
		}
	}
	return out
}

// JobResult reads a Job's outcome: done is false while it runs; reason
// and message say why it failed.
func JobResult(job *batchv1.Job) (done, succeeded bool, reason, message string) {
	for _, c := range job.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			return true, true, "", c.Message
		case batchv1.JobFailed:
			return true, false, c.Reason, c.Message
		}
	}
	return false, false, "", ""
}

// ReadyEndpoints counts the distinct ready endpoints in a Service's
// EndpointSlices. An endpoint whose ready condition is unknown counts as
// ready, as the EndpointSlice API says consumers should.
func ReadyEndpoints(slices []discoveryv1.EndpointSlice) int32 {
	seen := map[string]bool{}
	for _, s := range slices {
		for _, ep := range s.Endpoints {
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
				continue
			}
			if len(ep.Addresses) == 0 {
				continue
			}
			// Slices of one Service may repeat an endpoint (one slice per
			// address type or port set); count each address once.
			seen[string(s.AddressType)+"/"+ep.Addresses[0]] = true
		}
	}
	return int32(len(seen))
}

// What the cache keeps of a read object nobody can prove the operator's
// (engine.Read.Keep): the fields the functions above read, each bounded,
// whatever size the object has. Every kind that reads a type names the
// same function for it.

// Bounds of PodFields.
const (
	// MaxKeptContainerStatuses is how many container statuses PodFields
	// keeps: an installer's Pod has one container.
	MaxKeptContainerStatuses = 8
	// MaxKeptMessage is how much of a container's termination message
	// PodFields keeps: the kubelet's own limit for one container.
	MaxKeptMessage = 4096
)

// PodFields is what kinds read of a Pod someone else made (a ReplicaSet's
// or a Job's): its phase and how its first containers ended (JobPods,
// DeploymentPods and an installer's failure output). Its metadata is the
// engine's to bound.
func PodFields(obj client.Object) client.Object {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return &corev1.Pod{}
	}
	out := &corev1.Pod{TypeMeta: p.TypeMeta, Status: corev1.PodStatus{Phase: p.Status.Phase}}
	for i, cs := range p.Status.ContainerStatuses {
		if i == MaxKeptContainerStatuses {
			break
		}
		kept := corev1.ContainerStatus{Name: cs.Name, Ready: cs.Ready, RestartCount: cs.RestartCount}
		if t := cs.State.Terminated; t != nil {
			kept.State.Terminated = &corev1.ContainerStateTerminated{ExitCode: t.ExitCode, Reason: truncate(t.Reason, 256), Message: truncate(t.Message, MaxKeptMessage)}
		}
		out.Status.ContainerStatuses = append(out.Status.ContainerStatuses, kept)
	}
	return out
}

// EndpointSliceFields is what kinds read of an EndpointSlice: its address
// type and each endpoint's first address and ready condition
// (ReadyEndpoints). The API allows 1000 endpoints a slice.
func EndpointSliceFields(obj client.Object) client.Object {
	s, ok := obj.(*discoveryv1.EndpointSlice)
	if !ok {
		return &discoveryv1.EndpointSlice{}
	}
	out := &discoveryv1.EndpointSlice{TypeMeta: s.TypeMeta, AddressType: s.AddressType}
	for _, ep := range s.Endpoints {
		kept := discoveryv1.Endpoint{Conditions: discoveryv1.EndpointConditions{Ready: ep.Conditions.Ready}}
		if len(ep.Addresses) > 0 {
			kept.Addresses = []string{truncate(ep.Addresses[0], 64)}
		}
		out.Endpoints = append(out.Endpoints, kept)
	}
	return out
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// Files a workload's containers read are carried in its own pod template,
// not in a ConfigMap mounted by name: anyone who may write a ConfigMap in
// the namespace (a right many roles give without the right to change a
// Deployment) could otherwise put what the workload reads — and a copy made
// under the same name after a delete is one the operator never made, which
// a Pod started later would still mount. In the template, the files are
// exactly as safe as the workload itself: whoever may change them — in the
// workload's template, or in a Pod's annotations, which the kubelet shows
// to its containers anew — may already change its image.

// FilesAnnotationPrefix is the prefix of the pod template annotations that
// carry files (TemplateFiles).
const FilesAnnotationPrefix = "files.kubeforge.io/"

// MaxTemplateFiles is how many bytes of files (names and contents) a pod
// template may carry: the API allows 256 KiB of annotations an object.
const MaxTemplateFiles = 128 << 10

// TemplateFiles puts files (name → content) into tmpl's annotations and
// returns the volume, named volume, that shows them to its containers as
// files of those names (a downward API volume of the Pod's own
// annotations). It fails when the files are larger than MaxTemplateFiles.
func TemplateFiles(tmpl *corev1.PodTemplateSpec, volume string, files map[string]string) (corev1.Volume, error) {
	names := make([]string, 0, len(files))
	size := 0
	for n, c := range files {
		names = append(names, n)
		size += len(n) + len(c)
	}
	if size > MaxTemplateFiles {
		return corev1.Volume{}, fmt.Errorf("its files take %d KiB; a pod template carries at most %d KiB", (size+1023)/1024, MaxTemplateFiles/1024)
	}
	sort.Strings(names)
	src := &corev1.DownwardAPIVolumeSource{}
	for i, n := range names {
		key := fmt.Sprintf("%s%s.%d", FilesAnnotationPrefix, volume, i)
		if tmpl.Annotations == nil {
			tmpl.Annotations = map[string]string{}
		}
		tmpl.Annotations[key] = files[n]
		src.Items = append(src.Items, corev1.DownwardAPIVolumeFile{
			Path:     n,
			FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.annotations['" + key + "']"},
		})
	}
	return corev1.Volume{Name: volume, VolumeSource: corev1.VolumeSource{DownwardAPI: src}}, nil
}
