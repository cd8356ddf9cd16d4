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
	"github.com/shepherd-io/shepherd/pkg/interpreter"
)

// reflectTemplate writes the aggregated status (Interpreter.AggregateStatus) into the template's status
// subresource on the hub when it differs, reading the template with
// reader; for kinds that observe generations, observedGeneration too once
// rolledOut says the template's generation runs everywhere. It reports
// whether it wrote.
func reflectTemplate(ctx context.Context, in interpreter.Interpreter, reader client.Reader, c client.Client, ref workv1alpha1.ObjectReference,
	items []workv1alpha1.AggregatedStatusItem, rolledOut func(generation int64) bool) (bool, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return false, nil
	}
	sums, ok := in.AggregateStatus(gv.WithKind(ref.Kind).GroupKind(), items)
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
	if in.ObservesGeneration(tmpl.GroupVersionKind().GroupKind()) && rolledOut(tmpl.GetGeneration()) {
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
