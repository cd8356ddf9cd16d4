package fleetbench

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestDriveUsesEveryWriter: ticks reach writers that run at once (each
// change below waits until all of them are inside), and ticks that find
// every writer busy are counted as missed, not queued. No timing is
// assumed: the ticks come from the test.
func TestDriveUsesEveryWriter(t *testing.T) {
	for _, tc := range []struct {
		name             string
		writers, ticks   int
		wantDone, missed int
	}{
		{name: "one writer, busy: the rest missed", writers: 1, ticks: 5, wantDone: 1, missed: 4},
		{name: "eight writers hold eight at once", writers: 8, ticks: 8, wantDone: 8, missed: 0},
		{name: "eight writers busy: two missed", writers: 8, ticks: 10, wantDone: 8, missed: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ticks := make(chan time.Time)
			release := make(chan struct{})
			var inside, done atomic.Int32
			var all sync.WaitGroup
			all.Add(min(tc.writers, tc.ticks))
			result := make(chan int, 1)
			go func() {
				result <- drive(context.Background(), ticks, tc.writers, func(context.Context, int) {
					inside.Add(1)
					all.Done()
					<-release
					done.Add(1)
				})
			}()
			sent := 0
			for ; sent < min(tc.writers, tc.ticks); sent++ {
				ticks <- time.Now()
			}
			all.Wait() // every writer is inside a change at once
			for ; sent < tc.ticks; sent++ {
				ticks <- time.Now() // every writer busy: missed
			}
			close(ticks)
			close(release)
			missed := <-result
			if int(done.Load()) != tc.wantDone || missed != tc.missed {
				t.Errorf("done %d, missed %d; want %d, %d", done.Load(), missed, tc.wantDone, tc.missed)
			}
		})
	}
}

// TestDriveStopsWithItsContext: a cancelled churn returns once its writers
// have finished their changes.
func TestDriveStopsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	ticks := make(chan time.Time)
	var running atomic.Int32
	result := make(chan int, 1)
	go func() {
		result <- drive(ctx, ticks, 2, func(context.Context, int) { running.Add(1); defer running.Add(-1) })
	}()
	ticks <- time.Now()
	cancel()
	<-result
	if n := running.Load(); n != 0 {
		t.Errorf("%d changes still running after drive returned", n)
	}
}
