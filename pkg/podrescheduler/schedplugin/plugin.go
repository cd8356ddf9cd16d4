// Package schedplugin is the PodRescheduling kube-scheduler plugin: it
// keeps a pod off the nodes listed in its shepherd.io/excluded-nodes
// annotation, the nodes where the pod's predecessors failed (written by
// the pod rescheduler's webhook or controller).
//
// PreFilter reads the annotation once per scheduling cycle into the
// CycleState and Filter rejects the listed nodes. Returning the allowed
// nodes from PreFilter instead would build a set of every other node of
// the cluster for each pod, and would hide the reason from the pod's
// FailedScheduling message.
//
// The exclusion is a preference that must never make a pod unschedulable,
// so it is dropped, with an ExclusionDropped event on the pod:
//   - in PreFilter, when it covers every node of the cluster, or when the
//     pod's own retry state says the retries are exhausted;
//   - in PostFilter, when the pod fits nowhere and this plugin rejected at
//     least one node that every other filter accepted: the annotation is
//     removed from the pod, which requeues it, and the next attempt
//     schedules it normally.
//
// The plugin imports only the staging scheduler framework
// (k8s.io/kube-scheduler/framework), so New can be registered both in a
// member of `shepherd up` (simmember.Options.SchedulerPlugins) and in
// `shepherd kube-scheduler`.
package schedplugin

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/shepherd-io/shepherd/pkg/podrescheduler/annotations"
)

// Name is the plugin's name in scheduler profiles.
const Name = "PodRescheduling"

// ReasonExclusionDropped is the reason of the event recorded on a pod
// whose exclusion was dropped.
const ReasonExclusionDropped = "ExclusionDropped"

// errReason is Filter's message for an excluded node.
const errReason = "node already tried by the pod's workload (" + annotations.ExcludedNodes + ")"

const stateKey fwk.StateKey = Name

// exclusion is the CycleState entry PreFilter leaves for Filter.
type exclusion struct{ nodes sets.Set[string] }

// Clone shares the set: nothing changes it after PreFilter.
func (e *exclusion) Clone() fwk.StateData { return e }

// Plugin is the PodRescheduling plugin.
type Plugin struct{ handle fwk.Handle }

var (
	_ fwk.PreFilterPlugin  = (*Plugin)(nil)
	_ fwk.FilterPlugin     = (*Plugin)(nil)
	_ fwk.PostFilterPlugin = (*Plugin)(nil)
	_ fwk.SignPlugin       = (*Plugin)(nil)
)

// New builds the plugin; it takes no arguments. Its type is the
// scheduler's PluginFactory (simmember.SchedulerPluginFactory).
func New(_ context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	return &Plugin{handle: h}, nil
}

// Name implements fwk.Plugin.
func (p *Plugin) Name() string { return Name }

// SignPod keeps the scheduler's batching of identical pods working: the
// plugin's verdict depends on these annotations only.
func (p *Plugin) SignPod(_ context.Context, pod *corev1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	return []fwk.SignFragment{{
		Key: "v1.Pod.Annotations.PodRescheduling()",
		Value: [3]string{pod.Annotations[annotations.ExcludedNodes],
			pod.Annotations[annotations.SchedulingRetries], pod.Annotations[annotations.ReschedulingCount]},
	}}, nil
}

// PreFilter decides whether the exclusion applies in this cycle.
func (p *Plugin) PreFilter(ctx context.Context, state fwk.CycleState, pod *corev1.Pod, nodes []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	excluded := sets.New(annotations.ParseList(pod.Annotations[annotations.ExcludedNodes])...)
	if excluded.Len() == 0 {
		return nil, fwk.NewStatus(fwk.Skip)
	}
	if s, ok, err := annotations.Read(pod.Annotations); ok && err == nil && s.Exhausted() {
		p.dropped(ctx, pod, fmt.Sprintf("retries exhausted (%d failures, %d retries)", s.Count, s.Retries))
		return nil, fwk.NewStatus(fwk.Skip)
	}
	tried := 0
	for _, n := range nodes {
		if excluded.Has(n.Node().Name) {
			tried++
		}
	}
	switch {
	case tried == 0:
		// The excluded nodes are gone: nothing to filter.
		return nil, fwk.NewStatus(fwk.Skip)
	case tried == len(nodes):
		p.dropped(ctx, pod, fmt.Sprintf("all %d nodes were tried before", len(nodes)))
		return nil, fwk.NewStatus(fwk.Skip)
	}
	state.Write(stateKey, &exclusion{nodes: excluded})
	return nil, nil
}

// PreFilterExtensions implements fwk.PreFilterPlugin: the exclusion does
// not depend on other pods.
func (p *Plugin) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// Filter rejects the excluded nodes.
func (p *Plugin) Filter(_ context.Context, state fwk.CycleState, _ *corev1.Pod, nodeInfo fwk.NodeInfo) *fwk.Status {
	data, err := state.Read(stateKey)
	if err != nil {
		return fwk.AsStatus(fmt.Errorf("reading %s state: %w", Name, err))
	}
	if data.(*exclusion).nodes.Has(nodeInfo.Node().Name) {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, errReason)
	}
	return nil
}

// PostFilter drops the exclusion of a pod that fits nowhere because of
// it: some nodes passed every other filter and were rejected only here.
func (p *Plugin) PostFilter(ctx context.Context, state fwk.CycleState, pod *corev1.Pod, statuses fwk.NodeToStatusReader) (*fwk.PostFilterResult, *fwk.Status) {
	if _, err := state.Read(stateKey); err != nil {
		return nil, fwk.NewStatus(fwk.Unschedulable)
	}
	nodes, err := p.handle.SnapshotSharedLister().NodeInfos().List()
	if err != nil {
		return nil, fwk.AsStatus(err)
	}
	feasible := 0
	for _, n := range nodes {
		if st := statuses.Get(n.Node().Name); st != nil && st.Plugin() == Name {
			feasible++
		}
	}
	if feasible == 0 {
		return nil, fwk.NewStatus(fwk.Unschedulable)
	}
	if err := p.removeExclusion(ctx, pod); err != nil {
		return nil, fwk.AsStatus(err)
	}
	p.dropped(ctx, pod, fmt.Sprintf("all %d feasible nodes were tried before", feasible))
	return nil, fwk.NewStatus(fwk.Unschedulable, "dropped the exclusion of nodes already tried; retrying")
}

// removeExclusion removes the excluded-nodes annotation from pod (this
// very pod: the uid is a precondition). The update requeues the pod.
func (p *Plugin) removeExclusion(ctx context.Context, pod *corev1.Pod) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"uid":         pod.UID,
		"annotations": map[string]any{annotations.ExcludedNodes: nil},
	}})
	if err != nil {
		return err
	}
	_, err = p.handle.ClientSet().CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("removing %s from pod %s/%s: %w", annotations.ExcludedNodes, pod.Namespace, pod.Name, err)
	}
	return nil
}

// dropped logs and records on the pod that its exclusion was dropped.
func (p *Plugin) dropped(ctx context.Context, pod *corev1.Pod, why string) {
	excluded := annotations.ParseList(pod.Annotations[annotations.ExcludedNodes])
	slices.Sort(excluded)
	klog.FromContext(ctx).Info("scheduling without excluding nodes already tried", "pod", klog.KObj(pod), "reason", why, "excludedNodes", excluded)
	p.handle.EventRecorder().Eventf(pod, nil, corev1.EventTypeNormal, ReasonExclusionDropped, "Scheduling",
		"%s; scheduling on any node", why)
}
