package fleetbench

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestKubeFleetSmall runs the kubefleet scenario end to end at a small
// size on the shared fleet: every placement is placed, the rollouts
// complete, and a restarted controller manager catches up with every
// binding. Times are reported, not asserted.
func TestKubeFleetSmall(t *testing.T) {
	ctx, where := onShared(t, "kubefleet")
	o := KubeFleetOptions{Clusters: 10, Placements: 6, ClustersPerPlacement: 5, Rollouts: 2, Quiet: 2 * time.Second, Timeout: 3 * time.Minute}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	nss := make([]string, o.Placements)
	for p := range nss {
		nss[p] = placementNamespace(where.ns, p)
	}
	// Registered after onShared's cleanup, so it runs first: the
	// placements go while their clusters and the simulator are there.
	t.Cleanup(func() { removeTemplates(t, shared.Fleet(t).Hub, nss...) })
	rep, err := kubeFleet(ctx, o, where)
	if err != nil {
		t.Fatal(err)
	}
	// A Work per cluster for the ConfigMap and for the Deployment; the
	// namespace has none.
	if rep.WorksPerPair != 2 {
		t.Errorf("%.2f Works per placement–cluster pair, want 2", rep.WorksPerPair)
	}
	if !(rep.PlacementP50Seconds > 0 && rep.PlacementP50Seconds <= rep.PlacementP90Seconds && rep.PlacementP90Seconds <= rep.PlacementMaxSeconds) {
		t.Errorf("placement latency p50 %v, p90 %v, max %v: not measured or out of order", rep.PlacementP50Seconds, rep.PlacementP90Seconds, rep.PlacementMaxSeconds)
	}
	if rep.RolloutAloneSeconds <= 0 || rep.ConcurrentAllSeconds < rep.ConcurrentMaxSeconds {
		t.Errorf("rollouts: alone %v s, at once %v s in all, the longest %v s", rep.RolloutAloneSeconds, rep.ConcurrentAllSeconds, rep.ConcurrentMaxSeconds)
	}
	checkCatchUp(t, rep.CatchUp, 2*o.Placements)
	if rep.EtcdAllocatedBytes <= 0 || rep.Heap.HubBytes <= 0 || rep.Memory.RSSBytes == 0 {
		t.Errorf("etcd %d bytes, hub heap %v bytes, RSS %d bytes: not measured", rep.EtcdAllocatedBytes, rep.Heap.HubBytes, rep.Memory.RSSBytes)
	}
	t.Logf("%+v", *rep)
	t.Logf("catch-up: %+v", *rep.CatchUp)
}

// TestKarmadaStartupSmall runs the karmada-startup scenario end to end at
// a small size on the shared fleet (thirty workloads: placing them and
// removing them afterwards take most of its time).
func TestKarmadaStartupSmall(t *testing.T) {
	ctx, where := onShared(t, "karmada")
	o := KarmadaStartupOptions{Workloads: 30, Clusters: 2, Quiet: 2 * time.Second, Timeout: 3 * time.Minute}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	rep, err := karmadaStartup(ctx, o, where)
	if err != nil {
		t.Fatal(err)
	}
	// Each Deployment and its ConfigMap, on each cluster.
	if want := 2 * o.Workloads * o.Clusters; rep.Works != want {
		t.Errorf("%d Works, want %d", rep.Works, want)
	}
	checkCatchUp(t, rep.CatchUp, 2*o.Workloads)
	t.Logf("%+v", *rep)
	t.Logf("catch-up: %+v", *rep.CatchUp)
}

// checkCatchUp: the new manager went through at least the run's bindings.
func checkCatchUp(t *testing.T, c *CatchUpReport, bindings int) {
	t.Helper()
	if c.Bindings < bindings {
		t.Errorf("the hub held %d bindings at the restart, want at least %d", c.Bindings, bindings)
	}
	i := slices.IndexFunc(c.Reconciles, func(r ReconcileCount) bool { return r.Controller == bindingController })
	if i < 0 || c.Reconciles[i].Total < c.Bindings {
		t.Errorf("the binding controller's reconciles after the restart: %+v, want at least %d", c.Reconciles, c.Bindings)
	}
}

func TestPeerOptionsValidate(t *testing.T) {
	kf := KubeFleetOptions{Clusters: 20, Placements: 20, ClustersPerPlacement: 5, Rollouts: 5, Quiet: time.Second, Timeout: time.Minute}
	ks := KarmadaStartupOptions{Workloads: 10, Clusters: 2, Quiet: time.Second, Timeout: time.Minute}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"no clusters", with(kf, func(o *KubeFleetOptions) { o.Clusters = 0 }).Validate(), "--clusters 0: at least 1"},
		{"no placements", with(kf, func(o *KubeFleetOptions) { o.Placements = 0 }).Validate(), "--placements 0: at least 1"},
		{"more per placement than clusters", with(kf, func(o *KubeFleetOptions) { o.ClustersPerPlacement = 21 }).Validate(), "--clusters-per-placement 21: at least 1 and at most --clusters (20)"},
		{"none per placement", with(kf, func(o *KubeFleetOptions) { o.ClustersPerPlacement = 0 }).Validate(), "--clusters-per-placement 0"},
		{"more rollouts than placements", with(kf, func(o *KubeFleetOptions) { o.Rollouts = 21 }).Validate(), "--rollouts 21: at least 1 and at most --placements (20)"},
		{"no rollouts", with(kf, func(o *KubeFleetOptions) { o.Rollouts = 0 }).Validate(), "--rollouts 0"},
		{"no quiet window", with(kf, func(o *KubeFleetOptions) { o.Quiet = 0 }).Validate(), "--quiet 0s: must be positive"},
		{"quiet past the timeout", with(kf, func(o *KubeFleetOptions) { o.Quiet = time.Hour }).Validate(), "--quiet 1h0m0s: must be shorter than --timeout (1m0s)"},
		{"no timeout", with(kf, func(o *KubeFleetOptions) { o.Timeout = 0 }).Validate(), "--timeout 0s: must be positive"},
		{"no workloads", with(ks, func(o *KarmadaStartupOptions) { o.Workloads = 0 }).Validate(), "--workloads 0: at least 1"},
		{"karmada without clusters", with(ks, func(o *KarmadaStartupOptions) { o.Clusters = -1 }).Validate(), "--clusters -1: at least 1"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: err %v, want it to say %q", tc.name, tc.err, tc.want)
		}
	}
	if err := kf.Validate(); err != nil {
		t.Errorf("a valid kubefleet size refused: %v", err)
	}
	if err := ks.Validate(); err != nil {
		t.Errorf("a valid karmada-startup size refused: %v", err)
	}
}

func with[T any](o T, change func(*T)) T {
	change(&o)
	return o
}

// TestClusterGroups: the clusters fall in groups in order of their names,
// the same every time; each placement picks a whole group, the groups in
// turn; within a group the stages take 20, 30 and 50 % of it.
func TestClusterGroups(t *testing.T) {
	for _, tc := range []struct {
		clusters, size, placements int
		// wantStages are the clusters of each stage in every group.
		wantStages [3]int
		wantLeft   int
	}{
		{clusters: 1000, size: 100, placements: 1000, wantStages: [3]int{20, 30, 50}},
		{clusters: 20, size: 5, placements: 20, wantStages: [3]int{1, 2, 2}},
		{clusters: 7, size: 3, placements: 4, wantStages: [3]int{1, 1, 1}, wantLeft: 1},
		{clusters: 3, size: 1, placements: 2, wantStages: [3]int{1, 0, 0}},
	} {
		labels := kubeFleetLabels("run", KubeFleetOptions{Clusters: tc.clusters, ClustersPerPlacement: tc.size})
		groups := map[string][3]int{}
		left := 0
		for i := range tc.clusters {
			l := labels(i)
			if l[runLabel] != "run" {
				t.Fatalf("cluster %d of %d: labels %v lack the run's", i, tc.clusters, l)
			}
			if !maps.Equal(l, labels(i)) {
				t.Fatalf("cluster %d of %d: labelled %v, then %v", i, tc.clusters, l, labels(i))
			}
			g, ok := l[peerGroupLabel]
			if !ok {
				left++
				continue
			}
			c := groups[g]
			c[slices.Index([]string{stageName(0), stageName(1), stageName(2)}, l[rolloutStageLabel])]++
			groups[g] = c
		}
		if len(groups) != tc.clusters/tc.size || left != tc.wantLeft {
			t.Errorf("%d clusters in groups of %d: %d groups and %d left over, want %d and %d", tc.clusters, tc.size, len(groups), left, tc.clusters/tc.size, tc.wantLeft)
		}
		for g, c := range groups {
			if c != tc.wantStages {
				t.Errorf("%d clusters in groups of %d: %s has stages of %v, want %v", tc.clusters, tc.size, g, c, tc.wantStages)
			}
		}
		picked := map[string]int{}
		for p := range tc.placements {
			picked[groupName(placementGroup(p, tc.clusters, tc.size))]++
		}
		for g := range groups {
			if n := picked[g]; n < tc.placements/len(groups) || n > tc.placements/len(groups)+1 {
				t.Errorf("%d placements over %d groups: %s picked by %d", tc.placements, len(groups), g, n)
			}
		}
		if len(picked) > len(groups) {
			t.Errorf("placements pick groups %v, but the groups are %v", picked, groups)
		}
	}
}

// TestBusy: what keeps a restarted manager from having caught up, in the
// order it is checked.
func TestBusy(t *testing.T) {
	left := map[string]float64{bindingController: 3, "detector": 1}
	for _, tc := range []struct {
		name       string
		reconciled float64
		load       map[string]float64
		writes     float64
		want       string
	}{
		{"caches syncing", 0, nil, 0, "reconciled 0 times, the hub holds 10 bindings"},
		{"queue not empty", 10, map[string]float64{bindingController: 4, "detector": 1}, 0, "controller " + bindingController + " has 1 requests"},
		{"what the stopped manager left does not count", 12, map[string]float64{bindingController: 3, "detector": 1}, 0, ""},
		{"a periodic controller does not count", 12, map[string]float64{"cluster-status": 5}, 0, ""},
		{"still writing", 12, nil, 2, "served 2 writes"},
	} {
		got := busy(10, tc.reconciled, tc.load, left, tc.writes)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestDurationStats(t *testing.T) {
	ds := []time.Duration{9 * time.Second, time.Second, 5 * time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second, 6 * time.Second, 7 * time.Second, 8 * time.Second, 10 * time.Second}
	p50, p90, maxS := durationStats(ds)
	if p50 != 5 || p90 != 9 || maxS != 10 {
		t.Errorf("p50 %v, p90 %v, max %v of 1..10 s, want 5, 9, 10 (nearest rank)", p50, p90, maxS)
	}
	if p50, p90, maxS := durationStats(nil); p50 != 0 || p90 != 0 || maxS != 0 {
		t.Errorf("no durations: %v %v %v, want zeros", p50, p90, maxS)
	}
}
