package framework_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// A snapshot built from another snapshot's ClusterInfos (a fleet whose room
// changed, say) indexes them afresh and leaves the first one as it was:
// snapshots are immutable and shared.
func TestSnapshotFromAnotherSnapshotsClusters(t *testing.T) {
	taint := corev1.Taint{Key: "k", Effect: corev1.TaintEffectNoSchedule}
	a, err := framework.NewSnapshot([]framework.ClusterInfo{
		{Name: "x", APIs: []string{"apps/v1/Deployment"}},
		{Name: "y", APIs: []string{"v1/ConfigMap"}, Taints: []corev1.Taint{taint}},
	})
	if err != nil {
		t.Fatal(err)
	}
	deployment, _ := a.APIID("apps/v1/Deployment")
	// y alone: its ConfigMap API takes the ID Deployment has in a.
	b, err := framework.NewSnapshot([]framework.ClusterInfo{*a.At(1)})
	if err != nil {
		t.Fatal(err)
	}
	if y := a.At(1); y.HasAPI(deployment) {
		t.Error("building b made y serve apps/v1/Deployment in a")
	}
	cm, _ := b.APIID("v1/ConfigMap")
	if y := b.At(0); y.Index() != 0 || !y.HasAPI(cm) || !b.APIClusters(cm).Has(0) {
		t.Errorf("y in b: index %d, serves ConfigMap %t", y.Index(), y.HasAPI(cm))
	}
	if b.NumTaints() != 1 || !b.TaintClusters(0).Has(0) {
		t.Errorf("b has %d taints", b.NumTaints())
	}
}
