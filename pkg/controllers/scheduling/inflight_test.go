package scheduling

import (
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

var tFlight = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// TestInFlight: assigned replicas count as in flight until the cluster's
// summary was written after the member reported them; a report the
// summary may not include yet is not trusted.
func TestInFlight(t *testing.T) {
	cases := []struct {
		name     string
		e        ledgerEntry
		probedAt time.Time
		want     int64
	}{
		{"never reported", ledgerEntry{replicas: 4, reported: -1}, tFlight, 4},
		{"reported, summary older", ledgerEntry{replicas: 4, reported: 4, reportedAt: tFlight}, tFlight.Add(-time.Second), 4},
		{"reported, summary in the same instant", ledgerEntry{replicas: 4, reported: 4, reportedAt: tFlight}, tFlight, 4},
		{"reported, summary later", ledgerEntry{replicas: 4, reported: 4, reportedAt: tFlight}, tFlight.Add(time.Second), 0},
		{"part reported", ledgerEntry{replicas: 4, reported: 1, reportedAt: tFlight}, tFlight.Add(time.Second), 3},
		{"scaled up since the report", ledgerEntry{replicas: 6, reported: 4, reportedAt: tFlight}, tFlight.Add(time.Second), 2},
		{"more reported than assigned (scale-down under way)", ledgerEntry{replicas: 2, reported: 4, reportedAt: tFlight}, tFlight.Add(time.Second), 0},
		{"a kind without status.replicas, summary later", ledgerEntry{replicas: 3, reported: -1, reportedAt: tFlight}, tFlight.Add(time.Second), 0},
		{"a kind without status.replicas, summary older", ledgerEntry{replicas: 3, reported: -1, reportedAt: tFlight}, tFlight.Add(-time.Second), 3},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.e.inFlight(tt.probedAt); got != tt.want {
				t.Errorf("got %d, want %d", got, tt.want)
			}
		})
	}
}

func testBinding(rv string, req corev1.ResourceList, targets []workv1alpha1.TargetCluster, items ...workv1alpha1.AggregatedStatusItem) *workv1alpha1.ResourceBinding {
	b := &workv1alpha1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", ResourceVersion: rv}}
	b.Spec.Clusters = targets
	if req != nil {
		b.Spec.ReplicaRequirements = &workv1alpha1.ReplicaRequirements{ResourceRequest: req}
	}
	b.Status.AggregatedStatus = items
	return b
}

func TestEntriesOf(t *testing.T) {
	cpu := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	at := metav1.NewTime(tFlight)
	b := testBinding("5", cpu, []workv1alpha1.TargetCluster{{Name: "a", Replicas: 3}, {Name: "b", Replicas: 2}, {Name: "c"},
		{Name: "d", Replicas: 4, State: workv1alpha1.TargetUnscheduled}},
		workv1alpha1.AggregatedStatusItem{ClusterName: "a", StatusTime: &at, Status: &runtime.RawExtension{Raw: []byte(`{"replicas":2,"readyReplicas":1}`)}},
		workv1alpha1.AggregatedStatusItem{ClusterName: "b", StatusTime: &at, Status: &runtime.RawExtension{Raw: []byte(`{"active":2}`)}})
	got := entriesOf(interpreter.New(), b)
	want := []ledgerEntry{
		{cluster: "a", replicas: 3, request: framework.Resources{MilliCPU: 1000}, reported: 2, reportedAt: tFlight},
		{cluster: "b", replicas: 2, request: framework.Resources{MilliCPU: 1000}, reported: -1, reportedAt: tFlight},
	}
	if !sameEntries(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if e := entriesOf(interpreter.New(), testBinding("5", nil, []workv1alpha1.TargetCluster{{Name: "a", Replicas: 3}})); len(e) != 0 {
		t.Errorf("a workload requesting nothing takes no room: %+v", e)
	}
}

// instancesInterpreter reads a Widget's status replicas from
// status.instances, as an interpreter taught so would.
type instancesInterpreter struct{ interpreter.Interpreter }

func (instancesInterpreter) StatusReplicas(gk schema.GroupKind, raw *runtime.RawExtension) (int32, bool) {
	var st struct {
		Instances *int32 `json:"instances"`
	}
	if gk.Kind != "Widget" || raw == nil || json.Unmarshal(raw.Raw, &st) != nil || st.Instances == nil {
		return 0, false
	}
	return *st.Instances, true
}

// TestEntriesOfCustomizedKind: the replicas a member reports for a copy of
// a kind a customization teaches are read through the interpreter the
// scheduler is given, the process's, not by a rule of the ledger's own.
func TestEntriesOfCustomizedKind(t *testing.T) {
	widget := schema.GroupVersionKind{Group: "example.io", Version: "v1", Kind: "Widget"}
	customized := interpreter.New()
	customized.SetCustom(widget, &interpreter.Custom{
		Replicas:     func(*unstructured.Unstructured) (int64, error) { return 3, nil },
		ReplicasPath: []string{"spec", "size"},
	})
	cpu := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	at := metav1.NewTime(tFlight)
	// The cluster's summary is later than the report: what was reported
	// is counted there, the rest of the 3 replicas is in flight (all of
	// them counted when the status reports none).
	for _, tc := range []struct {
		name               string
		kinds              interpreter.Interpreter
		status             string
		reported, inFlight int64
	}{
		{"status.replicas, by convention", customized, `{"replicas":2}`, 2, 1},
		{"no status.replicas", customized, `{"instances":2}`, -1, 0},
		{"the interpreter's own field", instancesInterpreter{customized}, `{"replicas":1,"instances":2}`, 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := testBinding("5", cpu, []workv1alpha1.TargetCluster{{Name: "a", Replicas: 3}},
				workv1alpha1.AggregatedStatusItem{ClusterName: "a", StatusTime: &at, Status: &runtime.RawExtension{Raw: []byte(tc.status)}})
			b.Spec.Resource = workv1alpha1.ObjectReference{APIVersion: widget.GroupVersion().String(), Kind: widget.Kind, Namespace: "ns", Name: "web"}
			got := entriesOf(tc.kinds, b)
			if len(got) != 1 || got[0].reported != tc.reported {
				t.Fatalf("entries %+v, want one reporting %d", got, tc.reported)
			}
			l := newLedger(tc.kinds)
			l.observe("k", b)
			snap, err := framework.NewSnapshot([]framework.ClusterInfo{{Name: "a", ProbedAt: tFlight.Add(time.Second)}})
			if err != nil {
				t.Fatal(err)
			}
			rs, _ := l.reservations(snap)
			var n int64
			for _, r := range rs["a"] {
				n += r.Replicas
			}
			if n != tc.inFlight {
				t.Errorf("in flight %d, want %d", n, tc.inFlight)
			}
		})
	}
}

// TestLedger: an assumed placement is not undone by an event of an older
// version of the binding, is replaced by the written version's, and is put
// back to what the API holds when its write fails. Reservations come out
// per cluster, against each cluster's probe time.
func TestLedger(t *testing.T) {
	cpu := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	snap, err := framework.NewSnapshot([]framework.ClusterInfo{{Name: "a", ProbedAt: tFlight}, {Name: "b", ProbedAt: tFlight}})
	if err != nil {
		t.Fatal(err)
	}
	inFlight := func(l *ledger) map[string]int64 {
		rs, _ := l.reservations(snap)
		out := map[string]int64{}
		for c, list := range rs {
			for _, r := range list {
				out[c] += r.Replicas
			}
		}
		return out
	}
	l := newLedger(interpreter.New())
	old := testBinding("10", cpu, nil)
	l.observe("k", old)
	if got := inFlight(l); len(got) != 0 {
		t.Fatalf("unplaced binding: %v", got)
	}
	l.assume("k", old, []workv1alpha1.TargetCluster{{Name: "a", Replicas: 3}})
	if got := inFlight(l); got["a"] != 3 {
		t.Fatalf("assumed: %v", got)
	}
	l.observe("k", testBinding("9", cpu, nil)) // an older event
	if got := inFlight(l); got["a"] != 3 {
		t.Fatalf("an older event undid the assumption: %v", got)
	}
	// The cache holds a version before its handlers see it: the event of
	// the version the cycle read arrives after the assumption.
	l.observe("k", old)
	if got := inFlight(l); got["a"] != 3 {
		t.Fatalf("the event of the version read undid the assumption: %v", got)
	}
	l.written("k", "11")
	l.observe("k", old) // the version read before the write
	if got := inFlight(l); got["a"] != 3 {
		t.Fatalf("the version before the write undid the assumption: %v", got)
	}
	at := metav1.NewTime(tFlight.Add(-time.Second))
	l.observe("k", testBinding("12", cpu, []workv1alpha1.TargetCluster{{Name: "a", Replicas: 3}},
		workv1alpha1.AggregatedStatusItem{ClusterName: "a", StatusTime: &at, Status: &runtime.RawExtension{Raw: []byte(`{"replicas":3}`)}}))
	if got := inFlight(l); len(got) != 0 {
		t.Fatalf("reported before the summary: nothing in flight, got %v", got)
	}
	l.assume("k", old, []workv1alpha1.TargetCluster{{Name: "b", Replicas: 2}})
	l.release("k", old)
	if got := inFlight(l); len(got) != 0 {
		t.Fatalf("a failed write left its assumption: %v", got)
	}
	l.observe("other", testBinding("3", cpu, []workv1alpha1.TargetCluster{{Name: "b", Replicas: 1}, {Name: "gone", Replicas: 5}}))
	if got := inFlight(l); got["b"] != 1 || len(got) != 1 {
		t.Fatalf("another binding: %v", got)
	}
	l.forget("other")
	if got := inFlight(l); len(got) != 0 {
		t.Fatalf("forgotten: %v", got)
	}
}

func TestNewerThan(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want bool
	}{{"10", "9", true}, {"9", "10", false}, {"10", "10", false}, {"", "10", true}, {"x", "10", true}} {
		if got := newerThan(tt.a, tt.b); got != tt.want {
			t.Errorf("newerThan(%q, %q) = %v", tt.a, tt.b, got)
		}
	}
}

// TestInFlightUnderClockSkew: a Pull cluster's agent stamps both the
// copy's statusTime (through its Work) and the Cluster's lastProbeTime, so
// however far its clock is from the hub's (here up to two probe
// intervals either way), replicas the member reported after a probe stay
// in flight until the next probe, and count as placed once it ran. Had
// statusTime been the hub's time of aggregation, an agent two intervals
// ahead would have its older summary trusted to hold them: their room
// counted free twice.
func TestInFlightUnderClockSkew(t *testing.T) {
	const probe = 10 * time.Second
	req := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	targets := []workv1alpha1.TargetCluster{{Name: "pull1", Replicas: 4}}
	for _, skew := range []time.Duration{-2 * probe, -probe, -time.Second, 0, time.Second, probe, 2 * probe} {
		t.Run(skew.String(), func(t *testing.T) {
			agent := func(real time.Duration) time.Time { return tFlight.Add(real + skew) }
			// Real time: the agent probes at 0 (no pods yet), the member
			// reports the 4 replicas at 3 s, the agent probes again at
			// one interval.
			reported := metav1.NewTime(agent(3 * time.Second))
			b := testBinding("1", req, targets, workv1alpha1.AggregatedStatusItem{
				ClusterName: "pull1", Status: &runtime.RawExtension{Raw: []byte(`{"replicas":4}`)}, StatusTime: &reported,
			})
			b.Spec.Resource = workv1alpha1.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns", Name: "web"}
			entries := entriesOf(interpreter.New(), b)
			if len(entries) != 1 {
				t.Fatalf("entries %+v", entries)
			}
			if got := entries[0].inFlight(agent(0)); got != 4 {
				t.Errorf("against the probe before the report: %d in flight, want 4", got)
			}
			if got := entries[0].inFlight(agent(probe)); got != 0 {
				t.Errorf("against the probe after the report: %d in flight, want 0", got)
			}
		})
	}
}
