package agent

import (
	"context"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/utils/clock"
)

// clockedLock writes the agent's Lease with the times of the agent's
// clock (Options.Clock): client-go's elector stamps the record from a
// clock of its own, which controller-runtime gives no way to set. An
// agent whose clock is off then renews its Lease as a process whose wall
// clock is off does, and the hub must judge it alive all the same: it
// counts a renewal from when it saw renewTime change, on its own clock
// (package clusterstatus), as the agent's other replicas do (client-go's
// elector times a lease from when it observed it).
type clockedLock struct {
	resourcelock.Interface
	clock clock.PassiveClock

	mu sync.Mutex
	// acquired is the elector's time of the last acquisition and the one
	// written for it: a renewal carries the elector's own time forward,
	// which the Lease must show as written.
	acquired [2]metav1.Time
}

func newClockedLock(l resourcelock.Interface, c clock.PassiveClock) *clockedLock {
	return &clockedLock{Interface: l, clock: c}
}

// Create writes an acquisition.
func (l *clockedLock) Create(ctx context.Context, r resourcelock.LeaderElectionRecord) error {
	return l.Interface.Create(ctx, l.stamp(r))
}

// Update writes an acquisition, a renewal or a release.
func (l *clockedLock) Update(ctx context.Context, r resourcelock.LeaderElectionRecord) error {
	return l.Interface.Update(ctx, l.stamp(r))
}

// stamp sets r's renew time, and its acquire time when r is an
// acquisition (or a release: the elector stamps both alike), from the
// clock. A renewal keeps the acquire time written with the acquisition.
func (l *clockedLock) stamp(r resourcelock.LeaderElectionRecord) resourcelock.LeaderElectionRecord {
	now := metav1.NewTime(l.clock.Now())
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case r.AcquireTime.Equal(&r.RenewTime):
		l.acquired = [2]metav1.Time{r.AcquireTime, now}
		r.AcquireTime = now
	case r.AcquireTime.Equal(&l.acquired[0]):
		r.AcquireTime = l.acquired[1]
	}
	r.RenewTime = now
	return r
}
