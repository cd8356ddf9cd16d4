package descheduler

import (
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
)

// dividedGang is a gang whose workers the scheduler divided: the head and
// one worker on a (the head cluster), three workers on b.
func dividedGang() *workv1alpha1.BindingSpec {
	return &workv1alpha1.BindingSpec{
		Placement: &policyv1alpha1.Placement{Components: &policyv1alpha1.ComponentsPlacement{Division: policyv1alpha1.ComponentDivisionDivideIndependent}},
		Components: []workv1alpha1.Component{
			{Name: "head", Replicas: 1, ReplicasPath: "/spec/head/replicas"},
			{Name: "workers", Replicas: 4, Divisible: true, ReplicasPath: "/spec/workers/replicas"},
		},
		DividedComponents: &workv1alpha1.DividedComponents{HeadCluster: "a"},
		Clusters: []workv1alpha1.TargetCluster{
			{Name: "a", State: workv1alpha1.TargetBound, Components: []workv1alpha1.TargetComponent{{Name: "head", Replicas: 1}, {Name: "workers", Replicas: 1}}},
			{Name: "b", State: workv1alpha1.TargetBound, Components: []workv1alpha1.TargetComponent{{Name: "workers", Replicas: 3}}},
		},
	}
}

// A divided gang's divisible components are divided replicas: their
// Pending pods are taken back from the cluster (its share lowered, the
// head where it is) for the scheduler to place again by room. A pending
// head, or pods not told apart by component, move the cluster's copy
// whole as any gang's.
func TestDecideDividedGang(t *testing.T) {
	const thr = 5 * time.Minute
	now := t0.Add(thr)
	for _, tc := range []struct {
		name     string
		whole    bool // the spec is a gang placed whole, not divided
		items    []workv1alpha1.AggregatedStatusItem
		ann      map[string]string
		moved    []string // clusters left whole
		shares   map[string][]workv1alpha1.TargetComponent
		reason   string
		message  string
		nothing  bool
		recorded string
		// headOnly: the head cluster runs no workers.
		headOnly bool
	}{
		{name: "workers Pending on a cluster of workers: its share lowered",
			items:   []workv1alpha1.AggregatedStatusItem{stuckComponents("b", t0, pending("workers", 2, t0))},
			shares:  map[string][]workv1alpha1.TargetComponent{"b": {{Name: "workers", Replicas: 1}}},
			reason:  ReasonMoved,
			message: `Moved unschedulable replicas: 2 of component "workers" from b (keeps 1); unschedulable for longer than 5m0s`},
		{name: "more Pending than the share (a stale count): lowered to none, not below",
			items:  []workv1alpha1.AggregatedStatusItem{stuckComponents("b", t0, pending("workers", 5, t0))},
			shares: map[string][]workv1alpha1.TargetComponent{"b": nil},
			reason: ReasonMoved},
		{name: "workers Pending beside the head: lowered, the head stays",
			items:  []workv1alpha1.AggregatedStatusItem{stuckComponents("a", t0, pending("workers", 1, t0))},
			shares: map[string][]workv1alpha1.TargetComponent{"a": {{Name: "head", Replicas: 1}}},
			reason: ReasonMoved},
		{name: "the head Pending: the head cluster's copy moves whole",
			items:  []workv1alpha1.AggregatedStatusItem{stuckComponents("a", t0, pending("head", 1, t0))},
			moved:  []string{"a"},
			reason: ReasonGangMoved},
		{name: "pods not told apart by component: whole",
			items:  []workv1alpha1.AggregatedStatusItem{stuck("b", 2, t0)},
			moved:  []string{"b"},
			reason: ReasonGangMoved},
		{name: "pods of no component among them: whole",
			items: []workv1alpha1.AggregatedStatusItem{func() workv1alpha1.AggregatedStatusItem {
				it := stuckComponents("b", t0, pending("workers", 2, t0))
				it.UnschedulableReplicas = 3
				return it
			}()},
			moved:  []string{"b"},
			reason: ReasonGangMoved},
		{name: "a component the spec does not list (bad input): whole",
			items:  []workv1alpha1.AggregatedStatusItem{stuckComponents("b", t0, pending("gone", 1, t0))},
			moved:  []string{"b"},
			reason: ReasonGangMoved},
		{name: "workers Pending where the cluster runs none (a stale count): nothing moves",
			headOnly: true, items: []workv1alpha1.AggregatedStatusItem{stuckComponents("a", t0, pending("workers", 1, t0))}, nothing: true},
		{name: "the head and workers elsewhere: the head cluster whole, the workers lowered",
			items: []workv1alpha1.AggregatedStatusItem{stuckComponents("a", t0, pending("head", 1, t0)), stuckComponents("b", t0, pending("workers", 2, t0))},
			moved: []string{"a"}, shares: map[string][]workv1alpha1.TargetComponent{"b": {{Name: "workers", Replicas: 1}}},
			reason: ReasonGangMoved,
			message: `Moved the gang whole from a (1 of its replicas unschedulable there; component "head": 1 of 1 Pending since 2026-03-08T08:00:00Z), ` +
				`2 of component "workers" from b (keeps 1); unschedulable for longer than 5m0s; a gang runs whole or not at all`},
		{name: "a gang placed whole is never lowered",
			whole: true, items: []workv1alpha1.AggregatedStatusItem{stuckComponents("b", t0, pending("workers", 2, t0))},
			moved: []string{"b"}, reason: ReasonGangMoved},
		{name: "a lowering recorded within the threshold is reported as replicas moved",
			ann: map[string]string{workv1alpha1.AnnotationDescheduledAt: t0.Add(4 * time.Minute).Format(time.RFC3339),
				workv1alpha1.AnnotationDescheduled: `2 of component "workers" from b (keeps 1); x`},
			items:    []workv1alpha1.AggregatedStatusItem{stuckComponents("b", t0, pending("workers", 1, t0))},
			recorded: `2 of component "workers" from b (keeps 1); x`, reason: ReasonMoved,
			message: `Moved unschedulable replicas: 2 of component "workers" from b (keeps 1); x`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := dividedGang()
			if tc.whole {
				spec.DividedComponents = nil
			}
			if tc.headOnly {
				spec.Clusters[0].Components = spec.Clusters[0].Components[:1]
			}
			status := &workv1alpha1.BindingStatus{AggregatedStatus: tc.items}
			d := decide(spec, status, tc.ann, thr, now)
			c, ok := condition(d, 1)
			switch {
			case tc.nothing:
				if len(d.moves) > 0 || ok {
					t.Fatalf("moves %+v, condition %+v; want nothing", d.moves, c)
				}
				return
			case !ok || c.Reason != tc.reason || c.Status != metav1.ConditionTrue:
				t.Fatalf("condition %+v, want True %s", c, tc.reason)
			case tc.message != "" && !strings.HasPrefix(c.Message, tc.message):
				t.Errorf("message\n %q, want it to start with\n %q", c.Message, tc.message)
			}
			if tc.recorded != "" {
				if d.recorded != tc.recorded || len(d.moves) > 0 {
					t.Errorf("recorded %q, moves %+v", d.recorded, d.moves)
				}
				return
			}
			before := spec.DeepCopy()
			ann := apply(spec, nil, d, now)
			if ann[workv1alpha1.AnnotationDescheduled] != describe(d) {
				t.Errorf("annotation %q, want %q", ann[workv1alpha1.AnnotationDescheduled], describe(d))
			}
			for i, tgt := range spec.Clusters {
				was := before.Clusters[i]
				wantActive := !slices.Contains(tc.moved, tgt.Name)
				if bindingutil.IsActive(tgt) != wantActive {
					t.Errorf("target %s active %v, want %v", tgt.Name, bindingutil.IsActive(tgt), wantActive)
				}
				want, lowered := tc.shares[tgt.Name]
				if !lowered {
					want = was.Components
				}
				if !slices.Equal(tgt.Components, want) {
					t.Errorf("target %s components %+v, want %+v", tgt.Name, tgt.Components, want)
				}
			}
			if len(spec.EvictionHistory) != len(tc.moved) {
				t.Errorf("evictions %+v, want one per cluster left whole (%v)", spec.EvictionHistory, tc.moved)
			}
			if spec.Components[1].Replicas != 4 || spec.DividedComponents == nil && !tc.whole {
				t.Errorf("the binding's components or division changed: %+v %+v", spec.Components, spec.DividedComponents)
			}
		})
	}
}
