package dependencies

import (
	"cmp"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// withRequirement returns req with snap as the entry of its binding
// (added, or replacing the one there), sorted by namespace and name, and
// whether that changed anything. req is not modified.
func withRequirement(req []workv1alpha1.BindingSnapshot, snap workv1alpha1.BindingSnapshot) ([]workv1alpha1.BindingSnapshot, bool) {
	out := slices.Clone(req)
	i := slices.IndexFunc(out, func(s workv1alpha1.BindingSnapshot) bool { return s.Namespace == snap.Namespace && s.Name == snap.Name })
	switch {
	case i < 0:
		out = append(out, snap)
	case equality.Semantic.DeepEqual(out[i], snap):
		return req, false
	default:
		out[i] = snap
	}
	slices.SortFunc(out, func(a, b workv1alpha1.BindingSnapshot) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return out, true
}

// withoutRequirement returns req without the entry of binding ns/name, and
// whether there was one. req is not modified.
func withoutRequirement(req []workv1alpha1.BindingSnapshot, ns, name string) ([]workv1alpha1.BindingSnapshot, bool) {
	out := slices.DeleteFunc(slices.Clone(req), func(s workv1alpha1.BindingSnapshot) bool { return s.Namespace == ns && s.Name == name })
	return out, len(out) != len(req)
}

// snapshot is the entry a dependent binding b writes: its active targets,
// by name only (a dependency has no replicas to divide).
func snapshot(b *workv1alpha1.ResourceBinding, active []workv1alpha1.TargetCluster) workv1alpha1.BindingSnapshot {
	s := workv1alpha1.BindingSnapshot{Namespace: b.Namespace, Name: b.Name}
	for _, t := range active {
		s.Clusters = append(s.Clusters, workv1alpha1.TargetCluster{Name: t.Name})
	}
	slices.SortFunc(s.Clusters, func(a, b workv1alpha1.TargetCluster) int { return cmp.Compare(a.Name, b.Name) })
	return s
}
