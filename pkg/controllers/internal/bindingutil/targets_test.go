package bindingutil

import (
	"testing"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

func TestActiveTargets(t *testing.T) {
	ts := []workv1alpha1.TargetCluster{
		{Name: "a"}, {Name: "b", State: workv1alpha1.TargetBound}, {Name: "c", State: workv1alpha1.TargetUnscheduled},
	}
	got := ActiveTargets(ts)
	if len(got) != 2 || got[0].Name != "a" || got[1].Name != "b" {
		t.Fatalf("ActiveTargets = %+v", got)
	}
	if StateOf(ts[0]) != workv1alpha1.TargetScheduled {
		t.Fatalf("StateOf(empty) = %q", StateOf(ts[0]))
	}
}
