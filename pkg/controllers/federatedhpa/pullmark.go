package federatedhpa

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// A Pull member's agent reports the pods and metrics of a workload only
// while its Work carries the label workv1alpha1.LabelPodMetrics, so that
// workloads without a FederatedHPA cost the agents nothing. The
// controller sets the label on the target's Work in each Pull cluster it
// runs in (the hub's controllers own the Works of the execution
// namespaces; the binding controller's server-side apply leaves a label it
// never applied alone), and removes it from the Works it no longer
// measures: those of another target, of a cluster the target left, of a
// FederatedHPA that is gone.

// sampleLabel is the label's value for FederatedHPA name (in the Works'
// binding namespace, which is its own).
func sampleLabel(name string) string { return names.LabelValue(name) }

// askSample labels the target's Work in Pull cluster cluster, with the
// custom metrics the FederatedHPA reads in its annotation, and returns
// its key; a Work not created yet is labelled on a later round.
func (r *Reconciler) askSample(ctx context.Context, hpaName string, w Workload, cluster string, custom []workv1alpha1.CustomMetricRequest) (client.ObjectKey, error) {
	key := workKey(cluster, w)
	work := &workv1alpha1.Work{}
	if err := r.client.Get(ctx, key, work); err != nil {
		return key, client.IgnoreNotFound(err)
	}
	label, annotation := sampleLabel(hpaName), workv1alpha1.FormatCustomMetrics(custom)
	if work.Labels[workv1alpha1.LabelPodMetrics] == label && work.Annotations[workv1alpha1.AnnotationCustomMetrics] == annotation {
		return key, nil
	}
	return key, r.labelWork(ctx, work, &label, annotation)
}

// releaseSamples removes the label from the Works FederatedHPA
// namespace/name labelled that are not in keep.
func (r *Reconciler) releaseSamples(ctx context.Context, namespace, name string, keep map[client.ObjectKey]bool) error {
	works := &workv1alpha1.WorkList{}
	if err := r.client.List(ctx, works, client.MatchingLabels{
		workv1alpha1.LabelPodMetrics:       sampleLabel(name),
		workv1alpha1.LabelBindingNamespace: namespace,
	}); err != nil {
		return err
	}
	for i := range works.Items {
		w := &works.Items[i]
		if keep[client.ObjectKeyFromObject(w)] {
			continue
		}
		if err := r.labelWork(ctx, w, nil, ""); err != nil {
			return err
		}
		logf.FromContext(ctx).V(1).Info("no longer asking for pod metrics", "work", client.ObjectKeyFromObject(w))
	}
	return nil
}

// labelWork sets the label to label (nil removes it) and the custom
// metrics annotation to annotation (empty removes it), with a merge patch
// of those two alone.
func (r *Reconciler) labelWork(ctx context.Context, w *workv1alpha1.Work, label *string, annotation string) error {
	var ann *string
	if annotation != "" {
		ann = &annotation
	}
	data, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"labels":      map[string]*string{workv1alpha1.LabelPodMetrics: label},
		"annotations": map[string]*string{workv1alpha1.AnnotationCustomMetrics: ann},
	}})
	if err != nil {
		return err
	}
	if err := r.client.Patch(ctx, w, client.RawPatch(types.MergePatchType, data), client.FieldOwner(FieldManager)); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("labelling Work %s/%s: %w", w.Namespace, w.Name, err)
	}
	return nil
}
