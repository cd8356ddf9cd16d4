package dependencies

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

func snap(ns, name string, clusters ...string) workv1alpha1.BindingSnapshot {
	s := workv1alpha1.BindingSnapshot{Namespace: ns, Name: name}
	for _, c := range clusters {
		s.Clusters = append(s.Clusters, workv1alpha1.TargetCluster{Name: c})
	}
	return s
}

func TestRequirements(t *testing.T) {
	start := []workv1alpha1.BindingSnapshot{snap("a", "api", "m1"), snap("a", "web", "m2")}
	steps := []struct {
		name    string
		do      func([]workv1alpha1.BindingSnapshot) ([]workv1alpha1.BindingSnapshot, bool)
		changed bool
		want    []workv1alpha1.BindingSnapshot
	}{
		{"a new dependent is added in order", func(r []workv1alpha1.BindingSnapshot) ([]workv1alpha1.BindingSnapshot, bool) {
			return withRequirement(r, snap("a", "batch", "m3"))
		}, true, []workv1alpha1.BindingSnapshot{snap("a", "api", "m1"), snap("a", "batch", "m3"), snap("a", "web", "m2")}},
		{"the same entry again changes nothing", func(r []workv1alpha1.BindingSnapshot) ([]workv1alpha1.BindingSnapshot, bool) {
			return withRequirement(r, snap("a", "api", "m1"))
		}, false, start},
		{"new clusters replace the entry", func(r []workv1alpha1.BindingSnapshot) ([]workv1alpha1.BindingSnapshot, bool) {
			return withRequirement(r, snap("a", "api", "m1", "m4"))
		}, true, []workv1alpha1.BindingSnapshot{snap("a", "api", "m1", "m4"), snap("a", "web", "m2")}},
		{"a released dependent is removed", func(r []workv1alpha1.BindingSnapshot) ([]workv1alpha1.BindingSnapshot, bool) {
			return withoutRequirement(r, "a", "web")
		}, true, []workv1alpha1.BindingSnapshot{snap("a", "api", "m1")}},
		{"releasing one not listed changes nothing", func(r []workv1alpha1.BindingSnapshot) ([]workv1alpha1.BindingSnapshot, bool) {
			return withoutRequirement(r, "b", "web")
		}, false, start},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			in := []workv1alpha1.BindingSnapshot{snap("a", "api", "m1"), snap("a", "web", "m2")}
			got, changed := st.do(in)
			if changed != st.changed || !equality.Semantic.DeepEqual(got, st.want) {
				t.Errorf("got %v (changed %v), want %v (changed %v)", got, changed, st.want, st.changed)
			}
			if !equality.Semantic.DeepEqual(in, start) {
				t.Errorf("the input was modified: %v", in)
			}
		})
	}
}

func TestSnapshotSortsClusters(t *testing.T) {
	b := &workv1alpha1.ResourceBinding{}
	b.Namespace, b.Name = "a", "web"
	got := snapshot(b, []workv1alpha1.TargetCluster{{Name: "m2", Replicas: 3}, {Name: "m1", Replicas: 1}})
	if want := snap("a", "web", "m1", "m2"); !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
