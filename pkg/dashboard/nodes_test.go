package dashboard_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/dashboard"
	"github.com/shepherd-io/shepherd/pkg/dashboard/dashboardtest"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
)

var ng = dashboardtest.NodeGroup

// A node model reads as groups in the order stored, "count × room", the
// first few spelled out and the rest counted; a malformed one is said to
// be unused, as the scheduler does not use it.
func TestNodeModelOf(t *testing.T) {
	gpu := ng(2, "8", "64Gi", 110)
	gpu.Free["nvidia.com/gpu"] = resource.MustParse("4")
	gpu.Free[corev1.ResourceEphemeralStorage] = resource.MustParse("100Gi")
	gpu.Free["hugepages-2Mi"] = resource.MustParse("0")
	noPods := ng(1, "250m", "512Mi", 0)
	delete(noPods.Free, corev1.ResourcePods)
	many := make([]clusterv1alpha1.NodeGroup, clusterv1alpha1.MaxNodeGroups+1)
	for i := range many {
		many[i] = ng(1, "1", "1Gi", 10)
	}
	for _, tc := range []struct {
		name     string
		groups   []clusterv1alpha1.NodeGroup
		want     string
		reported bool
	}{
		{"not reported", nil, "not reported", false},
		{"one group", []clusterv1alpha1.NodeGroup{ng(6, "1500m", "8Gi", 110)}, "6 × 1.5 CPU / 8 GiB / 110 pods", true},
		{"in the order stored", []clusterv1alpha1.NodeGroup{ng(1, "2", "7.55Gi", 30), ng(4, "16", "60Gi", 100)},
			"1 × 2 CPU / 7.5 GiB / 30 pods; 4 × 16 CPU / 60 GiB / 100 pods", true},
		{"extended resources by name, none left out", []clusterv1alpha1.NodeGroup{gpu},
			"2 × 8 CPU / 64 GiB / 110 pods / 100 GiB ephemeral-storage / 4 nvidia.com/gpu", true},
		{"what a node does not report it has none of", []clusterv1alpha1.NodeGroup{noPods}, "1 × 0.25 CPU / 512 MiB / 0 pods", true},
		{"capped, the rest counted", []clusterv1alpha1.NodeGroup{ng(1, "1", "1Gi", 10), ng(2, "2", "2Gi", 20), ng(3, "3", "3Gi", 30), ng(4, "4", "4Gi", 40), ng(5, "5", "5Gi", 50)},
			"1 × 1 CPU / 1 GiB / 10 pods; 2 × 2 CPU / 2 GiB / 20 pods; 3 × 3 CPU / 3 GiB / 30 pods; +2 more groups, 9 nodes", true},
		{"one more group of one node", []clusterv1alpha1.NodeGroup{ng(1, "1", "1Gi", 10), ng(1, "1", "1Gi", 10), ng(1, "1", "1Gi", 10), ng(1, "2", "1Gi", 10)},
			"1 × 1 CPU / 1 GiB / 10 pods; 1 × 1 CPU / 1 GiB / 10 pods; 1 × 1 CPU / 1 GiB / 10 pods; +1 more group, 1 node", true},
		{"a group of no nodes", []clusterv1alpha1.NodeGroup{ng(1, "1", "1Gi", 10), ng(0, "1", "1Gi", 10)}, "malformed, not used", false},
		{"more groups than the API allows", many, "malformed, not used", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := dashboard.NodeModelOf(tc.groups, dashboard.ShownNodeGroups)
			if got := m.String(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if m.Reported() != tc.reported {
				t.Errorf("reported %t, want %t", m.Reported(), tc.reported)
			}
		})
	}
}

// The fleet page's cluster table shows each cluster's node model.
func TestFleetShowsNodeModel(t *testing.T) {
	bare := dashboardtest.Cluster("bare", "", "", "")
	bare.Status.ResourceSummary = nil
	s := &dashboard.Snapshot{Clusters: []*clusterv1alpha1.Cluster{
		dashboardtest.WithNodes(dashboardtest.Cluster("frag", "", "", ""), ng(6, "1500m", "8Gi", 110)),
		dashboardtest.Cluster("sums", "", "", ""),
		bare,
	}}
	got := map[string]string{}
	for _, c := range dashboard.BuildFleet(s, nil).Clusters {
		got[c.Name] = c.Nodes.String()
	}
	for _, tc := range []struct{ cluster, want string }{
		{"frag", "6 × 1.5 CPU / 8 GiB / 110 pods"},
		{"sums", "not reported"},
		{"bare", "not reported"},
	} {
		if got[tc.cluster] != tc.want {
			t.Errorf("%s: %q, want %q", tc.cluster, got[tc.cluster], tc.want)
		}
	}
	ts, c := serve(t, dashboard.Options{})
	_, body := get(t, c, ts.URL+"/")
	for _, want := range []string{
		`<th scope="col">Nodes × room left on each</th>`,
		`<li>2 × 8 CPU / 32 GiB / 100 pods</li><li>2 × 4 CPU / 16 GiB / 90 pods</li>`,
		`<li class="muted">&#43;3 more groups, 3 nodes</li>`, // "+", escaped
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the fleet page lacks %q", want)
		}
	}
}

// nodeFleet is three clusters with 9 free CPUs each: "frag" on six nodes of
// 1.5 CPU, "big" on one of 9, "sums" without a node model.
func nodeFleet() *dashboard.Snapshot {
	free := func(c *clusterv1alpha1.Cluster) *clusterv1alpha1.Cluster {
		c.Status.ResourceSummary.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("9"),
			corev1.ResourceMemory: resource.MustParse("48Gi"), corev1.ResourcePods: resource.MustParse("660")}
		c.Status.ResourceSummary.Allocated = nil
		c.Status.APIEnablements = []clusterv1alpha1.APIEnablement{{GroupVersion: "apps/v1", Resources: []clusterv1alpha1.APIResource{{Name: "deployments", Kind: "Deployment"}}}}
		return c
	}
	return &dashboard.Snapshot{Clusters: []*clusterv1alpha1.Cluster{
		dashboardtest.WithNodes(free(dashboardtest.Cluster("frag", "", "", "")), ng(6, "1500m", "8Gi", 110)),
		dashboardtest.WithNodes(free(dashboardtest.Cluster("big", "", "", "")), ng(1, "9", "48Gi", 660)),
		free(dashboardtest.Cluster("sums", "", "", "")),
	}}
}

// workload is a Deployment of replicas each requesting cpu, placed as
// placement says, on targets now.
func workload(replicas int32, cpu string, placement *policyv1alpha1.Placement, targets ...workv1alpha1.TargetCluster) dashboard.Binding {
	b := dashboardtest.Binding("ns", "app", "p", targets...)
	rb := b.Obj.(*workv1alpha1.ResourceBinding)
	rb.Spec.Replicas, rb.Spec.Placement = replicas, placement
	rb.Spec.ReplicaRequirements = &workv1alpha1.ReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}
	return b
}

// Explaining every cluster says where room on any one node limited how
// many replicas fit, and shows that cluster's nodes; nowhere else.
func TestExplainNodeRoom(t *testing.T) {
	duplicated := &policyv1alpha1.Placement{}
	aggregated := &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
		ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceAggregated,
	}}
	for _, tc := range []struct {
		name string
		b    dashboard.Binding
		// want is the FitsText of each cluster the nodes limited.
		want map[string]string
		// filtered clusters, by resourcefit for room on any one node.
		filtered []string
	}{
		{"8 replicas of 1 CPU: the sums hold 9, frag's nodes 6", workload(8, "1", duplicated),
			map[string]string{"frag": "6 replicas fit node by node"}, []string{"frag"}},
		{"a replica of 2 CPU fits no node of 1.5", workload(1, "2", duplicated),
			map[string]string{"frag": "no replica fits on any one node"}, []string{"frag"}},
		{"4 replicas fit frag's nodes", workload(4, "1", duplicated), map[string]string{}, nil},
		{"8 replicas, 3 already on frag, whose nodes take 6 more", workload(8, "1", duplicated, target("frag", 3)), map[string]string{}, nil},
		{"8 replicas, 1 already on frag: 7 is too few", workload(8, "1", duplicated, target("frag", 1)),
			map[string]string{"frag": "7 replicas fit node by node"}, []string{"frag"}},
		{"divided: fewer fit frag than the workload has, though not filtered", workload(8, "1", aggregated),
			map[string]string{"frag": "6 replicas fit node by node"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := dashboard.Explain(context.Background(), interpreter.Builtin(), nodeFleet(), tc.b)
			if err != nil {
				t.Fatal(err)
			}
			if len(v.Workloads) != 1 || len(v.Workloads[0].Decisions) != 3 {
				t.Fatalf("workloads %+v, want one with 3 decisions", v.Workloads)
			}
			got := map[string]string{}
			var filtered []string
			for _, d := range v.Workloads[0].Decisions {
				if d.NodeRoom != nil {
					got[d.Cluster] = d.NodeRoom.FitsText()
					if m := d.NodeRoom.Nodes.String(); m != "6 × 1.5 CPU / 8 GiB / 110 pods" {
						t.Errorf("%s: nodes %q", d.Cluster, m)
					}
				}
				if d.FilteredBy != "" {
					if !dashboard.NamesNodeRoom(d.Reason) {
						t.Errorf("%s filtered by %s: %q, not for room on any one node", d.Cluster, d.FilteredBy, d.Reason)
					}
					filtered = append(filtered, d.Cluster)
				}
			}
			if !equalMaps(got, tc.want) {
				t.Errorf("limited by the nodes: %v, want %v", got, tc.want)
			}
			if strings.Join(filtered, ",") != strings.Join(tc.filtered, ",") {
				t.Errorf("filtered %v, want %v", filtered, tc.filtered)
			}
		})
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// A decision as the scheduler recorded it is marked when its reason names
// room on any one node, with the cluster's nodes as they are now.
func TestRecordedDecisionNodeRoom(t *testing.T) {
	for _, tc := range []struct {
		reason string
		marked bool
	}{
		{"insufficient room on any one node for all replicas", true},
		{"insufficient room on any one node for one replica", true},
		{"insufficient cpu for all replicas", false},
		{"selected", false},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			s := nodeFleet()
			b := workload(8, "1", &policyv1alpha1.Placement{})
			b.Obj.GetBindingStatus().SchedulingDecisions = []workv1alpha1.ClusterDecision{{ClusterName: "frag", Reason: tc.reason}}
			s.Bindings = []dashboard.Binding{b}
			d := dashboard.BuildWorkload(interpreter.Builtin(), s, b).Decisions[0]
			if (d.NodeRoom != nil) != tc.marked {
				t.Fatalf("marked %t, want %t", d.NodeRoom != nil, tc.marked)
			}
			if d.NodeRoom != nil && (d.NodeRoom.FitsText() != "" || d.NodeRoom.Nodes.String() != "6 × 1.5 CPU / 8 GiB / 110 pods") {
				t.Errorf("marked with %q, nodes %q", d.NodeRoom.FitsText(), d.NodeRoom.Nodes.String())
			}
		})
	}
}

// The workload page, explaining every cluster, says so where the nodes
// limited the fit.
func TestExplainPageShowsNodeRoom(t *testing.T) {
	s := nodeFleet()
	s.Bindings = []dashboard.Binding{workload(8, "1", &policyv1alpha1.Placement{})}
	ts, c := serve(t, dashboard.Options{Source: &dashboardtest.Source{Snap: s}})
	code, body := get(t, c, ts.URL+"/workloads/ns/ns/app-deployment?explain=all")
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	want := `insufficient room on any one node for all replicas<p class="noderoom"><strong>Limited by room on any one node</strong>: 6 replicas fit node by node (a replica never spans nodes). Nodes:</p><ul class="plain nodes"><li>6 × 1.5 CPU / 8 GiB / 110 pods</li></ul>`
	if !strings.Contains(body, want) {
		t.Errorf("the page lacks\n%s", want)
	}
	if n := strings.Count(body, `class="noderoom"`); n != 1 {
		t.Errorf("%d clusters marked, want 1 (frag)", n)
	}
}
