// Package firstseen remembers when this process first read each value of
// something another process writes, on this process's own clock.
//
// A time another process stamped (a Pull agent's Lease renewTime, the
// lastTransitionTime of a condition it reports, its pod metrics'
// sampleTime) is on that process's clock, which may be off from this
// one's by any amount: a wait counted from it on this clock ends at once
// when the other clock is behind by more than the wait, and late when it
// is ahead. The time this process first read the value is on its own
// clock, so a wait counted from it is as long as it is meant to be, plus
// at most the interval between two reads. Client-go's leader elector
// counts a Lease so, and the node lifecycle controller a node's Lease.
//
// In memory only: after a restart nothing has been seen, and the first
// value read of a key may have been there for any time before. Since says
// so (changed is false), and each user decides what that means for its
// wait: the safe side differs (a Lease's readiness, a taint's grace and a
// pod metrics sample's age are given in full, since ending them acts on a
// failure or leaves a live member out; endpoints whose age is unknown get
// no grace, since keeping withdrawn endpoints is the act).
package firstseen

import (
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Tracker is when each key's current value was first read. The zero
// Tracker is ready to use; it is safe for concurrent use.
type Tracker[V comparable] struct {
	mu sync.Mutex
	m  map[string]sighting[V]
}

type sighting[V comparable] struct {
	value V
	at    time.Time
	// changed: a read before at found another value.
	changed bool
}

// Since returns when key was first read with value v (now, if this read
// is the first), and whether this process saw it change to v: false when
// v is the first value it read of key (since it started, or forgot key),
// which may have been there for any time before.
func (t *Tracker[V]) Since(key string, v V, now time.Time) (at time.Time, changed bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	prev, ok := t.m[key]
	if ok && prev.value == v {
		return prev.at, prev.changed
	}
	if t.m == nil {
		t.m = map[string]sighting[V]{}
	}
	t.m[key] = sighting[V]{value: v, at: now, changed: ok}
	return now, ok
}

// Forget drops key: its next value read counts as a first.
func (t *Tracker[V]) Forget(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.m, key)
}

// Conditions is when each key's condition was first read with its
// current status and lastTransitionTime: when the reader saw it
// transition, on the reader's clock.
type Conditions struct{ t Tracker[condition] }

// condition is what makes a condition's transition: its status and
// lastTransitionTime (in nanoseconds: a time's location must not make two
// reads differ).
type condition struct {
	status         metav1.ConditionStatus
	lastTransition int64
}

// Since is Tracker.Since of c's status and lastTransitionTime.
func (cs *Conditions) Since(key string, c *metav1.Condition, now time.Time) (at time.Time, changed bool) {
	return cs.t.Since(key, condition{status: c.Status, lastTransition: c.LastTransitionTime.UnixNano()}, now)
}

// Forget is Tracker.Forget.
func (cs *Conditions) Forget(key string) { cs.t.Forget(key) }
