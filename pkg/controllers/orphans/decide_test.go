package orphans

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stypes "k8s.io/apimachinery/pkg/types"
)

var deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

func obj(name, uid, rv, work string) object {
	return object{Resource: deployments, Namespace: "shop", Name: name, UID: k8stypes.UID(uid), ResourceVersion: rv, Work: work}
}

// TestOrphans: only an object claiming a Work of this cluster's execution
// namespace that is not stored is an orphan; an object of another
// cluster's Work, one claiming a stored Work, and one with no claim (named
// like a template, or another owner's) are never.
func TestOrphans(t *testing.T) {
	works := map[string]bool{"shop.web-deployment": true}
	objs := []object{
		obj("web", "1", "10", "shepherd-es-member1/shop.web-deployment"),
		obj("api", "2", "11", "shepherd-es-member1/shop.api-deployment"),
		obj("cache", "3", "12", "shepherd-es-member2/shop.cache-deployment"),
		obj("named-like-a-template", "4", "13", ""),
		obj("malformed", "5", "14", "shop.api-deployment"),
		obj("no-name", "6", "15", "shepherd-es-member1/"),
	}
	got := orphans("member1", objs, works)
	if len(got) != 1 || got[0].Name != "api" {
		t.Fatalf("orphans %+v, want api alone", got)
	}
}

// TestConfirm: an orphan goes on its second sighting, unchanged; a new
// one, or one changed since (another resourceVersion, a new UID), waits
// for the next sweep.
func TestConfirm(t *testing.T) {
	w := "shepherd-es-member1/shop.api-deployment"
	first := []object{obj("api", "2", "11", w), obj("b", "3", "20", w)}
	remove, seen := confirm(nil, first)
	if len(remove) != 0 || len(seen) != 2 {
		t.Fatalf("first sweep: remove %v, seen %v", remove, seen)
	}
	second := []object{obj("api", "2", "11", w), obj("b", "3", "21", w), obj("c", "4", "30", w)}
	remove, seen = confirm(seen, second)
	if len(remove) != 1 || remove[0].Name != "api" {
		t.Fatalf("second sweep: remove %v, want api alone (b changed, c is new)", remove)
	}
	if !seen[obj("b", "3", "21", w).key()] || !seen[obj("c", "4", "30", w).key()] || seen[obj("api", "2", "11", w).key()] {
		t.Fatalf("second sweep remembers %v", seen)
	}
}
