package customization

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestElect(t *testing.T) {
	cm := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	pod := schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	svc := schema.GroupVersionKind{Version: "v1", Kind: "Service"}
	w := Words{Object: "HealthInterpreter", NotCompiled: "the expression does not compile", Serves: "judges the health of"}
	cands := []Candidate{
		{Name: "b", Generation: 1, Kind: cm, Compiled: true},                  // superseded by a
		{Name: "a", Generation: 2, Kind: cm, Compiled: true},                  // first by name: wins, newly
		{Name: "c", Generation: 1, Kind: pod, Compiled: false},                // does not compile
		{Name: "d", Generation: 3, Kind: pod, Compiled: true, Deleting: true}, // being deleted
		{Name: "e", Generation: 5, Kind: svc, Compiled: true},                 // already applied: no re-apply
	}
	applied := map[schema.GroupVersionKind]InUse{cm: {Name: "a", Generation: 1}, pod: {Name: "d", Generation: 3}, svc: {Name: "e", Generation: 5}}
	e := Elect(w, cands, applied)
	want := []Verdict{
		{Reason: "Superseded", Message: "HealthInterpreter a sorts first for /v1, Kind=ConfigMap"},
		{Active: true, Reason: "InUse", Message: "judges the health of /v1, Kind=ConfigMap", Apply: true},
		{Reason: "CompileError", Message: "the expression does not compile"},
		{Reason: "Deleting", Message: "the object is being deleted"},
		{Active: true, Reason: "InUse", Message: "judges the health of /v1, Kind=Service"},
	}
	if !reflect.DeepEqual(e.Verdicts, want) {
		t.Errorf("verdicts\n got %+v\nwant %+v", e.Verdicts, want)
	}
	if wantW := map[schema.GroupVersionKind]InUse{cm: {Name: "a", Generation: 2}, svc: {Name: "e", Generation: 5}}; !reflect.DeepEqual(e.Winners, wantW) {
		t.Errorf("winners %+v", e.Winners)
	}
	if !reflect.DeepEqual(e.Removed, []schema.GroupVersionKind{pod}) {
		t.Errorf("removed %+v, want the Pod rule (its only candidate is being deleted)", e.Removed)
	}
	// Nothing left: every applied kind is removed, in a stable order.
	if e := Elect(w, nil, applied); !reflect.DeepEqual(e.Removed, []schema.GroupVersionKind{cm, pod, svc}) {
		t.Errorf("removed %+v", e.Removed)
	}
}
