package binding

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
	"github.com/shepherd-io/shepherd/pkg/names"
	"github.com/shepherd-io/shepherd/pkg/placement"
)

// hubMetadata are the metadata fields the hub's API server owns: they
// describe the template's life on the hub, not what to create in a member.
var hubMetadata = []string{
	"uid", "resourceVersion", "managedFields", "ownerReferences", "creationTimestamp",
	"generation", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds", "finalizers",
}

// lastApplied is kubectl's record of what it applied to the hub.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// memberManifest returns what to create in a member for tmpl: a copy without its
// status, the metadata the hub's API server set, and the values the hub
// allocated that a member must allocate itself (in.Prune: a Job's
// generated selector, a Service's cluster IPs). tmpl is not modified.
func memberManifest(in interpreter.Interpreter, tmpl *unstructured.Unstructured) *unstructured.Unstructured {
	m := tmpl.DeepCopy()
	delete(m.Object, "status")
	for _, f := range hubMetadata {
		unstructured.RemoveNestedField(m.Object, "metadata", f)
	}
	if ann := m.GetAnnotations(); ann != nil {
		delete(ann, lastApplied)
		if len(ann) == 0 {
			ann = nil
		}
		m.SetAnnotations(ann)
	}
	in.Prune(m)
	return m
}

// memberManifests returns the manifest of each active target: the template's
// replicas for a Duplicated placement (and for kinds without replicas),
// the target's share for a Divided one (in.ReviseReplicas), and for a
// workload whose components the scheduler divided (spec.dividedComponents)
// the target's share of each component at its replicasPath, 0 for those it
// does not run (interpreter.ReviseComponents), with the labels a
// failover's state preservation carries (see preservedState).
func memberManifests(in interpreter.Interpreter, tmpl *unstructured.Unstructured, spec *workv1alpha1.BindingSpec) (map[string]*unstructured.Unstructured, error) {
	base := memberManifest(in, tmpl)
	active := bindingutil.WorkTargets(spec)
	var out map[string]*unstructured.Unstructured
	switch {
	case spec.DividedComponents != nil:
		// The scheduler writes the division with the targets: each
		// target's components are its shares, whatever the placement
		// says now (a change of it is scheduled again, and the division
		// goes with the targets it was made for).
		var err error
		if out, err = interpreter.ReviseComponents(base, spec.Components, active); err != nil {
			return nil, err
		}
	case placement.IsDuplicated(spec.Placement):
		out = make(map[string]*unstructured.Unstructured, len(active))
		for _, t := range active {
			out[t.Name] = base
		}
	default:
		var err error
		if out, err = in.ReviseReplicas(base, active); err != nil {
			return nil, err
		}
	}
	if labels, before := preservedState(spec); len(labels) > 0 && len(active) == 1 && !slices.Contains(before, active[0].Name) {
		m := out[active[0].Name].DeepCopy()
		merged := m.GetLabels()
		if merged == nil {
			merged = map[string]string{}
		}
		maps.Copy(merged, labels)
		m.SetLabels(merged)
		out[active[0].Name] = m
	}
	return out, nil
}

// preservedState returns the labels of the latest eviction that preserved
// state, and the targets before it. As in Karmada, they go only to a
// workload that runs on one cluster after the failover, and only to a
// cluster it did not run on before; they stay for as long as the eviction
// is in the binding's history.
func preservedState(spec *workv1alpha1.BindingSpec) (map[string]string, []string) {
	var latest *workv1alpha1.EvictionHistoryEntry
	for i := range spec.EvictionHistory {
		h := &spec.EvictionHistory[i]
		if len(h.PreservedLabelState) > 0 && (latest == nil || !h.EvictedAt.Before(&latest.EvictedAt)) {
			latest = h
		}
	}
	if latest == nil {
		return nil, nil
	}
	return latest.PreservedLabelState, latest.ClustersBeforeFailover
}

// ReasonIdentityChanged is the Warning event on a binding (and its
// template) when the manifest rendered for a cluster is not the binding's
// resource any more: another group, kind, namespace or name. The API
// refuses override policies that would do it and pkg/overrides checks
// every overrider; this is the last check before a Work is written, so that
// nothing a tenant writes can make Shepherd create or adopt another kind
// of object, or one in another namespace. That cluster's Work is left as
// it was.
const ReasonIdentityChanged = "IdentityChanged"

// checkIdentity returns an error naming the field when m is not the
// object res names: its group, kind, namespace and name must be res's (the
// version may differ; it names the same object).
func checkIdentity(m *unstructured.Unstructured, res workv1alpha1.ObjectReference) error {
	want, err := schema.ParseGroupVersion(res.APIVersion)
	if err != nil {
		return fmt.Errorf("the binding's resource apiVersion %q: %w", res.APIVersion, err)
	}
	got := m.GroupVersionKind()
	for _, f := range []struct{ field, got, want string }{
		{"group", got.Group, want.Group},
		{"kind", got.Kind, res.Kind},
		{"namespace", m.GetNamespace(), res.Namespace},
		{"name", m.GetName(), res.Name},
	} {
		if f.got != f.want {
			return fmt.Errorf("the rendered manifest's %s is %q, not the template's %q: Shepherd sends a template only as itself, so the Work is not written", f.field, f.got, f.want)
		}
	}
	return nil
}

// desiredWork is the Work holding manifest for cluster. The binding
// controller applies exactly these fields; the execution controller adds
// its finalizer and writes the status.
//
// The Work also carries the binding's life-cycle settings: whether its
// cluster's dispatching is suspended, whether member objects are kept when
// it goes, and the conflict resolution. Each is written only when it
// differs from the default, so existing Works do not change.
func desiredWork(ref names.BindingRef, cluster string, manifest *unstructured.Unstructured, templateGeneration int64, spec *workv1alpha1.BindingSpec) *unstructured.Unstructured {
	ws := map[string]any{"workload": map[string]any{"manifests": []any{manifest.Object}}}
	if spec.Suspension.Suspends(cluster) {
		ws["suspendDispatching"] = true
	}
	if spec.PreserveResourcesOnDeletion {
		ws["preserveResourcesOnDeletion"] = true
	}
	if spec.ConflictResolution == policyv1alpha1.ConflictOverwrite {
		ws["conflictResolution"] = string(policyv1alpha1.ConflictOverwrite)
	}
	if as := applyStrategyOf(spec.ApplyStrategy); as != nil {
		m := make(map[string]any, len(as))
		for k, v := range as {
			m[k] = v
		}
		ws["applyStrategy"] = m
	}
	w := &unstructured.Unstructured{Object: map[string]any{"spec": ws}}
	w.SetGroupVersionKind(workv1alpha1.SchemeGroupVersion.WithKind("Work"))
	w.SetNamespace(names.ExecutionNamespace(cluster))
	w.SetName(names.WorkName(ref.Namespace, ref.Name))
	w.SetLabels(names.WorkLabels(ref, cluster))
	w.SetAnnotations(map[string]string{
		workv1alpha1.AnnotationBinding:            ref.String(),
		workv1alpha1.AnnotationResourceKind:       resourceKind(spec.Resource),
		workv1alpha1.AnnotationTemplateGeneration: strconv.FormatInt(templateGeneration, 10),
	})
	return w
}

// upToDate reports whether the existing Work already holds what desired
// says, so that applying it would change nothing and is skipped.
func upToDate(existing *workv1alpha1.Work, desired *unstructured.Unstructured) bool {
	for k, v := range desired.GetLabels() {
		if existing.Labels[k] != v {
			return false
		}
	}
	for k, v := range desired.GetAnnotations() {
		if existing.Annotations[k] != v {
			return false
		}
	}
	if _, had := existing.Annotations[workv1alpha1.AnnotationAppliedOverrides]; had && desired.GetAnnotations()[workv1alpha1.AnnotationAppliedOverrides] == "" {
		return false
	}
	suspend, _, _ := unstructured.NestedBool(desired.Object, "spec", "suspendDispatching")
	preserve, _, _ := unstructured.NestedBool(desired.Object, "spec", "preserveResourcesOnDeletion")
	conflict, _, _ := unstructured.NestedString(desired.Object, "spec", "conflictResolution")
	if existing.Spec.SuspendDispatching != suspend || existing.Spec.PreserveResourcesOnDeletion != preserve ||
		string(existing.Spec.ConflictResolution) != conflict {
		return false
	}
	as, _, _ := unstructured.NestedStringMap(desired.Object, "spec", "applyStrategy")
	if !maps.Equal(applyStrategyOf(existing.Spec.ApplyStrategy), as) {
		return false
	}
	ms := existing.Spec.Workload.Manifests
	if len(ms) != 1 {
		return false
	}
	want, _, _ := unstructured.NestedSlice(desired.Object, "spec", "workload", "manifests")
	return sameJSON(ms[0].Raw, want[0])
}

// sameJSON compares a stored manifest with a desired one through JSON, so
// that number types (int64 in objects, float64 when decoded) do not count.
func sameJSON(raw []byte, obj any) bool {
	data, err := json.Marshal(obj)
	if err != nil {
		return false
	}
	var a, b any
	if json.Unmarshal(raw, &a) != nil || json.Unmarshal(data, &b) != nil {
		return false
	}
	return reflect.DeepEqual(a, b)
}

// applyStrategyOf is the Work's spec.applyStrategy for s: only the fields
// that differ from the defaults, nil when none does, so that Works of
// policies without one do not change.
func applyStrategyOf(s *policyv1alpha1.ApplyStrategy) map[string]string {
	if s == nil {
		return nil
	}
	out := map[string]string{}
	if s.Type != "" && s.Type != policyv1alpha1.ApplyServerSide {
		out["type"] = string(s.Type)
	}
	if s.WhenToApply != "" && s.WhenToApply != policyv1alpha1.ApplyAlways {
		out["whenToApply"] = string(s.WhenToApply)
	}
	if s.WhenToTakeOver != "" && s.WhenToTakeOver != policyv1alpha1.TakeOverAlways {
		out["whenToTakeOver"] = string(s.WhenToTakeOver)
	}
	if s.TakeOverFrom != "" {
		out["takeOverFrom"] = string(s.TakeOverFrom)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
