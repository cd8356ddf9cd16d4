package workloadaffinity

import (
	"slices"
	"testing"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework/fwtest"
)

func group(name string, peers ...framework.Peer) *framework.PeerGroup {
	return &framework.PeerGroup{Name: name, Peers: peers}
}

func peer(name string, clusters ...string) framework.Peer {
	return framework.Peer{Name: name, Clusters: clusters}
}

func TestFilter(t *testing.T) {
	snap := fwtest.Snapshot(t,
		framework.ClusterInfo{Name: "m1"},
		framework.ClusterInfo{Name: "m2"},
		framework.ClusterInfo{Name: "m3"},
		framework.ClusterInfo{Name: "m4"},
	)
	const shop = "team=shop"
	tests := []struct {
		name           string
		affinity, anti *framework.PeerGroup
		held           []string
		// want maps each rejected cluster to its reason.
		want map[string]string
	}{
		{name: "no groups", want: map[string]string{}},
		{name: "affinity, first of its group: placed freely", affinity: group(shop), want: map[string]string{}},
		{name: "affinity, members not placed yet do not count", affinity: group(shop, peer("Deployment/api")), want: map[string]string{}},
		{name: "affinity follows the placed member", affinity: group(shop, peer("Deployment/api"), peer("Deployment/web", "m1", "m2")),
			want: map[string]string{
				"m3": `not a cluster of affinity group "team=shop" (Deployment/web runs on m1, m2)`,
				"m4": `not a cluster of affinity group "team=shop" (Deployment/web runs on m1, m2)`,
			}},
		{name: "affinity keeps to the clusters every placed member runs on",
			affinity: group(shop, peer("Deployment/api", "m2", "m3"), peer("Deployment/web", "m1", "m2")),
			want: map[string]string{
				"m1": `not a cluster of affinity group "team=shop" (Deployment/api runs on m2, m3; Deployment/web runs on m1, m2)`,
				"m3": `not a cluster of affinity group "team=shop" (Deployment/api runs on m2, m3; Deployment/web runs on m1, m2)`,
				"m4": `not a cluster of affinity group "team=shop" (Deployment/api runs on m2, m3; Deployment/web runs on m1, m2)`,
			}},
		{name: "affinity with members apart: nothing new is eligible",
			affinity: group(shop, peer("Deployment/api", "m3"), peer("Deployment/web", "m1")),
			want: map[string]string{
				"m1": `affinity group "team=shop": its placed members share no cluster (Deployment/api runs on m3; Deployment/web runs on m1)`,
				"m2": `affinity group "team=shop": its placed members share no cluster (Deployment/api runs on m3; Deployment/web runs on m1)`,
				"m3": `affinity group "team=shop": its placed members share no cluster (Deployment/api runs on m3; Deployment/web runs on m1)`,
				"m4": `affinity group "team=shop": its placed members share no cluster (Deployment/api runs on m3; Deployment/web runs on m1)`,
			}},
		{name: "affinity on a member gone from the fleet", affinity: group(shop, peer("Deployment/web", "gone")),
			want: map[string]string{
				"m1": `affinity group "team=shop": its placed members share no cluster (Deployment/web runs on gone)`,
				"m2": `affinity group "team=shop": its placed members share no cluster (Deployment/web runs on gone)`,
				"m3": `affinity group "team=shop": its placed members share no cluster (Deployment/web runs on gone)`,
				"m4": `affinity group "team=shop": its placed members share no cluster (Deployment/web runs on gone)`,
			}},
		{name: "affinity never takes the workload off a cluster it runs on",
			affinity: group(shop, peer("Deployment/web", "m1")), held: []string{"m3"},
			want: map[string]string{
				"m2": `not a cluster of affinity group "team=shop" (Deployment/web runs on m1)`,
				"m4": `not a cluster of affinity group "team=shop" (Deployment/web runs on m1)`,
			}},
		{name: "anti-affinity, alone in its group", anti: group("ha=pipeline"), want: map[string]string{}},
		{name: "anti-affinity keeps off every member's clusters, naming the first member found there",
			anti: group("ha=pipeline", peer("Deployment/a", "m1", "m2"), peer("Deployment/b", "m2", "m3")),
			want: map[string]string{
				"m1": `anti-affinity group "ha=pipeline": Deployment/a runs on m1, m2`,
				"m2": `anti-affinity group "ha=pipeline": Deployment/a runs on m1, m2`,
				"m3": `anti-affinity group "ha=pipeline": Deployment/b runs on m2, m3`,
			}},
		{name: "anti-affinity never takes the workload off a cluster it runs on",
			anti: group("ha=pipeline", peer("Deployment/a", "m1", "m2")), held: []string{"m1"},
			want: map[string]string{"m2": `anti-affinity group "ha=pipeline": Deployment/a runs on m1, m2`}},
		{name: "both terms: the affinity verdict first",
			affinity: group(shop, peer("Deployment/web", "m1", "m2", "m3")),
			anti:     group("ha=pipeline", peer("Deployment/a", "m2", "m4")),
			want: map[string]string{
				"m4": `not a cluster of affinity group "team=shop" (Deployment/web runs on m1, m2, m3)`,
				"m2": `anti-affinity group "ha=pipeline": Deployment/a runs on m2, m4`,
			}},
	}
	p, _ := New(nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &framework.Workload{Namespace: "shop", Name: "cart", AffinityGroup: tt.affinity, AntiAffinityGroup: tt.anti}
			for _, h := range tt.held {
				w.Previous = append(w.Previous, workv1alpha1.TargetCluster{Name: h, State: workv1alpha1.TargetBound})
			}
			got := fwtest.Filter(t, p.(framework.FilterPlugin), snap, w)
			for name, st := range got {
				if st.Message() != tt.want[name] {
					t.Errorf("%s: got %q, want %q", name, st.Message(), tt.want[name])
				}
			}
		})
	}
}

// TestReasonsAreBounded: a large group does not blow up the reason.
func TestReasonsAreBounded(t *testing.T) {
	snap := fwtest.Snapshot(t, framework.ClusterInfo{Name: "c"}, framework.ClusterInfo{Name: "d"})
	var peers []framework.Peer
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		peers = append(peers, peer("Deployment/"+n, "c", "c1", "c2", "c3", "c4", "c5", "c6"))
	}
	w := &framework.Workload{AffinityGroup: group("g=1", peers...)}
	p, _ := New(nil)
	got := fwtest.Filter(t, p.(framework.FilterPlugin), snap, w)
	want := `not a cluster of affinity group "g=1" (Deployment/a runs on c, c1, c2, c3, c4 and 2 more; ` +
		`Deployment/b runs on c, c1, c2, c3, c4 and 2 more; Deployment/c runs on c, c1, c2, c3, c4 and 2 more; and 2 more)`
	if got["c"] != nil || got["d"].Message() != want {
		t.Errorf("got c=%q d=%q, want c passing, d %q", got["c"].Message(), got["d"].Message(), want)
	}
}

// FuzzInvariant: whatever the groups, a cluster the workload holds always
// passes; under affinity, a passing cluster runs every placed member (or
// is held); under anti-affinity, a passing cluster runs no member (or is
// held); and the outcome does not depend on the peers' order.
func FuzzInvariant(f *testing.F) {
	f.Add(uint64(0x1234), uint64(0x5678), uint16(0x3))
	f.Add(uint64(0), uint64(0xffff), uint16(0))
	f.Add(^uint64(0), uint64(1), uint16(0xff))
	names := []string{"m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7"}
	infos := make([]framework.ClusterInfo, len(names))
	for i, n := range names {
		infos[i] = framework.ClusterInfo{Name: n}
	}
	snap := fwtest.Snapshot(f, infos...)
	p, _ := New(nil)
	f.Fuzz(func(t *testing.T, aff, anti uint64, held uint16) {
		// Each byte of aff and anti is one peer's clusters (bit i: m<i>);
		// the low byte of held is the workload's own clusters.
		peersOf := func(bits uint64) []framework.Peer {
			var out []framework.Peer
			for k := range 8 {
				var cs []string
				for i := range 8 {
					if bits>>(8*k+i)&1 == 1 {
						cs = append(cs, names[i])
					}
				}
				out = append(out, peer("Deployment/p"+string(rune('a'+k)), cs...))
			}
			return out
		}
		w := &framework.Workload{AffinityGroup: group("a=1", peersOf(aff)...), AntiAffinityGroup: group("b=1", peersOf(anti)...)}
		isHeld := map[string]bool{}
		for i := range 8 {
			if held>>i&1 == 1 {
				isHeld[names[i]] = true
				w.Previous = append(w.Previous, workv1alpha1.TargetCluster{Name: names[i], State: workv1alpha1.TargetBound})
			}
		}
		got := fwtest.Filter(t, p.(framework.FilterPlugin), snap, w)
		for _, n := range names {
			passes := got[n] == nil
			if isHeld[n] {
				if !passes {
					t.Fatalf("held cluster %s rejected: %s", n, got[n].Message())
				}
				continue
			}
			onEveryPlaced, onAny := true, false
			for _, pr := range w.AffinityGroup.Peers {
				if len(pr.Clusters) > 0 && !slices.Contains(pr.Clusters, n) {
					onEveryPlaced = false
				}
			}
			for _, pr := range w.AntiAffinityGroup.Peers {
				onAny = onAny || slices.Contains(pr.Clusters, n)
			}
			if passes != (onEveryPlaced && !onAny) {
				t.Fatalf("cluster %s passes=%v, but on every placed affinity member=%v, on an anti-affinity member=%v", n, passes, onEveryPlaced, onAny)
			}
		}
		// The peers come sorted by name; reversing them may change which
		// member a reason names, never which clusters pass.
		reversed := func(ps []framework.Peer) []framework.Peer {
			out := slices.Clone(ps)
			slices.Reverse(out)
			return out
		}
		rev := &framework.Workload{Previous: w.Previous,
			AffinityGroup:     group("a=1", reversed(w.AffinityGroup.Peers)...),
			AntiAffinityGroup: group("b=1", reversed(w.AntiAffinityGroup.Peers)...)}
		again := fwtest.Filter(t, p.(framework.FilterPlugin), snap, rev)
		for _, n := range names {
			if (got[n] == nil) != (again[n] == nil) {
				t.Fatalf("cluster %s: the peers' order changed the outcome", n)
			}
		}
	})
}
