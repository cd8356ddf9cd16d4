package execution

import (
	"fmt"
	"sync"
	"time"
)

// Two guards keep one member that does not answer from holding up the
// others: a breaker and a per-member concurrency limit.

// breaker remembers, per member, that a request just failed to connect, so
// that the member's other Works fail fast for a while instead of each
// spending a request timeout on a member that is down: with W workers and
// a dead member holding many Works, that would stall every member.
type breaker struct {
	backoff time.Duration
	now     func() time.Time

	mu   sync.Mutex
	open map[string]tripped
}

type tripped struct {
	until time.Time
	err   error
}

func newBreaker(backoff time.Duration, now func() time.Time) *breaker {
	return &breaker{backoff: backoff, now: now, open: map[string]tripped{}}
}

// check returns an error while the member's breaker is open.
func (b *breaker) check(cluster string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	t, ok := b.open[cluster]
	if !ok {
		return nil
	}
	if !b.now().Before(t.until) {
		delete(b.open, cluster)
		return nil
	}
	// No timestamp in the message: it ends up in the Work's condition,
	// which should not change on every back-off round.
	return fmt.Errorf("member %q did not answer a moment ago: %w", cluster, t.err)
}

// trip opens the member's breaker for the back-off period.
func (b *breaker) trip(cluster string, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.open[cluster] = tripped{until: b.now().Add(b.backoff), err: err}
}

// reset closes the member's breaker after a successful request.
func (b *breaker) reset(cluster string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.open, cluster)
}

// limiter caps how many Works of one member are reconciled at once, so
// that a member whose requests hang can hold at most that many workers
// while the breaker has not tripped yet; the rest stay free for the other
// members.
type limiter struct {
	max int

	mu       sync.Mutex
	inFlight map[string]int
}

func newLimiter(max int) *limiter { return &limiter{max: max, inFlight: map[string]int{}} }

// acquire takes a slot for the member, or reports that none is free.
func (l *limiter) acquire(cluster string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.inFlight[cluster] >= l.max {
		return false
	}
	l.inFlight[cluster]++
	return true
}

// release gives a slot back.
func (l *limiter) release(cluster string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.inFlight[cluster]--; l.inFlight[cluster] <= 0 {
		delete(l.inFlight, cluster)
	}
}
