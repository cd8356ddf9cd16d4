package interpreter

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Labels on a template that ask Shepherd to keep the replica count each
// member has: a member's HorizontalPodAutoscaler owns it. Karmada's label
// is honoured too, so migrated templates keep working.
const (
	LabelRetainReplicas        = "work.shepherd.io/retain-replicas"
	LabelRetainReplicasKarmada = "resourcetemplate.karmada.io/retain-replicas"
)

// Retain keeps in desired, the manifest about to be applied to a member,
// the fields a member controller owns, reading them from observed, the
// member's current object: applying then never fights that controller.
//
// Retained: the fields a customization lists (retention.paths), and, built
// in, the replica field of a kind with replicas when the template
// carries LabelRetainReplicas (or Karmada's label) set to "true", for
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
	return labels[LabelRetainReplicas] == "true" || labels[LabelRetainReplicasKarmada] == "true"
}
