package fleetbench

import (
	"strings"
	"testing"
	"time"
)

// TestRunRolloutSmall runs the rollout benchmark end to end on a few
// simulated clusters (on the package's shared fleet): the change completes through every stage, no
// sooner than the floor, and its writes are counted. Times are reported,
// not asserted beyond the floor no rollout may beat.
func TestRunRolloutSmall(t *testing.T) {
	ctx, where := onShared(t, "rollout")
	o := RolloutOptions{Clusters: 12, Stages: 3, MinSuccessSeconds: 1, WaitSeconds: 1, Timeout: 3 * time.Minute}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	rep, err := rollout(ctx, o, where)
	if err != nil {
		t.Fatal(err)
	}
	if rep.FloorSeconds != 5 {
		t.Errorf("floor %v s, want 3 x 1 s + 2 x 1 s", rep.FloorSeconds)
	}
	if rep.RatioToFloor < 1 {
		t.Errorf("complete after %.2f s, sooner than the floor of %v s", rep.CompleteSeconds, rep.FloorSeconds)
	}
	if len(rep.StageSeconds) != 3 {
		t.Errorf("stage times %v, want 3", rep.StageSeconds)
	}
	works := 0.0
	for _, w := range rep.Writes {
		if w.Resource == "works" && w.Subresource == "" {
			works += w.PerWorkload
		}
	}
	// Each cluster's Work is written once with the new image.
	if works < 1 {
		t.Errorf("%.2f Work writes per cluster, want at least 1: %+v", works, rep.Writes)
	}
	t.Logf("%+v", *rep)
}

func TestRolloutOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		o    RolloutOptions
		want string
	}{
		{RolloutOptions{Clusters: 10, Stages: 11, MinSuccessSeconds: 1, Timeout: time.Minute}, "--stages 11"},
		{RolloutOptions{Clusters: 10, Stages: 2, Timeout: time.Minute}, "both 0"},
		{RolloutOptions{Clusters: 10, Stages: 2, MinSuccessSeconds: 1}, "--timeout 0s"},
	} {
		if err := tc.o.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err %v, want %q", tc.o, err, tc.want)
		}
	}
	if err := (RolloutOptions{Clusters: 10, Stages: 10, WaitSeconds: 1, Timeout: time.Minute}).Validate(); err != nil {
		t.Errorf("a valid size refused: %v", err)
	}
	// Stages divide the clusters in order, equally.
	counts := map[int]int{}
	for i := range 1000 {
		counts[stageOf(i, 1000, 10)]++
	}
	for s := range 10 {
		if counts[s] != 100 {
			t.Errorf("stage %d has %d clusters, want 100", s, counts[s])
		}
	}
}
