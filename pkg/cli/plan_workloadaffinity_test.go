package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// workloadAffinityScenario: three clusters, all eligible; a policy keeps
// the shop=web Deployments together on one cluster, another keeps the
// ha-pair=ingest ones apart; an existing binding of the shop=web group
// already runs on c3, and a Deployment of the same label in another
// namespace is in another group.
const workloadAffinityScenario = `apiVersion: cluster.shepherd.io/v1alpha1
kind: Cluster
metadata: {name: c1}
---
apiVersion: cluster.shepherd.io/v1alpha1
kind: Cluster
metadata: {name: c2}
---
apiVersion: cluster.shepherd.io/v1alpha1
kind: Cluster
metadata: {name: c3}
---
apiVersion: policy.shepherd.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: groups}
spec:
  resourceSelectors:
  - apiVersion: apps/v1
    kind: Deployment
    labelSelector: {matchExpressions: [{key: shop, operator: Exists}]}
  placement:
    workloadAffinity: {affinity: {groupByLabelKey: shop}}
    spreadConstraints: [{spreadByField: cluster, maxGroups: 1}]
---
apiVersion: policy.shepherd.io/v1alpha1
kind: PropagationPolicy
metadata: {name: apart, namespace: shop}
spec:
  resourceSelectors:
  - apiVersion: apps/v1
    kind: Deployment
    labelSelector: {matchExpressions: [{key: ha-pair, operator: Exists}]}
  placement:
    workloadAffinity: {antiAffinity: {groupByLabelKey: ha-pair}}
    spreadConstraints: [{spreadByField: cluster, maxGroups: 1}]
---
apiVersion: work.shepherd.io/v1alpha1
kind: ResourceBinding
metadata: {name: api-deployment, namespace: shop}
spec:
  resource: {apiVersion: apps/v1, kind: Deployment, namespace: shop, name: api, uid: u-api}
  placement:
    workloadAffinity: {affinity: {groupByLabelKey: shop}}
    spreadConstraints: [{spreadByField: cluster, maxGroups: 1}]
  workloadAffinityGroups: {affinityGroup: shop=web}
  clusters: [{name: c3}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: cart, namespace: shop, labels: {shop: web}}
spec: {replicas: 1}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: other, namespace: elsewhere, labels: {shop: web}}
spec: {replicas: 1}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: ingest-1, namespace: shop, labels: {ha-pair: ingest}}
spec: {replicas: 1}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: ingest-2, namespace: shop, labels: {ha-pair: ingest}}
spec: {replicas: 1}
`

// TestPlanWorkloadAffinity: plan places each workload by where the other
// members of its groups are (from the bindings in its input and its own
// earlier placements), and explains a rejected cluster by the group.
func TestPlanWorkloadAffinity(t *testing.T) {
	file := filepath.Join(t.TempDir(), "groups.yaml")
	if err := os.WriteFile(file, []byte(workloadAffinityScenario), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{nil, {"--workload", "shop/ingest-2", "--explain"}} {
		out, err := execute(t, newPlanCommand(), append([]string{"-f", file, "-o", "json"}, args...)...)
		if err != nil {
			t.Fatalf("plan %v: %v", args, err)
		}
		var report planReport
		if err := json.Unmarshal([]byte(out), &report); err != nil {
			t.Fatal(err)
		}
		on := map[string]string{}
		explained := 0
		for _, w := range report.Workloads {
			if !w.Scheduled || len(w.Targets) != 1 {
				t.Fatalf("plan %v: %s/%s not placed on one cluster: %q %+v", args, w.Namespace, w.Name, w.Reason, w.Targets)
			}
			on[w.Namespace+"/"+w.Name] = w.Targets[0].Cluster
			for _, e := range w.Explanations {
				if e.Cluster == on[w.Namespace+"/"+w.Name] || !strings.Contains(e.Reason, `anti-affinity group "ha-pair=ingest": Deployment/ingest-1 runs on`) {
					continue
				}
				explained++
				if e.FilteredBy != "WorkloadAffinity" {
					t.Errorf("plan %v: %s rejected by %q, want WorkloadAffinity", args, e.Cluster, e.FilteredBy)
				}
			}
		}
		if args == nil {
			if on["shop/cart"] != "c3" {
				t.Errorf("cart on %s, want c3 with its group's binding", on["shop/cart"])
			}
			if on["shop/ingest-1"] == on["shop/ingest-2"] {
				t.Errorf("ingest-1 and ingest-2 both on %s", on["shop/ingest-1"])
			}
		} else if _, ok := on["shop/ingest-2"]; len(on) != 1 || !ok || explained != 1 {
			t.Errorf("plan %v shows %v with %d clusters explained by ingest-1, want ingest-2 only, with one", args, on, explained)
		}
	}
}
