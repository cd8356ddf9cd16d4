package execution

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
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

// The answers that mean "the member does not serve the kind now", as the
// member's API server and client-go give them, and some that do not.
func TestKindUnserved(t *testing.T) {
	widgets := schema.GroupResource{Group: "example.com", Resource: "widgets"}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"no mapping", &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: "example.com", Kind: "Widget"}}, true},
		{"a 404 page, not a Status: no such path", apierrors.NewGenericServerResponse(404, "PATCH", widgets, "w", "404 page not found", 0, true), true},
		{"the CRD terminating", apierrors.NewForbidden(widgets, "w", errors.New("create not allowed while custom resource definition is terminating")), true},
		{"an object not found", apierrors.NewNotFound(widgets, "w"), false},
		{"a namespace not found", apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "team-a"), false},
		{"forbidden by RBAC", apierrors.NewForbidden(widgets, "w", errors.New("user cannot patch")), false},
		{"invalid", apierrors.NewBadRequest("spec.size: must be positive"), false},
		{"not an API error", errors.New("connection refused"), false},
		{"wrapped", fmt.Errorf("applying: %w", &meta.NoKindMatchError{GroupKind: schema.GroupKind{Kind: "Widget"}}), true},
		{"nil", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := kindUnserved(tc.err); got != tc.want {
				t.Errorf("kindUnserved(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}
