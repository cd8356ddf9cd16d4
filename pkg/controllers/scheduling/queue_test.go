package scheduling

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

func prioritized(name string, p *int32) *workv1alpha1.ResourceBinding {
	b := &workv1alpha1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
	if p != nil {
		b.Spec.SchedulePriority = &workv1alpha1.SchedulePriority{Priority: *p}
	}
	return b
}

// A burst of low-priority bindings queued first does not delay a
// high-priority one: the next worker to take a binding from controller-
// runtime's priority queue takes the high one, and equal priorities come in
// order of arrival. Bindings without a priority count as 0.
func TestHighPriorityOvertakesABacklog(t *testing.T) {
	for _, tc := range []struct {
		name          string
		low, high     *int32
		backlog       int
		wantHighFirst bool
	}{
		{"1000 low, then one high", ptr32(-10), ptr32(1000), 1000, true},
		{"1000 without priority, then one high", nil, ptr32(1), 1000, true},
		{"1000 high, then one without: no overtaking", ptr32(5), nil, 1000, false},
		{"equal priorities keep their order", ptr32(3), ptr32(3), 1000, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := priorityqueue.New[reconcile.Request]("test")
			defer q.ShutDown()
			h := bindingHandler()
			for i := range tc.backlog {
				h.Create(context.Background(), event.CreateEvent{Object: prioritized(fmt.Sprintf("low-%04d", i), tc.low)}, q)
			}
			h.Update(context.Background(), event.UpdateEvent{ObjectOld: prioritized("urgent", nil), ObjectNew: prioritized("urgent", tc.high)}, q)
			first, _ := q.Get()
			if got := first.Name == "urgent"; got != tc.wantHighFirst {
				t.Fatalf("first out: %s (want urgent first: %v)", first.Name, tc.wantHighFirst)
			}
			if !tc.wantHighFirst && first.Name != "low-0000" {
				t.Fatalf("first out: %s, want the first queued", first.Name)
			}
		})
	}
}

func ptr32(v int32) *int32 { return &v }

// BenchmarkUrgentBehindBacklog measures how many bindings a worker takes
// from the queue before an urgent one queued behind 1,000 others: with its
// priority (0: the next cycle runs it) and, as the baseline in the same
// run, without one (1000: it waits for the whole backlog).
func BenchmarkUrgentBehindBacklog(b *testing.B) {
	for _, bc := range []struct {
		name   string
		urgent *int32
	}{{"priority", ptr32(1000)}, {"fifo", nil}} {
		b.Run(bc.name, func(b *testing.B) {
			var ahead int
			for b.Loop() {
				q := priorityqueue.New[reconcile.Request]("bench")
				h := bindingHandler()
				for i := range 1000 {
					h.Create(context.Background(), event.CreateEvent{Object: prioritized(fmt.Sprintf("low-%04d", i), nil)}, q)
				}
				h.Create(context.Background(), event.CreateEvent{Object: prioritized("urgent", bc.urgent)}, q)
				for ahead = 0; ; ahead++ {
					item, _ := q.Get()
					q.Done(item)
					if item.Name == "urgent" {
						break
					}
				}
				q.ShutDown()
			}
			b.ReportMetric(float64(ahead), "bindings-ahead")
		})
	}
}
