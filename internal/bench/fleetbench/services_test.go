package fleetbench

import (
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"
)

func TestServicesOptionsValidate(t *testing.T) {
	good := ServicesOptions{Members: 3, Services: 10, ExportersPerService: 2, EndpointsPerSlice: 2, Namespaces: 1,
		Changes: 5, ChangesPerSecond: 1, Timeout: time.Minute, Settle: time.Minute}
	if err := good.Validate(); err != nil {
		t.Fatalf("good options refused: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(*ServicesOptions)
		flag string
	}{
		{"one member", func(o *ServicesOptions) { o.Members = 1 }, "--members"},
		{"no services", func(o *ServicesOptions) { o.Services = 0 }, "--services"},
		{"more exporters than members", func(o *ServicesOptions) { o.ExportersPerService = 4 }, "--exporters"},
		{"no endpoints", func(o *ServicesOptions) { o.EndpointsPerSlice = 0 }, "--endpoints"},
		{"endpoints beyond one slice", func(o *ServicesOptions) { o.EndpointsPerSlice = 101 }, "--endpoints"},
		{"no namespaces", func(o *ServicesOptions) { o.Namespaces = 0 }, "--namespaces"},
		{"no changes", func(o *ServicesOptions) { o.Changes = 0 }, "--changes "},
		{"zero rate", func(o *ServicesOptions) { o.ChangesPerSecond = 0 }, "--changes-per-second"},
		{"no timeout", func(o *ServicesOptions) { o.Timeout = 0 }, "--timeout"},
		{"a settle shorter than a window", func(o *ServicesOptions) { o.Settle = 5 * time.Second }, "--settle"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := good
			tc.edit(&o)
			err := o.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.flag) {
				t.Fatalf("got %v, want an error naming %s", err, tc.flag)
			}
		})
	}
}

func importedSlice(ns, svc, source string, addrs ...string) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: svc + "." + source,
		Labels: map[string]string{mcsv1beta1.LabelServiceName: svc, mcsv1beta1.LabelSourceCluster: source}}}
	for _, a := range addrs {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{a}})
	}
	return s
}

func TestTrackerCountsEveryOtherMember(t *testing.T) {
	tr := newTracker([]string{"m1", "m2", "m3"})
	clock := time.Unix(1000, 0)
	tr.now = func() time.Time { return clock }
	k := tr.expect("ns", "svc", "m1", "10.0.0.1")
	tr.started(k, clock)

	steps := []struct {
		member string
		slice  *discoveryv1.EndpointSlice
		after  time.Duration
		done   bool
	}{
		// The source's own import does not count.
		{"m1", importedSlice("ns", "svc", "m1", "10.0.0.1"), time.Second, false},
		// The address under another source cluster is another export's.
		{"m2", importedSlice("ns", "svc", "m3", "10.0.0.1"), 2 * time.Second, false},
		// Another Service or namespace of the same address neither.
		{"m2", importedSlice("ns", "other", "m1", "10.0.0.1"), 2 * time.Second, false},
		{"m2", importedSlice("other", "svc", "m1", "10.0.0.1"), 2 * time.Second, false},
		{"m2", importedSlice("ns", "svc", "m1", "10.0.0.9", "10.0.0.1"), 3 * time.Second, false},
		// Seen again in m2: the first sight stands.
		{"m2", importedSlice("ns", "svc", "m1", "10.0.0.1"), 4 * time.Second, false},
		{"m3", importedSlice("ns", "svc", "m1", "10.0.0.1"), 5 * time.Second, true},
	}
	for i, s := range steps {
		clock = time.Unix(1000, 0).Add(s.after)
		tr.observe(s.member, s.slice)
		if got := tr.done(k); got != s.done {
			t.Fatalf("step %d: done = %v, want %v", i, got, s.done)
		}
	}
	last, first := tr.latencies([]string{k})
	if len(last) != 1 || last[0] != 5*time.Second || first[0] != 3*time.Second {
		t.Fatalf("latencies = %v / %v, want [5s] / [3s]", last, first)
	}
}

// A change overtaken by a later change of the same export, before it
// reached a member, counts as reached there when the later one does: the
// member carries a newer list, and the overtaken address is never coming.
func TestTrackerCountsAChangeOvertakenByALaterOne(t *testing.T) {
	tr := newTracker([]string{"m1", "m2", "m3"})
	clock := time.Unix(1000, 0)
	tr.now = func() time.Time { return clock }
	initial := tr.expect("ns", "svc", "m1", "10.0.0.1")
	first := tr.expectChange("ns", "svc", "m1", "10.0.0.2")
	second := tr.expectChange("ns", "svc", "m1", "10.0.0.3")
	other := tr.expectChange("ns", "svc", "m2", "10.0.0.4") // another export of the Service
	for _, k := range []string{initial, first, second, other} {
		tr.started(k, clock)
	}
	steps := []struct {
		member string
		slice  *discoveryv1.EndpointSlice
		after  time.Duration
		// done: first, second, other, initial
		done [4]bool
	}{
		{"m2", importedSlice("ns", "svc", "m1", "10.0.0.2"), time.Second, [4]bool{false, false, false, false}},
		// m3 skips the first change: the second carries it there.
		{"m3", importedSlice("ns", "svc", "m1", "10.0.0.3"), 2 * time.Second, [4]bool{true, false, false, false}},
		{"m2", importedSlice("ns", "svc", "m1", "10.0.0.3"), 3 * time.Second, [4]bool{true, true, false, false}},
		// Another export's changes are not carried by m1's.
		{"m1", importedSlice("ns", "svc", "m2", "10.0.0.4"), 4 * time.Second, [4]bool{true, true, false, false}},
		{"m3", importedSlice("ns", "svc", "m2", "10.0.0.4"), 5 * time.Second, [4]bool{true, true, true, false}},
	}
	for i, s := range steps {
		clock = time.Unix(1000, 0).Add(s.after)
		tr.observe(s.member, s.slice)
		got := [4]bool{tr.done(first), tr.done(second), tr.done(other), tr.done(initial)}
		if got != s.done {
			t.Fatalf("step %d: done (first, second, other, initial) = %v, want %v", i, got, s.done)
		}
	}
	if n := tr.overtaken([]string{first, second, other}); n != 1 {
		t.Fatalf("overtaken = %d, want 1 (the first change, in m3)", n)
	}
	last, _ := tr.latencies([]string{first})
	if len(last) != 1 || last[0] != 2*time.Second {
		t.Fatalf("first change's latency = %v, want [2s] (when the second reached m3)", last)
	}
}

func TestHeapSplitBySamplesStack(t *testing.T) {
	fn := func(name string) *profile.Location {
		return &profile.Location{Line: []profile.Line{{Function: &profile.Function{Name: name}}}}
	}
	for _, tc := range []struct {
		name  string
		stack []string
		want  bool
	}{
		{"etcd", []string{"encoding/json.Unmarshal", "go.etcd.io/etcd/server/v3/mvcc.(*store).put"}, true},
		{"watch cache", []string{"k8s.io/apiserver/pkg/storage/cacher.(*watchCache).processEvent"}, true},
		{"a controller's informer", []string{"k8s.io/client-go/tools/cache.(*Reflector).list", "github.com/shepherd-io/shepherd/pkg/controllers/serviceexport.newMembers"}, false},
		{"no function", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &profile.Sample{}
			for _, f := range tc.stack {
				s.Location = append(s.Location, fn(f))
			}
			if got := allocatedByServers(s); got != tc.want {
				t.Fatalf("allocatedByServers(%v) = %v, want %v", tc.stack, got, tc.want)
			}
		})
	}
}

func TestSettled(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rates []float64
		want  bool
	}{
		{"one window proves nothing", []float64{3}, false},
		{"still falling fast", []float64{120, 40}, false},
		{"falling by a fifth exactly", []float64{50, 40}, true},
		{"flat", []float64{120, 40, 6, 6}, true},
		{"rising", []float64{6, 9}, true},
		{"falls again after a flat stretch", []float64{40, 40, 10}, false},
		{"zero after zero", []float64{0, 0}, true},
	} {
		if got := settled(tc.rates); got != tc.want {
			t.Errorf("%s: settled(%v) = %v, want %v", tc.name, tc.rates, got, tc.want)
		}
	}
}
