package scheduler

import (
	"context"
	"errors"
	"strings"
	"testing"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// TestWorkloadAffinityFullGroup: a member of an affinity group whose
// group's cluster is full is unschedulable, with the other clusters
// explained by the group; it does not spill onto them. With room on the
// group's cluster it goes there, and a spread constraint works on what the
// filter lets through.
func TestWorkloadAffinityFullGroup(t *testing.T) {
	full := cluster("m1", "", "", "", nil)
	full.Available = framework.Resources{MilliCPU: 500, Memory: gib, Pods: 110}
	snap := snapshot(t, full, cluster("m2", "", "", "", nil), cluster("m3", "", "", "", nil))
	one := int32(1)
	p := &policyv1alpha1.Placement{SpreadConstraints: []policyv1alpha1.SpreadConstraint{{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MinGroups: 1, MaxGroups: &one}}}
	w := deployment("checkout", 1, p)
	w.AffinityGroup = &framework.PeerGroup{Name: "shop=web", Peers: []framework.Peer{{Name: "Deployment/cart", Clusters: []string{"m1"}}}}
	_, err := NewDefault().Schedule(context.Background(), snap, w)
	var ue *UnschedulableError
	if !errors.As(err, &ue) {
		t.Fatalf("placed despite its group's full cluster: %v", err)
	}
	for _, want := range []string{`2 not a cluster of affinity group "shop=web" (Deployment/cart runs on m1)`, "insufficient cpu"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q does not say %q", err.Error(), want)
		}
	}

	w.AffinityGroup.Peers[0].Clusters = []string{"m2"}
	res, err := NewDefault().Schedule(context.Background(), snap, w)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Release()
	if len(res.Targets) != 1 || res.Targets[0].Name != "m2" {
		t.Errorf("targets %+v, want m2 with its group", res.Targets)
	}
}
