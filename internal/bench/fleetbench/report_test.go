package fleetbench

import (
	"reflect"
	"testing"
	"time"
)

func TestRequestDelta(t *testing.T) {
	k := func(verb, res, sub string) requestKey { return requestKey{verb: verb, resource: res, subresource: sub} }
	before := map[requestKey]float64{k("PATCH", "works", "status"): 10, k("GET", "pods", ""): 5}
	after := map[requestKey]float64{
		k("PATCH", "works", "status"): 40, // +30
		k("GET", "pods", ""):          5,  // unchanged: left out
		k("APPLY", "works", ""):       30, // new: +30, ties broken by verb
		k("POST", "events", ""):       7,
	}
	want := []RequestCount{
		{Verb: "APPLY", Resource: "works", Count: 30},
		{Verb: "PATCH", Resource: "works", Subresource: "status", Count: 30},
		{Verb: "POST", Resource: "events", Count: 7},
	}
	if got := requestDelta(before, after); !reflect.DeepEqual(got, want) {
		t.Errorf("requestDelta = %+v, want %+v", got, want)
	}
}

func TestWritesPer(t *testing.T) {
	reqs := []RequestCount{
		{Verb: "APPLY", Resource: "works", Count: 30},
		{Verb: "GET", Resource: "pods", Count: 25},
		{Verb: "PATCH", Resource: "works", Subresource: "status", Count: 20},
		{Verb: "POST", Resource: "resourcebindings", Count: 10},
	}
	want := []RequestRate{
		{Verb: "APPLY", Resource: "works", PerWorkload: 3},
		{Verb: "PATCH", Resource: "works", Subresource: "status", PerWorkload: 2},
		{Verb: "POST", Resource: "resourcebindings", PerWorkload: 1},
	}
	if got := writesPer(reqs, 10); !reflect.DeepEqual(got, want) {
		t.Errorf("writesPer = %+v, want %+v", got, want)
	}
}

func TestReconcileDelta(t *testing.T) {
	before := map[string][2]float64{"a": {5, 1}, "idle": {3, 0}}
	after := map[string][2]float64{"a": {15, 2}, "b": {10, 0}, "idle": {3, 0}}
	want := []ReconcileCount{{Controller: "a", Total: 10, Errors: 1}, {Controller: "b", Total: 10}}
	if got := reconcileDelta(before, after); !reflect.DeepEqual(got, want) {
		t.Errorf("reconcileDelta = %+v, want %+v", got, want)
	}
}

func TestStageStats(t *testing.T) {
	begin := time.Unix(1000, 0)
	at := func(s float64) time.Time { return begin.Add(time.Duration(s * float64(time.Second))) }
	st := newStamps()
	// Four objects seen at 1, 2, 3, 4 s; done after 1, 1, 2 s; the last never.
	for i, done := range []float64{2, 3, 5, -1} {
		key := string(rune('a' + i))
		st.record(key, false, at(float64(i+1)))
		if done >= 0 {
			st.record(key, true, at(done))
			st.record(key, true, at(done+10)) // later sightings change nothing
		}
	}
	got := st.stats(begin)
	want := StageStats{
		PerSecond:         3.0 / 4.0, // 3 done between the first seen (1 s) and the last done (5 s)
		LatencyP50Seconds: 1,
		LatencyP99Seconds: 2,
		LastSeenSeconds:   4,
	}
	if got != want {
		t.Errorf("stats = %+v, want %+v", got, want)
	}
	if empty := newStamps().stats(begin); empty != (StageStats{}) {
		t.Errorf("stats of nothing = %+v", empty)
	}
}
