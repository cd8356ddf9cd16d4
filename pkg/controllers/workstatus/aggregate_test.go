package workstatus

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

const (
	healthy   = policyv1alpha1.ResourceHealthy
	unhealthy = policyv1alpha1.ResourceUnhealthy
	unknown   = policyv1alpha1.ResourceUnknown
)

var tmplRef = workv1alpha1.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web"}

func raw(s string) *runtime.RawExtension { return &runtime.RawExtension{Raw: []byte(s)} }

// work builds a Work of cluster whose manifests are a ConfigMap dependency
// and the template, with the given Applied condition and template status.
func work(cluster string, applied metav1.ConditionStatus, st *runtime.RawExtension, h policyv1alpha1.ResourceHealth) workv1alpha1.Work {
	w := workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: "shepherd-es-" + cluster, Name: "shop.web-deployment",
		Labels: map[string]string{workv1alpha1.LabelCluster: cluster}}}
	w.Status.ManifestStatuses = []workv1alpha1.ManifestStatus{
		{Identifier: workv1alpha1.ResourceIdentifier{Ordinal: 0, Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "web"}, Health: unknown},
		{Identifier: workv1alpha1.ResourceIdentifier{Ordinal: 1, Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "shop", Name: "web"}, Status: st, Health: h},
	}
	if applied != "" {
		w.Status.Conditions = []metav1.Condition{{Type: "Applied", Status: applied, Message: "boom"}}
	}
	return w
}

func TestAggregate(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Minute))
	t2 := metav1.NewTime(t0.Add(2 * time.Minute))

	// Round 1: m2 applied and healthy, m1 applied but not yet collected,
	// m3 failed to apply.
	works := []workv1alpha1.Work{
		work("m2", "True", raw(`{"replicas":2}`), healthy),
		work("m1", "True", nil, ""),
		work("m3", "False", nil, ""),
	}
	r1 := aggregate(nil, works, tmplRef, t0)
	if len(r1) != 3 || r1[0].ClusterName != "m1" || r1[2].ClusterName != "m3" {
		t.Fatalf("items not sorted by cluster: %+v", r1)
	}
	m1, m2, m3 := r1[0], r1[1], r1[2]
	if !m1.Applied || m1.Health != unknown || m1.FirstCollectedTime != nil || m1.Settled {
		t.Errorf("m1 round 1: %+v", m1)
	}
	if !m2.Applied || m2.Health != healthy || string(m2.Status.Raw) != `{"replicas":2}` || !m2.FirstCollectedTime.Equal(&t0) || !m2.Settled || m2.UnhealthySince != nil {
		t.Errorf("m2 round 1: %+v", m2)
	}
	if m3.Applied || m3.AppliedMessage != "boom" {
		t.Errorf("m3 round 1: %+v", m3)
	}

	// Round 2: m2 turns Unhealthy, m1 is collected and Unhealthy, m3's
	// Work is being deleted (the cluster left the placement).
	works = []workv1alpha1.Work{
		work("m1", "True", raw(`{"replicas":1}`), unhealthy),
		work("m2", "True", raw(`{"replicas":2,"readyReplicas":1}`), unhealthy),
		work("m3", "False", nil, ""),
	}
	works[2].DeletionTimestamp = &t1
	r2 := aggregate(r1, works, tmplRef, t1)
	if len(r2) != 2 {
		t.Fatalf("deleting Work kept its item: %+v", r2)
	}
	m1, m2 = r2[0], r2[1]
	if !m1.FirstCollectedTime.Equal(&t1) || m1.Settled || !m1.UnhealthySince.Equal(&t1) {
		t.Errorf("m1 round 2: %+v", m1)
	}
	if !m2.FirstCollectedTime.Equal(&t0) || !m2.Settled || !m2.UnhealthySince.Equal(&t1) {
		t.Errorf("m2 round 2 (firstCollectedTime set once, settled sticks): %+v", m2)
	}

	// Round 3: m2 stays Unhealthy (the clock keeps running from t1), m1
	// recovers (cleared).
	works = []workv1alpha1.Work{work("m1", "True", raw(`{}`), healthy), work("m2", "True", raw(`{}`), unhealthy)}
	r3 := aggregate(r2, works, tmplRef, t2)
	if r3[0].UnhealthySince != nil || !r3[0].Settled || !r3[1].UnhealthySince.Equal(&t1) {
		t.Errorf("round 3: %+v", r3)
	}
	if !sameItems(r3, aggregate(r3, works, tmplRef, t2)) {
		t.Error("aggregate is not stable")
	}
	if sameItems(r2, r3) {
		t.Error("sameItems missed a change")
	}
}

func TestTemplateManifest(t *testing.T) {
	w := work("m1", "True", raw(`{}`), healthy)
	if ms := templateManifest(tmplRef, w.Status.ManifestStatuses); ms.Identifier.Kind != "Deployment" {
		t.Errorf("matched %+v", ms.Identifier)
	}
	other := tmplRef
	other.Name = "api"
	if ms := templateManifest(other, w.Status.ManifestStatuses); ms.Identifier.Ordinal != 0 {
		t.Errorf("fallback should be the first manifest: %+v", ms.Identifier)
	}
	if templateManifest(tmplRef, nil) != nil {
		t.Error("no manifests")
	}
}

func TestRawEqualityIgnoresEncoding(t *testing.T) {
	a := raw(`{"a":1,"b":{"c":[1,2]}}`)
	b := raw(`{ "b": {"c": [1, 2]}, "a": 1.0 }`)
	if !workv1alpha1.RawEqual(a, b) || workv1alpha1.RawEqual(a, raw(`{"a":2}`)) || workv1alpha1.RawEqual(a, nil) || !workv1alpha1.RawEqual(nil, nil) {
		t.Error("RawEqual")
	}
	x := []workv1alpha1.ManifestStatus{{Status: a, Health: healthy}}
	if !sameManifestStatuses(x, []workv1alpha1.ManifestStatus{{Status: b, Health: healthy}}) ||
		sameManifestStatuses(x, []workv1alpha1.ManifestStatus{{Status: b, Health: unhealthy}}) {
		t.Error("sameManifestStatuses")
	}
	// A ConfigMap edited in the member changes only its resourceVersion:
	// that is a change to write (the execution controller compares it for
	// drift), and so is the reason an Unknown health gives.
	cm := []workv1alpha1.ManifestStatus{{ResourceVersion: "10", AppliedResourceVersion: "10"}}
	if sameManifestStatuses(cm, []workv1alpha1.ManifestStatus{{ResourceVersion: "11", AppliedResourceVersion: "10"}}) ||
		sameManifestStatuses([]workv1alpha1.ManifestStatus{{Health: unknown}}, []workv1alpha1.ManifestStatus{{Health: unknown, HealthReason: "CEL evaluation failed"}}) {
		t.Error("sameManifestStatuses ignores a resourceVersion or a health reason")
	}
}

// TestAggregateCarriesUnschedulable: the template's unschedulable count
// and since-time reach the binding's item, and a change of either is a
// change to write (and only that: the same count is not).
func TestAggregateCarriesUnschedulable(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	w := work("m1", "True", raw(`{"replicas":4}`), healthy)
	w.Status.ManifestStatuses[1].UnschedulableReplicas, w.Status.ManifestStatuses[1].UnschedulableSince = 2, &t0
	got := aggregate(nil, []workv1alpha1.Work{w}, tmplRef, t0)
	if got[0].UnschedulableReplicas != 2 || got[0].UnschedulableSince == nil || !got[0].UnschedulableSince.Equal(&t0) {
		t.Fatalf("item %+v", got[0])
	}
	again := aggregate(got, []workv1alpha1.Work{w}, tmplRef, metav1.NewTime(t0.Add(time.Minute)))
	if !sameItems(got, again) {
		t.Fatalf("the same count is a change: %+v vs %+v", got, again)
	}
	w.Status.ManifestStatuses[1].UnschedulableReplicas = 3
	if sameItems(got, aggregate(got, []workv1alpha1.Work{w}, tmplRef, t0)) {
		t.Fatal("a new count is no change")
	}
	later := metav1.NewTime(t0.Add(time.Hour))
	w.Status.ManifestStatuses[1].UnschedulableReplicas, w.Status.ManifestStatuses[1].UnschedulableSince = 2, &later
	if sameItems(got, aggregate(got, []workv1alpha1.Work{w}, tmplRef, t0)) {
		t.Fatal("a new since-time is no change")
	}
	a := []workv1alpha1.ManifestStatus{w.Status.ManifestStatuses[1]}
	b := []workv1alpha1.ManifestStatus{*w.Status.ManifestStatuses[1].DeepCopy()}
	b[0].UnschedulableReplicas = 0
	if sameManifestStatuses(a, b) {
		t.Fatal("manifest statuses: a new count is no change")
	}
}

// TestAggregateTakesTheReportersClock: a copy's statusTime is the one the
// reporter wrote on its Work (a Pull cluster's agent, on the clock that
// also stamps the Cluster's lastProbeTime), however far the hub's clock is
// from it; a Work without one gets the hub's time, kept while the status
// stays the same.
func TestAggregateTakesTheReportersClock(t *testing.T) {
	hubNow := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	for _, skew := range []time.Duration{-20 * time.Second, -10 * time.Second, 0, 10 * time.Second, 20 * time.Second} {
		t.Run(skew.String(), func(t *testing.T) {
			agentSaw := metav1.NewTime(hubNow.Add(skew - 500*time.Millisecond))
			w := work("p1", "True", raw(`{"replicas":4}`), healthy)
			w.Status.ManifestStatuses[1].StatusTime = &agentSaw
			got := aggregate(nil, []workv1alpha1.Work{w}, tmplRef, hubNow)
			if st := got[0].StatusTime; st == nil || !st.Equal(&agentSaw) {
				t.Errorf("statusTime %v, want the agent's %v", st, agentSaw)
			}
		})
	}
	w := work("m1", "True", raw(`{"replicas":4}`), healthy)
	first := aggregate(nil, []workv1alpha1.Work{w}, tmplRef, hubNow)
	if st := first[0].StatusTime; st == nil || !st.Equal(&hubNow) {
		t.Fatalf("without the reporter's time: %v, want the hub's %v", st, hubNow)
	}
	later := aggregate(first, []workv1alpha1.Work{w}, tmplRef, metav1.NewTime(hubNow.Add(time.Minute)))
	if st := later[0].StatusTime; !st.Equal(&hubNow) {
		t.Errorf("the same status re-aggregated moved its time to %v", st)
	}
}

// TestAggregateCarriesUnschedulableComponents: the template's breakdown by
// component reaches the binding's item as it is, and a change of a
// component's count or since-time is a change to write, on the Work and
// on the binding; the same breakdown re-encoded is not.
func TestAggregateCarriesUnschedulableComponents(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	components := []workv1alpha1.UnschedulableComponent{{Name: "ray-head", Replicas: 1, Since: t0}, {Name: "workers", Replicas: 2, Since: t0}}
	w := work("m1", "True", raw(`{}`), healthy)
	ms := &w.Status.ManifestStatuses[1]
	ms.UnschedulableReplicas, ms.UnschedulableSince, ms.UnschedulableComponents = 3, &t0, components
	got := aggregate(nil, []workv1alpha1.Work{w}, tmplRef, t0)
	if !sameComponents(got[0].UnschedulableComponents, components) {
		t.Fatalf("item's components %+v, want %+v", got[0].UnschedulableComponents, components)
	}
	// The API keeps seconds: the same breakdown read back is no change.
	w2 := *w.DeepCopy()
	w2.Status.ManifestStatuses[1].UnschedulableComponents[1].Since = metav1.NewTime(t0.Add(300 * time.Millisecond))
	if !sameItems(got, aggregate(got, []workv1alpha1.Work{w2}, tmplRef, t0)) ||
		!sameManifestStatuses(w.Status.ManifestStatuses, w2.Status.ManifestStatuses) {
		t.Fatal("the same breakdown is a change")
	}
	for _, tc := range []struct {
		name   string
		change func(cs []workv1alpha1.UnschedulableComponent) []workv1alpha1.UnschedulableComponent
	}{
		{"a component's count", func(cs []workv1alpha1.UnschedulableComponent) []workv1alpha1.UnschedulableComponent {
			cs[1].Replicas = 3
			return cs
		}},
		{"a component's since-time", func(cs []workv1alpha1.UnschedulableComponent) []workv1alpha1.UnschedulableComponent {
			cs[0].Since = metav1.NewTime(t0.Add(time.Minute))
			return cs
		}},
		{"a component scheduled", func(cs []workv1alpha1.UnschedulableComponent) []workv1alpha1.UnschedulableComponent { return cs[1:] }},
		{"none left", func([]workv1alpha1.UnschedulableComponent) []workv1alpha1.UnschedulableComponent { return nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changed := *w.DeepCopy()
			cms := &changed.Status.ManifestStatuses[1]
			cms.UnschedulableComponents = tc.change(cms.UnschedulableComponents)
			if sameItems(got, aggregate(got, []workv1alpha1.Work{changed}, tmplRef, t0)) {
				t.Error("binding: no change")
			}
			if sameManifestStatuses(w.Status.ManifestStatuses, changed.Status.ManifestStatuses) {
				t.Error("Work: no change")
			}
		})
	}
}
