package interpreter

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// Retain keeps in desired, the manifest about to be applied to a member,
// the fields a member controller owns, reading them from observed, the
// member's current object: applying then never fights that controller.
//
// Retained: the fields a customization lists (retention.paths), and, built
// in, the replica field of a kind with replicas when the template
// carries workv1alpha1.LabelRetainReplicas (or Karmada's label) set to "true", for
// workloads a member's HPA scales. Values the member allocates itself (a
// Service's cluster IPs, a Job's generated selector) are not in the
// manifest at all (the binding controller leaves them out), so server-side
// apply never touches them and they need no rule here.
func (l *Layered) Retain(desired, observed *unstructured.Unstructured) error {
	if observed == nil {
		return nil
	}
	k := l.lookup(desired.GroupVersionKind().GroupKind())
	if k == nil {
		return nil
	}
	paths := k.retain
	if k.replicas != nil && retainsReplicas(desired.GetLabels()) {
		paths = append(slices.Clone(paths), k.replicas)
	}
	for _, p := range paths {
		v, found, err := unstructured.NestedFieldCopy(observed.Object, p...)
		if err != nil {
			return fmt.Errorf("retaining .%s: %w", strings.Join(p, "."), err)
		}
		if !found {
			continue
		}
		if err := unstructured.SetNestedField(desired.Object, v, p...); err != nil {
			return fmt.Errorf("retaining .%s: %w", strings.Join(p, "."), err)
		}
	}
	return nil
}

func retainsReplicas(labels map[string]string) bool {
	return labels[workv1alpha1.LabelRetainReplicas] == "true" || labels[workv1alpha1.LabelRetainReplicasKarmada] == "true"
}
