package workstatus

import (
	"encoding/json"
	"strconv"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// rolledOut reports whether every target's copy runs the template's
// generation gen: the target has a Work built from gen (its
// AnnotationTemplateGeneration), applied at the Work's current generation,
// and in the member every manifest's controller has observed the
// object's latest spec (status.observedGeneration >= metadata.generation).
// Then the hub template's status.observedGeneration may say gen, and its
// summed counters describe that generation everywhere. No target, no
// rollout: the template's observedGeneration is left as it is.
func rolledOut(gen int64, targets []string, works []workv1alpha1.Work) bool {
	if len(targets) == 0 {
		return false
	}
	byCluster := make(map[string]*workv1alpha1.Work, len(works))
	for i := range works {
		byCluster[clusterOfWork(&works[i])] = &works[i]
	}
	want := strconv.FormatInt(gen, 10)
	for _, t := range targets {
		w := byCluster[t]
		if w == nil || w.DeletionTimestamp != nil || w.Annotations[workv1alpha1.AnnotationTemplateGeneration] != want {
			return false
		}
		applied := meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkConditionApplied)
		if applied == nil || applied.Status != metav1.ConditionTrue || applied.ObservedGeneration != w.Generation ||
			len(w.Status.ManifestStatuses) == 0 {
			return false
		}
		for _, ms := range w.Status.ManifestStatuses {
			if !observed(ms) {
				return false
			}
		}
	}
	return true
}

// observed reports whether a member object's controller has seen its
// latest spec.
func observed(ms workv1alpha1.ManifestStatus) bool {
	if ms.Generation <= 0 || ms.Status == nil {
		return false
	}
	var st struct {
		ObservedGeneration int64 `json:"observedGeneration"`
	}
	return json.Unmarshal(ms.Status.Raw, &st) == nil && st.ObservedGeneration >= ms.Generation
}
