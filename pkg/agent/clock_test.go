package agent

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	clocktesting "k8s.io/utils/clock/testing"
)

// recordingLock keeps the last record written.
type recordingLock struct {
	resourcelock.Interface
	written resourcelock.LeaderElectionRecord
}

func (l *recordingLock) Create(_ context.Context, r resourcelock.LeaderElectionRecord) error {
	l.written = r
	return nil
}

func (l *recordingLock) Update(_ context.Context, r resourcelock.LeaderElectionRecord) error {
	l.written = r
	return nil
}

// TestClockedLock: the Lease shows the agent's clock, whatever the
// elector's says: an acquisition's and a renewal's times, and the
// acquisition's time carried by later renewals, by either of the
// elector's paths (its own record of the acquisition, or the Lease's).
func TestClockedLock(t *testing.T) {
	real := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	skew := -25 * time.Second
	agentNow := clocktesting.NewFakePassiveClock(real.Add(skew))
	at := func(d time.Duration) metav1.Time { return metav1.NewTime(real.Add(d)) }
	agentAt := func(d time.Duration) metav1.Time { return metav1.NewTime(real.Add(skew + d)) }
	rec := &recordingLock{}
	l := newClockedLock(rec, agentNow)
	for _, step := range []struct {
		name         string
		elapsed      time.Duration // since the start, on both clocks
		create       bool
		acquire      metav1.Time // what the elector passes
		wantAcquired metav1.Time
	}{
		{"acquired", 0, true, at(0), agentAt(0)},
		{"renewed: the elector's own record of the acquisition", time.Second, false, at(0), agentAt(0)},
		{"renewed: the acquisition read from the Lease", 2 * time.Second, false, agentAt(0), agentAt(0)},
		{"acquired again", 3 * time.Second, false, at(3 * time.Second), agentAt(3 * time.Second)},
		{"renewed after it", 4 * time.Second, false, at(3 * time.Second), agentAt(3 * time.Second)},
	} {
		agentNow.SetTime(real.Add(skew + step.elapsed))
		r := resourcelock.LeaderElectionRecord{HolderIdentity: "a", AcquireTime: step.acquire, RenewTime: at(step.elapsed)}
		write := l.Update
		if step.create {
			write = l.Create
		}
		if err := write(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		if got, want := rec.written.RenewTime, agentAt(step.elapsed); !got.Equal(&want) {
			t.Errorf("%s: renewTime %s, want the agent's %s", step.name, got, want)
		}
		if got := rec.written.AcquireTime; !got.Equal(&step.wantAcquired) {
			t.Errorf("%s: acquireTime %s, want %s", step.name, got, step.wantAcquired)
		}
	}
}
