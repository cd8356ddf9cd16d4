package interpreter

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// jobGeneratedLabels are the labels the API server puts on a Job's pod
// template when it generates the Job's selector.
var jobGeneratedLabels = []string{
	"controller-uid", "job-name", "batch.kubernetes.io/controller-uid", "batch.kubernetes.io/job-name",
}

// Prune removes from obj, a manifest about to be sent to members, the
// values the hub's API server allocated that each member must allocate
// itself: a Job's generated selector (and the labels that go with it,
// unless spec.manualSelector), a Service's cluster IPs (unless headless).
// Left in, they would clash with the member's own allocation. Kinds
// without such values are left as they are.
func (l *Layered) Prune(obj *unstructured.Unstructured) {
	if k := builtin[obj.GroupVersionKind().GroupKind()]; k != nil && k.prune != nil {
		k.prune(obj)
	}
}

func pruneJob(m *unstructured.Unstructured) {
	if manual, _, _ := unstructured.NestedBool(m.Object, "spec", "manualSelector"); manual {
		return
	}
	unstructured.RemoveNestedField(m.Object, "spec", "selector")
	for _, l := range jobGeneratedLabels {
		unstructured.RemoveNestedField(m.Object, "spec", "template", "metadata", "labels", l)
	}
}

func pruneService(m *unstructured.Unstructured) {
	if ip, _, _ := unstructured.NestedString(m.Object, "spec", "clusterIP"); ip != "None" {
		unstructured.RemoveNestedField(m.Object, "spec", "clusterIP")
		unstructured.RemoveNestedField(m.Object, "spec", "clusterIPs")
	}
}

// ReadyReplicas reads, from a member copy's raw status, how many of its
// replicas are ready: the kind's ready counter, which is, as for the
// workload kinds Kubernetes ships and by the convention CRDs follow,
// status.readyReplicas. ok is false for a status that does not carry it.
func (l *Layered) ReadyReplicas(gk schema.GroupKind, raw *runtime.RawExtension) (int32, bool) {
	field := "readyReplicas"
	if k := l.lookup(gk); k != nil && k.ready != "" {
		field = k.ready
	}
	return statusCounter(raw, field)
}

// StatusReplicas reads, from a member copy's raw status, how many replicas
// the member runs for it: status.replicas, as for the workload kinds
// Kubernetes ships and by the convention CRDs with a scale subresource
// follow. ok is false for a status that does not carry it (a Job counts
// active pods instead, which fall to zero once it completes, so it
// reports none here).
func (l *Layered) StatusReplicas(gk schema.GroupKind, raw *runtime.RawExtension) (int32, bool) {
	field := "replicas"
	if k := l.lookup(gk); k != nil && k.statusReplicas != "" {
		field = k.statusReplicas
	}
	return statusCounter(raw, field)
}

// statusCounter reads the integer field directly under a raw status. The
// other fields are left undecoded: the scheduler reads every binding's
// statuses on each of their updates.
func statusCounter(raw *runtime.RawExtension, field string) (int32, bool) {
	if raw == nil || len(raw.Raw) == 0 {
		return 0, false
	}
	var st map[string]json.RawMessage
	if json.Unmarshal(raw.Raw, &st) != nil {
		return 0, false
	}
	v, found := st[field]
	var n float64
	if !found || string(v) == "null" || json.Unmarshal(v, &n) != nil || n != float64(int32(n)) {
		return 0, false
	}
	return int32(n), true
}

// DependencyKinds are the kinds the built-in dependencies name (those of
// a pod template: ConfigMaps, Secrets, ServiceAccounts and
// PersistentVolumeClaims), sorted. A customization's expression may name
// any kind: watchers learn those from the dependencies themselves.
func (l *Layered) DependencyKinds() []schema.GroupVersionKind {
	return []schema.GroupVersionKind{
		{Version: "v1", Kind: "ConfigMap"},
		{Version: "v1", Kind: "PersistentVolumeClaim"},
		{Version: "v1", Kind: "Secret"},
		{Version: "v1", Kind: "ServiceAccount"},
	}
}
