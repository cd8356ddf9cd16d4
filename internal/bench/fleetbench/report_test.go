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
	cases := []struct {
		name          string
		before, after map[string]reconcileReading
		want          []ReconcileCount
	}{
		{
			name:   "counts, errors, ties by name, idle left out",
			before: map[string]reconcileReading{"a": {total: 5, errors: 1}, "idle": {total: 3}},
			after:  map[string]reconcileReading{"a": {total: 15, errors: 2}, "b": {total: 10}, "idle": {total: 3}},
			want:   []ReconcileCount{{Controller: "a", Total: 10, Errors: 1}, {Controller: "b", Total: 10}},
		},
		{
			name: "means of the window only",
			// Before the window: 10 reconciles of 1 s, 10 waits of 2 s.
			before: map[string]reconcileReading{"a": {total: 10, seconds: 10, queued: 10, queueSeconds: 20}},
			// In it: 4 reconciles took 2 s in all; 5 requests waited 10 s in all.
			after: map[string]reconcileReading{"a": {total: 14, seconds: 12, queued: 15, queueSeconds: 30}},
			want:  []ReconcileCount{{Controller: "a", Total: 4, MeanSeconds: 0.5, MeanQueueSeconds: 2}},
		},
		{
			name:   "a queue that handed out nothing has no mean wait",
			before: map[string]reconcileReading{},
			after:  map[string]reconcileReading{"a": {total: 2, seconds: 1}},
			want:   []ReconcileCount{{Controller: "a", Total: 2, MeanSeconds: 0.5}},
		},
		{
			name:   "a queue without reconciles is not listed",
			before: map[string]reconcileReading{},
			after:  map[string]reconcileReading{"member-queue": {queued: 7, queueSeconds: 3}},
			want:   nil,
		},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			if got := reconcileDelta(tt.before, tt.after); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("reconcileDelta = %+v, want %+v", got, tt.want)
			}
		})
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
