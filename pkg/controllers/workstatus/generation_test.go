package workstatus

import (
	"strconv"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// rolledOutWork is the Work on cluster built from template generation
// tmplGen, applied, whose member object is at generation 3 and has
// observed memberObserved.
func rolledOutWork(cluster, tmplGen string, memberObserved int64) workv1alpha1.Work {
	w := workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{
		Namespace:   names.ExecutionNamespace(cluster),
		Name:        "web",
		Generation:  2,
		Annotations: map[string]string{workv1alpha1.AnnotationTemplateGeneration: tmplGen},
	}}
	w.Status.Conditions = []metav1.Condition{{Type: workv1alpha1.WorkConditionApplied, Status: metav1.ConditionTrue, ObservedGeneration: 2}}
	w.Status.ManifestStatuses = []workv1alpha1.ManifestStatus{{
		Generation: 3,
		Status:     &runtime.RawExtension{Raw: []byte(`{"observedGeneration":` + strconv.FormatInt(memberObserved, 10) + `,"replicas":2}`)},
	}}
	return w
}

func TestRolledOut(t *testing.T) {
	both := []string{"c1", "c2"}
	mutate := func(w workv1alpha1.Work, f func(*workv1alpha1.Work)) workv1alpha1.Work {
		f(&w)
		return w
	}
	cases := []struct {
		name    string
		targets []string
		works   []workv1alpha1.Work
		want    bool
	}{
		{"every copy current and observed", both, []workv1alpha1.Work{rolledOutWork("c1", "5", 3), rolledOutWork("c2", "5", 4)}, true},
		{"no targets", nil, nil, false},
		{"a target without a Work", both, []workv1alpha1.Work{rolledOutWork("c1", "5", 3)}, false},
		{"a Work from an older template", both, []workv1alpha1.Work{rolledOutWork("c1", "5", 3), rolledOutWork("c2", "4", 3)}, false},
		{"a member has not observed its spec", both, []workv1alpha1.Work{rolledOutWork("c1", "5", 3), rolledOutWork("c2", "5", 2)}, false},
		{"a Work not applied at its generation", both, []workv1alpha1.Work{rolledOutWork("c1", "5", 3),
			mutate(rolledOutWork("c2", "5", 3), func(w *workv1alpha1.Work) { w.Generation = 3 })}, false},
		{"a Work whose apply failed", both, []workv1alpha1.Work{rolledOutWork("c1", "5", 3),
			mutate(rolledOutWork("c2", "5", 3), func(w *workv1alpha1.Work) { w.Status.Conditions[0].Status = metav1.ConditionFalse })}, false},
		{"a Work being deleted", both, []workv1alpha1.Work{rolledOutWork("c1", "5", 3),
			mutate(rolledOutWork("c2", "5", 3), func(w *workv1alpha1.Work) { w.DeletionTimestamp = &metav1.Time{} })}, false},
		{"member status not collected yet", both, []workv1alpha1.Work{rolledOutWork("c1", "5", 3),
			mutate(rolledOutWork("c2", "5", 3), func(w *workv1alpha1.Work) { w.Status.ManifestStatuses[0].Status = nil })}, false},
		{"a Work of a cluster no longer targeted does not count", []string{"c1"}, []workv1alpha1.Work{rolledOutWork("c1", "5", 3), rolledOutWork("c2", "4", 1)}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := rolledOut(5, tc.targets, tc.works); got != tc.want {
				t.Errorf("rolledOut = %v, want %v", got, tc.want)
			}
		})
	}
}
