package fleetbench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DefaultChurnWriters is how many writers the soak's churn uses. One
// writer holds a rate only while each change (a read and a write) takes
// less than the gap between ticks; on a loaded hub a change takes longer,
// and a lone writer fell behind the asked rate without saying so.
const DefaultChurnWriters = 8

// drive hands each tick to an idle writer, of writers running change
// concurrently, until ticks is closed or ctx ends, then waits for the
// writers. A tick that finds every writer busy is not queued (a queue
// would burst later and still not hold the rate): it is counted as
// missed, so a report says when the asked rate was not held.
func drive(ctx context.Context, ticks <-chan time.Time, writers int, change func(ctx context.Context, writer int)) (missed int) {
	// busy holds a token per change handed out and not finished, so a
	// tick is missed only when every writer has one: not when a free
	// writer has just not come back to wait yet.
	busy := make(chan struct{}, writers)
	work := make(chan struct{}, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range work {
				change(ctx, w)
				<-busy
			}
		}()
	}
	defer func() {
		close(work)
		wg.Wait()
	}()
	for {
		select {
		case <-ctx.Done():
			return missed
		case _, ok := <-ticks:
			if !ok {
				return missed
			}
			select {
			case busy <- struct{}{}:
				work <- struct{}{} // never blocks: at most writers tokens are out
			default:
				missed++
			}
		}
	}
}

// pacedTicks sends a tick every 1/perSecond for d, then closes the
// channel (or when ctx ends).
func pacedTicks(ctx context.Context, perSecond float64, d time.Duration) <-chan time.Time {
	out := make(chan time.Time)
	go func() {
		defer close(out)
		t := time.NewTicker(time.Duration(float64(time.Second) / perSecond))
		defer t.Stop()
		end := time.After(d)
		for {
			select {
			case <-ctx.Done():
				return
			case <-end:
				return
			case now := <-t.C:
				select {
				case out <- now:
				case <-ctx.Done():
					return
				case <-end:
					return
				}
			}
		}
	}()
	return out
}

// churn is the soak's churn: each writer changes the workloads of its own
// partition (index modulo the writers), with its own random source and its
// own queue of workloads to create again, so writers never share a
// workload.
type churn struct {
	hub      client.Client
	ns       string
	o        SoakOptions
	replicas []int32 // by workload; each index written by its writer only
	scales   *scaleWatch
	writers  []churnWriter
	fail     func(error)

	changes, refused atomic.Int64
}

// churnWriter is one writer's own state.
type churnWriter struct {
	r        *rand.Rand
	recreate []int // deleted, to be created again
}

// change makes one change as writer w: a workload deleted earlier comes
// back first; otherwise a scale, an image edit or a deletion of one of its
// workloads. A refusal for load is counted and skipped; any other error
// stops the churn.
func (c *churn) change(ctx context.Context, w int) {
	cw := &c.writers[w]
	if len(cw.recreate) > 0 {
		d := cw.recreate[0]
		err := c.hub.Create(ctx, deployment(c.ns, d, d%c.o.Policies, c.replicas[d]))
		switch {
		case err == nil || apierrors.IsAlreadyExists(err):
			cw.recreate = cw.recreate[1:]
			c.changes.Add(1)
		case overloaded(err):
			c.refused.Add(1)
		case ctx.Err() == nil:
			c.fail(fmt.Errorf("creating workload %d again: %w", d, err))
		}
		return
	}
	n := len(c.writers)
	d := w + n*cw.r.IntN((c.o.Workloads-w+n-1)/n)
	dep := &appsv1.Deployment{}
	if err := c.hub.Get(ctx, client.ObjectKey{Namespace: c.ns, Name: fmt.Sprintf("app-%d", d)}, dep); err != nil {
		switch {
		case apierrors.IsNotFound(err):
		case overloaded(err):
			c.refused.Add(1)
		case ctx.Err() == nil:
			c.fail(err)
		}
		return
	}
	var err error
	switch nextOp(cw.r) {
	case opScale:
		n := otherReplicas(cw.r, ptr.Deref(dep.Spec.Replicas, 1))
		dep.Spec.Replicas = ptr.To(n)
		if err = c.hub.Update(ctx, dep); err == nil {
			c.replicas[d] = n
			c.scales.expect(dep.Name, n, time.Now())
		}
	case opEditImage:
		dep.Spec.Template.Spec.Containers[0].Image = fmt.Sprintf("nginx:1.%d", 20+cw.r.IntN(10))
		err = c.hub.Update(ctx, dep)
	case opRecreate:
		err = client.IgnoreNotFound(c.hub.Delete(ctx, dep))
		cw.recreate = append(cw.recreate, d)
		// A scale not yet scheduled is not timed across a re-creation:
		// the new binding is a new placement.
		c.scales.forget(dep.Name)
	}
	switch {
	case overloaded(err):
		// A timed-out deletion may have happened: the workload stays
		// queued for re-creation (AlreadyExists if it did not).
		c.refused.Add(1)
	case err != nil && !apierrors.IsConflict(err):
		if ctx.Err() == nil {
			c.fail(fmt.Errorf("churn: %w", err))
		}
	default:
		c.changes.Add(1)
	}
}
