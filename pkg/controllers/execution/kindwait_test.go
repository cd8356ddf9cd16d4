package execution

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/names"
)

func TestKindWaiters(t *testing.T) {
	var w kindWaiters
	m1, m2 := names.ExecutionNamespace("m1"), names.ExecutionNamespace("m2")
	w.set(types.NamespacedName{Namespace: m1, Name: "b"}, true)
	w.set(types.NamespacedName{Namespace: m1, Name: "a"}, true)
	w.set(types.NamespacedName{Namespace: m2, Name: "c"}, true)
	w.set(types.NamespacedName{Namespace: m1, Name: "d"}, false) // never waited: a no-op
	if got, want := w.of("m1"), []types.NamespacedName{{Namespace: m1, Name: "a"}, {Namespace: m1, Name: "b"}}; !slices.Equal(got, want) {
		t.Errorf("m1's waiting Works %v, want %v (sorted, m1's only)", got, want)
	}
	// Asking does not forget them: an apply that meets every kind served does.
	if got := w.of("m1"); len(got) != 2 {
		t.Errorf("asked twice: %v", got)
	}
	w.set(types.NamespacedName{Namespace: m1, Name: "a"}, false)
	if got, want := w.of("m1"), []types.NamespacedName{{Namespace: m1, Name: "b"}}; !slices.Equal(got, want) {
		t.Errorf("after a's apply met every kind served: %v, want %v", got, want)
	}
	if got := w.of("m3"); len(got) != 0 {
		t.Errorf("a cluster with no waiting Work: %v", got)
	}
}

func TestAPIsChanged(t *testing.T) {
	apis := func(gvs ...string) *clusterv1alpha1.Cluster {
		c := &clusterv1alpha1.Cluster{}
		for _, gv := range gvs {
			c.Status.APIEnablements = append(c.Status.APIEnablements, clusterv1alpha1.APIEnablement{GroupVersion: gv})
		}
		return c
	}
	for _, tc := range []struct {
		name     string
		old, new *clusterv1alpha1.Cluster
		want     bool
	}{
		{"same APIs", apis("v1", "apps/v1"), apis("v1", "apps/v1"), false},
		{"a group served anew", apis("v1"), apis("v1", "example.com/v1"), true},
		{"a group gone", apis("v1", "example.com/v1"), apis("v1"), true},
		{"none reported yet, then some", apis(), apis("v1"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := apisChanged().Update(event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new}); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
	if apisChanged().Create(event.CreateEvent{Object: apis("v1")}) {
		t.Error("a created Cluster has no Work waiting for a kind yet")
	}
}
