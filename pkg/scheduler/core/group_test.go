package core

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
)

// render prints groups as "name(score,avail,size)" best first, with the
// parent's name when there is one.
func render(g *grouping, parent *grouping) string {
	parts := make([]string, len(g.groups))
	for i, gr := range g.groups {
		name := gr.Name
		if parent != nil {
			name = parent.groups[gr.Parent].Name + "/" + name
		}
		parts[i] = fmt.Sprintf("%s(%d,%d,%d)", name, gr.Score, gr.AvailableReplicas, gr.Size)
	}
	return strings.Join(parts, " ")
}

func TestGrouping(t *testing.T) {
	cands := []Candidate{
		c("a/aws/us/us-a", 50, 10),
		c("b/aws/us/us-b", 90, 5),
		c("c/aws/eu/eu-a", 90, 7),
		c("d/gcp/us/us-a", 70, Unlimited),
		c("e/gcp//", 60, 3),
		c("f///", 10, 1),
		held(c("g/aws/us/us-b", 20, 2), 4),
	}
	cands[0] = labelled(cands[0], "rack", "r1")
	cands[1] = labelled(cands[1], "rack", "r2")
	cands[3] = labelled(cands[3], "rack", "r1")
	members := []int32{0, 1, 2, 3, 4, 5, 6}
	caps := make([]int64, len(cands))
	for i := range cands {
		caps[i] = capacity(&cands[i])
	}
	topo := newTopology(cands, members, caps, 3)
	prov := topo.field(policyv1alpha1.SpreadByFieldProvider)
	reg := topo.field(policyv1alpha1.SpreadByFieldRegion)
	zone := topo.field(policyv1alpha1.SpreadByFieldZone)
	for _, tc := range []struct {
		name, got, want string
	}{
		{
			// Score is the best cluster's; ties by name; "" is a group.
			name: "providers", got: render(prov, nil),
			want: "aws(90,28,4) gcp(70,1099511627776,2) (10,1,1)",
		},
		{
			// Regions are per provider: gcp/us is not aws/us.
			name: "regions", got: render(reg, prov),
			want: "aws/eu(90,7,1) aws/us(90,21,3) gcp/us(70,1099511627776,1) gcp/(60,3,1) /(10,1,1)",
		},
		{
			name: "zones", got: render(zone, reg),
			want: "eu/eu-a(90,7,1) us/us-b(90,11,2) us/us-a(70,1099511627776,1) /(60,3,1) us/us-a(50,10,1) /(10,1,1)",
		},
		{
			// Clusters without the label form the "" group.
			name: "label", got: render(topo.label("rack"), nil),
			want: "(90,17,4) r2(90,5,1) r1(70,1099511627776,2)",
		},
	} {
		if tc.got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, tc.got, tc.want)
		}
	}
	// Every cluster sits in the group of its own topology.
	for i := range cands {
		z := zone.groups[zone.of[i]]
		r := reg.groups[z.Parent]
		p := prov.groups[r.Parent]
		if got := p.Name + "/" + r.Name + "/" + z.Name; got != cands[i].Provider+"/"+cands[i].Region+"/"+cands[i].Zone {
			t.Errorf("%s grouped under %s", cands[i].Name, got)
		}
	}
}

// Group ranks do not depend on the order of the candidates.
func TestGroupingOrderIndependent(t *testing.T) {
	cands := []Candidate{c("a/p1/r1", 5, 1), c("b/p2/r1", 5, 1), c("c/p1/r2", 5, 1), c("d/p2/r2", 5, 1)}
	want := ""
	for _, perm := range [][]int{{0, 1, 2, 3}, {3, 2, 1, 0}, {1, 3, 0, 2}} {
		cs := make([]Candidate, 0, len(cands))
		for _, i := range perm {
			cs = append(cs, cands[i])
		}
		members := []int32{0, 1, 2, 3}
		topo := newTopology(cs, members, []int64{1, 1, 1, 1}, 2)
		got := render(topo.field(policyv1alpha1.SpreadByFieldRegion), topo.field(policyv1alpha1.SpreadByFieldProvider))
		if want == "" {
			want = got
		}
		if got != want || !strings.HasPrefix(got, "p1/r1") {
			t.Errorf("perm %v: %s, want %s", perm, got, want)
		}
	}
}

func TestTopPrefix(t *testing.T) {
	vals := func() []int64 { return []int64{3, 9, 1, 7, 5} }
	for k, want := range map[int][]int64{0: {0}, 2: {0, 9, 16}, 9: {0, 9, 16, 21, 24, 25}} {
		if got := topPrefix(vals(), k); !slices.Equal(got, want) {
			t.Errorf("topPrefix %d = %v, want %v", k, got, want)
		}
	}
}
