package simmember

import (
	"context"
	"fmt"
	"sync"

	"github.com/shepherd-io/shepherd/internal/dev/simmetrics"
)

// startMetrics serves the member's metrics.k8s.io/v1beta1 API from
// simulated usage (package simmetrics) on group until ctx ends. The
// server outlives a control-plane restart: its APIService is stored in
// the member's etcd and the restarted API server routes to it again.
func (m *Member) startMetrics(ctx context.Context, group *sync.WaitGroup) (*simmetrics.Server, error) {
	s, err := simmetrics.Start(ctx, simmetrics.Options{
		Config: m.clientConfig("simmetrics"),
		Logger: m.log.WithName("metrics"),
	})
	if err != nil {
		return nil, fmt.Errorf("starting the metrics API: %w", err)
	}
	group.Go(func() { <-s.Done() })
	return s, nil
}
