package failover_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// TestStatePreservationAcrossRestart: the failover reads the checkpoint
// from the failed copy's status into the binding; the controllers are
// restarted before the workload is placed again; the copy on the new
// cluster still gets the checkpoint as a label, because the state was kept
// in the API, not in a controller.
func TestStatePreservationAcrossRestart(t *testing.T) {
	suite.Hub(t)
	const ns = "state-restart"
	ctx := context.Background()
	fo := appFailover(1, policyv1alpha1.PurgeDirectly, nil)
	fo.Application.StatePreservation = &policyv1alpha1.StatePreservation{Rules: []policyv1alpha1.StatePreservationRule{
		{AliasLabelName: "example.com/checkpoint", JSONPath: "{.checkpoint}"},
	}}
	setup(t, ns, fo, nil, "s1")
	stop := startManager(t)
	waitWork(t, ns, "s1", true)

	since := metav1.NewTime(time.Now().Add(-time.Minute).Truncate(time.Second))
	eventually(t, "unhealthy status with a checkpoint written", func() error {
		rb, err := get(ns)
		if err != nil {
			return err
		}
		rb.Status.AggregatedStatus = []workv1alpha1.AggregatedStatusItem{{
			ClusterName: "s1", Applied: true, Health: policyv1alpha1.ResourceUnhealthy, UnhealthySince: &since, FirstCollectedTime: &since, Settled: true,
			Status: &runtime.RawExtension{Raw: []byte(`{"checkpoint":"ckpt-42"}`)},
		}}
		return cli.Status().Update(ctx, rb)
	})
	var rb *workv1alpha1.ResourceBinding
	eventually(t, "s1 evicted with its state", func() error {
		var err error
		if rb, err = get(ns); err != nil {
			return err
		}
		if len(rb.Spec.EvictionHistory) == 0 || rb.Spec.EvictionHistory[0].PreservedLabelState["example.com/checkpoint"] != "ckpt-42" {
			return fmt.Errorf("history %+v", rb.Spec.EvictionHistory)
		}
		return nil
	})
	stop()

	// While no controller runs, the scheduler's part: a new target.
	eventually(t, "new target written", func() error {
		rb, err := get(ns)
		if err != nil {
			return err
		}
		rb.Spec.Clusters = append(rb.Spec.Clusters, workv1alpha1.TargetCluster{Name: "s2", State: workv1alpha1.TargetScheduled})
		return cli.Update(ctx, rb)
	})
	startManager(t)
	waitWork(t, ns, "s2", true)
	list := &workv1alpha1.WorkList{}
	if err := cli.List(ctx, list, client.InNamespace(names.ExecutionNamespace("s2"))); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) == 0 {
		t.Fatal("no Work on s2")
	}
	for _, w := range list.Items[:1] {
		var m struct {
			Metadata struct {
				Labels map[string]string `json:"labels"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &m); err != nil {
			t.Fatal(err)
		}
		if got := m.Metadata.Labels["example.com/checkpoint"]; got != "ckpt-42" {
			t.Fatalf("the new copy's labels %v lack the preserved checkpoint", m.Metadata.Labels)
		}
	}
}
