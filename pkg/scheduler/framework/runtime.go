package framework

import (
	"context"
	"fmt"
	"math/bits"
)

// DeletingPlugin is the name reported for clusters the framework itself
// rejects because they are leaving the fleet.
const DeletingPlugin = "Framework"

var statusDeleting = NewStatus(Unschedulable, "cluster is being deleted")

// Rejection says which filter rejected a cluster and why.
type Rejection struct {
	Plugin string
	// Status is nil when the cluster passed every filter.
	Status *Status
}

// Run filters and scores every cluster of snap for w under term, and builds
// the candidates. An error means a plugin failed (not that no cluster fits:
// that is a Cycle with no Feasible clusters). Call Release on the Cycle when
// done with it.
func (f *Framework) Run(ctx context.Context, snap *Snapshot, w *Workload, term AffinityTerm) (*Cycle, error) {
	c := f.pool.Get().(*buffers).cycle(f, snap, w, term)
	err := f.filter(ctx, c, w)
	if err == nil {
		err = f.score(ctx, c, w)
	}
	if err != nil {
		c.Release()
		return nil, err
	}
	return c, nil
}

// filter runs the filters in profile order over the clusters still in the
// running. Filters that returned verdicts from PreFilter cost a few word
// operations; consecutive per-cluster filters are fused into one pass, in
// parallel chunks on large fleets.
func (f *Framework) filter(ctx context.Context, c *Cycle, w *Workload) error {
	state, buf := c.buf.state, c.buf
	snap := state.snap
	remaining := state.AllClusters()
	c.reject(remaining, snap.deleting, DeletingPlugin, statusDeleting)
	for k, pl := range f.filters {
		if remaining.IsEmpty() {
			break
		}
		var verdicts Verdicts
		if pre := f.preFilters[k]; pre != nil {
			res, st := pre.PreFilter(ctx, state, w)
			switch st.Code() {
			case Success:
				if res != nil {
					verdicts = res.Verdicts
				}
			case Skip:
				continue
			case Unschedulable:
				// Every cluster left is rejected, once the filters before
				// this one have had their say.
				verdicts = Verdicts{{Reject: remaining, Status: st}}
			default:
				return fmt.Errorf("PreFilter plugin %s: %w", pl.Name(), st.AsError())
			}
		}
		if verdicts == nil {
			buf.filters = append(buf.filters, k)
			continue
		}
		if err := f.runFilters(ctx, c, w, remaining); err != nil {
			return err
		}
		for _, v := range verdicts {
			c.reject(remaining, v.Reject, pl.Name(), v.Status)
		}
	}
	if err := f.runFilters(ctx, c, w, remaining); err != nil {
		return err
	}
	remaining.ForEach(0, snap.Len(), func(i int) { c.Feasible = append(c.Feasible, int32(i)) })
	return nil
}

// reject records the clusters of remaining that are in set as rejected, and
// removes them from remaining.
func (c *Cycle) reject(remaining, set ClusterSet, plugin string, st *Status) {
	for wi, w := range set {
		hit := remaining[wi] & w
		remaining[wi] &^= hit
		for hit != 0 {
			i := wi<<6 | bits.TrailingZeros64(hit)
			hit &= hit - 1
			c.Rejections[i] = Rejection{Plugin: plugin, Status: st}
		}
	}
}

// runFilters runs the pending per-cluster filters (buf.filters) over the
// clusters of remaining, removing the rejected ones, then clears the list.
// Chunks are whole 64-cluster words, so goroutines never share a word.
func (f *Framework) runFilters(ctx context.Context, c *Cycle, w *Workload, remaining ClusterSet) error {
	buf := c.buf
	if len(buf.filters) == 0 {
		return nil
	}
	state := buf.state
	snap := state.snap
	err := parallelize(ctx, len(remaining), 64, func(lo, hi int) error {
		var err error
		remaining[lo:hi].ForEach(0, (hi-lo)<<6, func(i int) {
			if err != nil {
				return
			}
			i += lo << 6
			ci := snap.At(i)
			for _, k := range buf.filters {
				st := f.filters[k].Filter(ctx, state, w, ci)
				if st == nil || st.code == Success {
					continue
				}
				if st.code != Unschedulable {
					err = fmt.Errorf("filter plugin %s on cluster %s: %w", f.filters[k].Name(), ci.Name, st.AsError())
					return
				}
				c.Rejections[i] = Rejection{Plugin: f.filterNames[k], Status: st}
				remaining.Remove(i)
				return
			}
		})
		return err
	})
	buf.filters = buf.filters[:0]
	return err
}
