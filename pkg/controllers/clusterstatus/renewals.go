package clusterstatus

import (
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
)

// renewals is when this process saw each Pull cluster's Lease renewed, on
// its own clock. An agent stamps renewTime on its clock, which may be off
// from the hub's by more than the Lease's duration: compared with the
// hub's clock, a live agent whose clock is behind would look expired, and
// a stopped one whose clock is ahead alive. So the hub counts a Lease from
// when it first read its current holder and renewTime, as client-go's
// elector does, and the node lifecycle controller with nodes' Leases.
//
// In memory only: after a restart, a Lease is first seen renewed then, so
// an agent that stopped without releasing its Lease keeps its cluster's
// readiness one duration longer, never shorter. The hub reads the Lease
// on its probes (every ProbeInterval), so it may see a renewal up to one
// interval late: a stopped agent is noticed that much later too.
type renewals struct{ m sync.Map } // cluster name -> renewal

// renewal is a Lease's holder and renewTime as last read, and when first
// read so.
type renewal struct {
	holder    string
	renewTime time.Time
	seen      time.Time
}

// seen returns when cluster's lease (renewed at least once) was first read
// with its current holder and renewTime, now if this is the first time.
func (rs *renewals) seen(cluster string, lease *coordinationv1.Lease, now time.Time) time.Time {
	cur := renewal{holder: holderOf(lease), renewTime: lease.Spec.RenewTime.Time, seen: now}
	if v, ok := rs.m.Load(cluster); ok {
		if prev := v.(renewal); prev.holder == cur.holder && prev.renewTime.Equal(cur.renewTime) {
			return prev.seen
		}
	}
	rs.m.Store(cluster, cur)
	return now
}

func (rs *renewals) forget(cluster string) { rs.m.Delete(cluster) }
