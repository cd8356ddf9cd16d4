package workstatus

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// summedFields are, per built-in kind, the integer status fields that add
// up over members: the hub's template then reads like one big workload
// (e.g. readyReplicas 5 = 3 in one member + 2 in another). Conditions,
// observedGeneration and times do not add up and are left alone; so is
// every kind not listed.
var summedFields = map[schema.GroupKind][]string{
	{Group: "apps", Kind: "Deployment"}:  {"replicas", "updatedReplicas", "readyReplicas", "availableReplicas", "unavailableReplicas"},
	{Group: "apps", Kind: "StatefulSet"}: {"replicas", "readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas"},
	{Group: "apps", Kind: "ReplicaSet"}:  {"replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas"},
	{Group: "apps", Kind: "DaemonSet"}: {"currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled",
		"numberReady", "updatedNumberScheduled", "numberAvailable", "numberUnavailable"},
	{Group: "batch", Kind: "Job"}: {"active", "succeeded", "failed", "ready", "terminating"},
}

// summedStatus adds up the kind's fields over the clusters' raw statuses.
// ok is false for kinds whose status is not summed.
func summedStatus(gk schema.GroupKind, items []workv1alpha1.AggregatedStatusItem) (map[string]any, bool) {
	fields, ok := summedFields[gk]
	if !ok {
		return nil, false
	}
	sums := make(map[string]int64, len(fields))
	for _, f := range fields {
		sums[f] = 0
	}
	for _, item := range items {
		if item.Status == nil {
			continue
		}
		var st map[string]any
		if json.Unmarshal(item.Status.Raw, &st) != nil {
			continue
		}
		for _, f := range fields {
			if n, ok := st[f].(float64); ok {
				sums[f] += int64(n)
			}
		}
	}
	out := make(map[string]any, len(sums))
	for f, n := range sums {
		out[f] = n
	}
	return out, true
}

// reflectTemplate writes the summed status into the template's status
// subresource on the hub when it differs, reading the template with
// reader; for kinds that observe generations, observedGeneration too once
// rolledOut says the template's generation runs everywhere. It reports
// whether it wrote.
func reflectTemplate(ctx context.Context, reader client.Reader, c client.Client, ref workv1alpha1.ObjectReference,
	items []workv1alpha1.AggregatedStatusItem, rolledOut func(generation int64) bool) (bool, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return false, nil
	}
	sums, ok := summedStatus(gv.WithKind(ref.Kind).GroupKind(), items)
	if !ok {
		return false, nil
	}
	tmpl := &unstructured.Unstructured{}
	tmpl.SetGroupVersionKind(gv.WithKind(ref.Kind))
	if err := reader.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, tmpl); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil // the template is being deleted
		}
		return false, fmt.Errorf("reading template %s %s: %w", ref.Kind, ref.Name, err)
	}
	if observesGeneration[tmpl.GroupVersionKind().GroupKind()] && rolledOut(tmpl.GetGeneration()) {
		sums["observedGeneration"] = tmpl.GetGeneration()
	}
	// An absent counter reads as 0: the API omits zero counters.
	changed := false
	for f, n := range sums {
		if v, _, _ := unstructured.NestedInt64(tmpl.Object, "status", f); v != n.(int64) {
			changed = true
			break
		}
	}
	if !changed {
		return false, nil
	}
	patch, err := json.Marshal(map[string]any{"status": sums})
	if err != nil {
		return false, err
	}
	if err := c.Status().Patch(ctx, tmpl, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(workv1alpha1.FieldManager)); err != nil {
		return false, fmt.Errorf("writing the status of template %s %s: %w", ref.Kind, ref.Name, err)
	}
	return true, nil
}
