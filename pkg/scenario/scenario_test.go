package scenario

import (
	"strings"
	"testing"
	"time"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
	"github.com/shepherd-io/shepherd/pkg/placement"
	"github.com/shepherd-io/shepherd/pkg/scheduler/core"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

var now = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func parse(t *testing.T, doc string) *Scenario {
	t.Helper()
	s, err := Parse(strings.NewReader(doc), now, interpreter.Builtin())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const fleetJSON = `{"name": "tiny", "clusters": [
  {"name": "b", "provider": "aws", "region": "r1", "zone": "z1", "labels": {"env": "prod"},
   "taints": [{"key": "maintenance", "value": "true", "effect": "NoSchedule"}],
   "available": {"cpu": 8000, "memory": 1024, "pods": 10, "nvidia.com/gpu": 2}, "apis": ["apps/v1/Deployment", "v1/ConfigMap"]},
  {"name": "a", "provider": "gcp", "region": "r2", "zone": "z2", "labels": {}, "taints": [],
   "available": {"cpu": 1000, "memory": 512, "pods": 5}, "apis": []}
 ], "workloads": [
  {"namespace": "ns", "name": "dup", "apiVersion": "apps/v1", "kind": "Deployment", "replicas": 3, "request": {"cpu": 500, "memory": 128},
   "placement": {"replicaScheduling": "Duplicated", "clusterNames": ["a"], "labelSelector": {"env": "prod"}, "excludeClusters": ["c"],
     "tolerations": [{"key": "maintenance", "operator": "Exists", "effect": "NoSchedule"}],
     "spread": [{"by": "region", "min": 1, "max": 2}, {"by": "cluster", "min": 2}]}},
  {"namespace": "ns", "name": "static", "apiVersion": "apps/v1", "kind": "Deployment", "replicas": 4, "request": {"cpu": 100},
   "placement": {"replicaScheduling": "StaticWeighted", "staticWeights": [{"labelSelector": {"env": "prod"}, "weight": 3}, {"clusterNames": ["a"], "weight": 1}]}},
  {"namespace": "ns", "name": "dyn", "apiVersion": "apps/v1", "kind": "Deployment", "replicas": 4, "request": {"cpu": 100},
   "placement": {"replicaScheduling": "DynamicWeighted"}},
  {"namespace": "ns", "name": "agg", "apiVersion": "apps/v1", "kind": "Deployment", "replicas": 4, "request": {"cpu": 100},
   "placement": {"replicaScheduling": "Aggregated"}}
 ]}`

func TestFleetJSON(t *testing.T) {
	s := parse(t, fleetJSON)
	if s.Name != "tiny" || s.Snapshot.Len() != 2 || len(s.Workloads) != 4 {
		t.Fatalf("got %q with %d clusters and %d workloads", s.Name, s.Snapshot.Len(), len(s.Workloads))
	}
	b := s.Snapshot.At(1)
	if b.Name != "b" || b.Available.MilliCPU != 8000 || b.Available.Memory != 1024<<20 || b.Available.Pods != 10 ||
		len(b.Available.Scalars) != 1 || b.Available.Scalars[0].Value != 2 || len(b.Taints) != 1 || !b.Probed {
		t.Errorf("cluster b: %+v", b)
	}
	if a := s.Snapshot.At(0); !a.Probed || len(a.APIs) != 0 {
		t.Errorf("cluster a must count as probed with no APIs: %+v", a)
	}

	dup := s.Workloads[0]
	if dup.Request.MilliCPU != 500 || dup.Request.Memory != 128<<20 || dup.Replicas != 3 || dup.Now != now || dup.Mode != core.Steady {
		t.Errorf("dup workload: %+v", dup)
	}
	p := dup.Placement
	if !placement.IsDuplicated(p) || p.ClusterAffinity == nil || p.ClusterAffinity.ClusterNames[0] != "a" ||
		p.ClusterAffinity.LabelSelector.MatchLabels["env"] != "prod" || p.ClusterAffinity.Exclude[0] != "c" || len(p.ClusterTolerations) != 1 {
		t.Errorf("dup placement: %+v", p)
	}
	if sc := p.SpreadConstraints; len(sc) != 2 || sc[0].SpreadByField != "region" || sc[0].MinGroups != 1 || *sc[0].MaxGroups != 2 ||
		sc[1].SpreadByField != "cluster" || sc[1].MinGroups != 2 || sc[1].MaxGroups != nil {
		t.Errorf("spread: %+v", sc)
	}
	if sw := placement.StaticWeights(s.Workloads[1].Placement); len(sw) != 2 || sw[0].Weight != 3 || sw[1].TargetCluster.ClusterNames[0] != "a" {
		t.Errorf("static weights: %+v", sw)
	}
	if rs := s.Workloads[2].Placement.ReplicaScheduling; rs.WeightPreference.DynamicWeight != policyv1alpha1.DynamicWeightByAvailableReplicas ||
		rs.ReplicaDivisionPreference != policyv1alpha1.ReplicaDivisionPreferenceWeighted {
		t.Errorf("dynamic: %+v", rs)
	}
	if rs := s.Workloads[3].Placement.ReplicaScheduling; rs.ReplicaDivisionPreference != policyv1alpha1.ReplicaDivisionPreferenceAggregated {
		t.Errorf("aggregated: %+v", rs)
	}
}

func TestScenarioKindYAML(t *testing.T) {
	s := parse(t, `
apiVersion: scenario.shepherd.io/v1alpha1
kind: Scenario
name: yaml
clusters:
- {name: one, region: r1, available: {cpu: 1000, memory: 1024, pods: 10}, apis: [apps/v1/Deployment]}
workloads:
- {namespace: ns, name: w, apiVersion: apps/v1, kind: Deployment, replicas: 1, request: {cpu: 100}, placement: {replicaScheduling: Aggregated}}
`)
	if s.Name != "yaml" || s.Snapshot.Len() != 1 || len(s.Workloads) != 1 {
		t.Fatalf("got %+v", s)
	}
}

// TestFleetNodes: a cluster described node by node takes only the
// replicas that fit on its nodes; the same cluster by its sums alone takes
// more.
func TestFleetNodes(t *testing.T) {
	const doc = `{"name": "frag", "clusters": [
  {"name": "frag", "available": {"cpu": 9000, "memory": 65536, "pods": 600}, "apis": ["apps/v1/Deployment"],
   "nodes": [{"count": 6, "free": {"cpu": 1500, "memory": 8192, "pods": 100}}]},
  {"name": "sums", "available": {"cpu": 9000, "memory": 65536, "pods": 600}, "apis": ["apps/v1/Deployment"]}
 ], "workloads": []}`
	s := parse(t, doc)
	req := framework.Resources{MilliCPU: 1000}
	for name, want := range map[string]int64{"frag": 6, "sums": 9} {
		i, ok := s.Snapshot.Index(name)
		if !ok {
			t.Fatalf("no cluster %s", name)
		}
		if got, _ := s.Snapshot.At(i).Fit(&req); got != want {
			t.Errorf("%s: %d one-CPU replicas fit, want %d", name, got, want)
		}
	}
}

func TestErrors(t *testing.T) {
	tests := []struct{ name, doc, want string }{
		{"bad replicaScheduling", strings.Replace(fleetJSON, `"Aggregated"`, `"Spread"`, 1),
			`workloads[3] (ns/agg): placement.replicaScheduling "Spread": want Duplicated, StaticWeighted, DynamicWeighted or Aggregated`},
		{"bad spread", strings.Replace(fleetJSON, `"by": "region"`, `"by": "rack"`, 1),
			`workloads[0] (ns/dup): placement.spread[0].by "rack": want cluster, region, zone or provider`},
		{"duplicate cluster", strings.Replace(fleetJSON, `"name": "a"`, `"name": "b"`, 1), `cluster "b" is listed twice`},
		{"no clusters", `{"name": "x", "clusters": [], "workloads": []}`, "no clusters"},
		{"nodes without a count", strings.Replace(fleetJSON, `"apis": []}`, `"apis": [], "nodes": [{"count": 0, "free": {"cpu": 1000}}]}`, 1),
			"clusters[1] (a): nodes[0].count 0: give one node or more"},
		{"nodes with negative room", strings.Replace(fleetJSON, `"apis": []}`, `"apis": [], "nodes": [{"count": 2, "free": {"cpu": -1}}]}`, 1),
			"clusters[1] (a): nodes[0].free.cpu -1 is negative"},
		{"not a scenario", "foo: bar\n", "document 1: not a scenario"},
		{"bad yaml", "kind: Cluster\n  - x: [\n", "document 1"},
		{"template without name", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {}\n", "document 1: apps/v1 Deployment has no metadata.name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tt.doc), now, interpreter.Builtin())
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// Extended resources come sorted by name whatever the map order, as
// Resources.Fit needs them: a request of two used to fit nowhere about
// half the time.
func TestFleetExtendedResources(t *testing.T) {
	const doc = `{"clusters": [{"name": "c", "available": {"cpu": 4000, "pods": 10, "example.com/a": 4, "example.com/b": 4, "example.com/c": 4},
  "apis": ["apps/v1/Deployment"], "nodes": [{"count": 2, "free": {"pods": 5, "example.com/c": 2, "example.com/b": 2, "example.com/a": 2}}]}],
 "workloads": [{"name": "w", "apiVersion": "apps/v1", "kind": "Deployment", "replicas": 1,
  "request": {"example.com/c": 1, "example.com/b": 1, "example.com/a": 1}, "placement": {"replicaScheduling": "Aggregated"}}]}`
	for range 20 {
		s := parse(t, doc)
		if got, limit := s.Snapshot.At(0).Fit(&s.Workloads[0].Request); got != 4 {
			t.Fatalf("%d replicas fit (limit %s), want 4: request %+v", got, limit, s.Workloads[0].Request)
		}
	}
}
