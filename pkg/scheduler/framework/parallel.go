package framework

import (
	"context"
	"runtime"
	"sync"
)

// parallelThreshold is the fleet size from which a cycle splits per-cluster
// work across goroutines. Below it, starting goroutines costs more than the
// plugins: a cluster takes tens of nanoseconds to filter.
const parallelThreshold = 256

// parallelize calls work over [0,n) split into contiguous chunks, one per
// CPU when the n units of weight clusters each are many. Work writes only
// into index-addressed slices, so the result does not depend on scheduling;
// the error returned is the one of the lowest chunk, which makes it
// deterministic too.
func parallelize(ctx context.Context, n, weight int, work func(lo, hi int) error) error {
	chunks := runtime.GOMAXPROCS(0)
	if n*weight < parallelThreshold || chunks < 2 {
		return work(0, n)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	size := (n + chunks - 1) / chunks
	errs := make([]error, chunks)
	var wg sync.WaitGroup
	for c := 1; c < chunks; c++ {
		lo, hi := c*size, min(n, (c+1)*size)
		if lo >= hi {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[c] = work(lo, hi)
		}()
	}
	errs[0] = work(0, min(n, size))
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
