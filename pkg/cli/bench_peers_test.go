package cli

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/shepherd-io/shepherd/internal/bench/fleetbench"
)

// TestBenchPeersRefuses: a scenario or a size that makes no sense is
// refused before anything starts, with the flag named.
func TestBenchPeersRefuses(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, `required flag(s) "scenario" not set`},
		{[]string{"--scenario", "fleet"}, `--scenario "fleet": use kubefleet or karmada-startup`},
		{[]string{"--scenario", "kubefleet", "--clusters", "0"}, "--clusters 0: at least 1"},
		{[]string{"--scenario", "kubefleet", "--clusters", "20", "--clusters-per-placement", "21"}, "--clusters-per-placement 21: at least 1 and at most --clusters (20)"},
		{[]string{"--scenario", "kubefleet", "--placements", "0"}, "--placements 0: at least 1"},
		{[]string{"--scenario", "kubefleet", "--placements", "10", "--rollouts", "11"}, "--rollouts 11: at least 1 and at most --placements (10)"},
		{[]string{"--scenario", "kubefleet", "--workloads", "10"}, "--workloads is for --scenario karmada-startup, not kubefleet"},
		{[]string{"--scenario", "karmada-startup", "--rollouts", "3"}, "--rollouts is for --scenario kubefleet, not karmada-startup"},
		{[]string{"--scenario", "karmada-startup", "--workloads", "0"}, "--workloads 0: at least 1"},
		{[]string{"--scenario", "karmada-startup", "--clusters", "0"}, "--clusters 0: at least 1"},
		{[]string{"--scenario", "karmada-startup", "--quiet", "0s"}, "--quiet 0s: must be positive"},
		{[]string{"--scenario", "karmada-startup", "--quiet", "1m", "--timeout", "30s"}, "--quiet 1m0s: must be shorter than --timeout (30s)"},
		{[]string{"--scenario", "kubefleet", "-o", "yaml"}, `--output "yaml" is not supported`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, err := execute(t, newBenchCommand(), append([]string{"peers"}, tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to say %q", err, tc.want)
			}
		})
	}
}

// TestBenchPeersDefaults: each scenario runs at its peer's size unless
// told otherwise, --clusters included.
func TestBenchPeersDefaults(t *testing.T) {
	for _, tc := range []struct {
		args           []string
		wantKF, wantKS int
	}{
		{[]string{"--scenario", "kubefleet"}, fleetbench.DefaultKubeFleetClusters, fleetbench.DefaultKarmadaClusters},
		{[]string{"--scenario", "karmada-startup"}, fleetbench.DefaultKubeFleetClusters, fleetbench.DefaultKarmadaClusters},
		{[]string{"--scenario", "karmada-startup", "--clusters", "3"}, 3, 3},
	} {
		var o peersOptions
		f := pflag.NewFlagSet("peers", pflag.ContinueOnError)
		o.addFlags(f)
		if err := f.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if err := o.settle(f); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if o.kf.Clusters != tc.wantKF || o.ks.Clusters != tc.wantKS {
			t.Errorf("%v: clusters %d (kubefleet), %d (karmada-startup), want %d, %d", tc.args, o.kf.Clusters, o.ks.Clusters, tc.wantKF, tc.wantKS)
		}
		if o.kf.Placements != fleetbench.DefaultKubeFleetPlacements || o.ks.Workloads != fleetbench.DefaultKarmadaWorkloads {
			t.Errorf("%v: %d placements, %d workloads: not the peers' sizes", tc.args, o.kf.Placements, o.ks.Workloads)
		}
	}
}

func TestPeersReports(t *testing.T) {
	catchUp := &fleetbench.CatchUpReport{Bindings: 2000, StopSeconds: 0.5, CaughtUpSeconds: 42.25, QuietSeconds: 5,
		Reconciles: []fleetbench.ReconcileCount{{Controller: "binding-resourcebinding", Total: 2100}},
		Writes:     []fleetbench.RequestCount{{Verb: "PATCH", Resource: "resourcebindings", Subresource: "status", Count: 30}}}
	kf := &fleetbench.KubeFleetReport{Clusters: 1000, Placements: 1000, ClustersPerPlacement: 100, Rollouts: 100,
		CreateSeconds: 20, PlacedSeconds: 300, PlacementP50Seconds: 12.5, PlacementP90Seconds: 20, PlacementMaxSeconds: 31,
		WorksPerPair: 2, EtcdAllocatedBytesPerPair: 9 << 10, EtcdInUseBytesPerPair: 8 << 10,
		Footprint: fleetbench.Footprint{EtcdAllocatedBytes: 2 << 30, Heap: fleetbench.LiveHeap{LiveBytes: 6 << 30, HubBytes: 4 << 30, OtherBytes: 2 << 30},
			Memory: fleetbench.MemoryStats{RSSBytes: 9 << 30}},
		RolloutAloneSeconds: 15, ConcurrentAllSeconds: 60, ConcurrentP50Seconds: 40, ConcurrentP90Seconds: 55, ConcurrentMaxSeconds: 59,
		Restart: fleetbench.Restart{CatchUp: catchUp, PeakRSSBytes: 10 << 30}}
	var text strings.Builder
	if err := printKubeFleet(&text, kf); err != nil {
		t.Fatal(err)
	}
	ks := &fleetbench.KarmadaStartupReport{Workloads: 30000, Clusters: 2, Works: 120000, PlacedSeconds: 900, CreateSeconds: 100, Restart: fleetbench.Restart{CatchUp: catchUp}}
	if err := printKarmadaStartup(&text, ks); err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, line := range strings.Split(text.String(), "\n") {
		rows = append(rows, strings.Join(strings.Fields(line), " "))
	}
	for _, want := range []string{
		"kubefleet: 1000 placements of 100 clusters each, over 1000 simulated Pull clusters",
		"placed: all after 300.0 s (created in 20.0 s); per placement p50 12.5 s, p90 20.0 s, max 31.0 s",
		"per placement-cluster pair: 2.00 Works, 9 KiB of etcd (8 KiB in use)",
		"memory once placed: live heap 6 GiB (hub 4 GiB, controllers and simulator 2 GiB), RSS 9 GiB (peak at the end 10 GiB); etcd 2 GiB",
		"rollout alone: 15.0 s; 100 at once: all after 60.0 s, each p50 40.0 s, p90 55.0 s, max 59.0 s",
		"controller manager restarted over 2000 bindings: stopped in 0.5 s, caught up 42.2 s after its start (then quiet for 5 s)",
		"PATCH resourcebindings/status 30",
		"binding-resourcebinding 2100",
		"karmada-startup: 30000 Deployments, each with a ConfigMap dependency, on 2 simulated Pull clusters",
		"placed: 120000 Works applied after 900.0 s (created in 100.0 s)",
	} {
		if !slices.Contains(rows, want) {
			t.Errorf("text report lacks the line %q:\n%s", want, text.String())
		}
	}
	data, err := json.Marshal(kf)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"placementP50Seconds", "placementP90Seconds", "worksPerPair", "etcdAllocatedBytes", "etcdAllocatedBytesPerPair", "rolloutAloneSeconds",
		"concurrentAllSeconds", "catchUp", "heap", "peakRSSBytes"} {
		if _, ok := got[key]; !ok {
			t.Errorf("JSON lacks %q: %s", key, data)
		}
	}
}

func TestBytesText(t *testing.T) {
	for _, tc := range []struct {
		n    float64
		want string
	}{{0, "0 B"}, {1023, "1023 B"}, {1536, "1.5 KiB"}, {9 << 20, "9 MiB"}, {5 << 40, "5 TiB"}} {
		if got := bytesText(tc.n); got != tc.want {
			t.Errorf("bytesText(%v) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
