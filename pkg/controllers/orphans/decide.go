package orphans

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/shepherd-io/shepherd/pkg/names"
)

// object is what a sweep reads of a member object (its metadata only).
type object struct {
	Resource        schema.GroupVersionResource
	Namespace, Name string
	UID             types.UID
	ResourceVersion string
	// Work is the object's work.shepherd.io/work annotation: the
	// "<execution namespace>/<name>" of the Work that applied it.
	Work string
}

// key identifies one sighting of an object: a later sighting of the same
// key is the same object, unchanged.
func (o object) key() string { return string(o.UID) + "@" + o.ResourceVersion }

// orphans returns the objects of objs that claim a Work of cluster's
// execution namespace that is not in works (the Works stored in that
// namespace, by name), in a fixed order. An object claiming another
// namespace's Work belongs to another cluster's Works (a member joined
// twice, or an object copied between members): not this sweep's to judge.
func orphans(cluster string, objs []object, works map[string]bool) []object {
	ns := names.ExecutionNamespace(cluster)
	var out []object
	for _, o := range objs {
		wns, name, ok := strings.Cut(o.Work, "/")
		if !ok || wns != ns || name == "" || works[name] {
			continue
		}
		out = append(out, o)
	}
	slices.SortFunc(out, func(a, b object) int {
		return strings.Compare(a.Resource.String()+"/"+a.Namespace+"/"+a.Name, b.Resource.String()+"/"+b.Namespace+"/"+b.Name)
	})
	return out
}

// confirm splits the orphans found now into those also found, unchanged,
// by the previous sweep (seen), which may go, and the rest, to be seen
// again. A Work is written before anything it applies, so an object whose
// Work is missing twice, a sweep apart, is not one whose Work is being
// written right now.
func confirm(seen map[string]bool, found []object) (remove []object, next map[string]bool) {
	next = make(map[string]bool, len(found))
	for _, o := range found {
		if seen[o.key()] {
			remove = append(remove, o)
			continue
		}
		next[o.key()] = true
	}
	return remove, next
}
