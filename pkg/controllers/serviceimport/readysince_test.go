package serviceimport

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheme"
)

// TestEndpointGraceUnderClockSkew: a Pull member whose agent reports Ready
// False, stamped on its clock two reads or two grace periods behind or
// ahead of the hub's, keeps its endpoints for the full grace after the
// hub saw the transition, on the hub's clock, and not a second more.
// After a restart the hub has seen no transition: a Pull member it first
// reads not Ready gets no grace. A Push member's grace counts from its
// lastTransitionTime, which the hub stamped.
func TestEndpointGraceUnderClockSkew(t *testing.T) {
	const grace = 30 * time.Second
	type step struct {
		at      time.Duration          // the hub's time since t0
		report  metav1.ConditionStatus // "" leaves the condition as it is
		restart bool                   // a new controller reads from here
		want    bool                   // the member keeps its endpoints
	}
	seen := []step{
		{at: 0, report: metav1.ConditionTrue, want: true},
		{at: 10 * time.Second, report: metav1.ConditionFalse, want: true},
		{at: 10*time.Second + grace - time.Second, want: true},
		{at: 10*time.Second + grace, want: false},
	}
	for _, tc := range []struct {
		name  string
		mode  clusterv1alpha1.SyncMode
		skew  time.Duration // the agent's clock minus the hub's
		steps []step
	}{
		{"Pull, the agent's clock right", clusterv1alpha1.Pull, 0, seen},
		{"Pull, the agent's clock two reads behind", clusterv1alpha1.Pull, -20 * time.Second, seen},
		{"Pull, the agent's clock two reads ahead", clusterv1alpha1.Pull, 20 * time.Second, seen},
		{"Pull, the agent's clock two graces behind", clusterv1alpha1.Pull, -2 * grace, seen},
		{"Pull, the agent's clock two graces ahead", clusterv1alpha1.Pull, 2 * grace, seen},
		{"Pull, not Ready when the controller restarts", clusterv1alpha1.Pull, 0, []step{
			{at: 0, report: metav1.ConditionTrue, want: true},
			{at: 10 * time.Second, report: metav1.ConditionFalse, want: true},
			{at: 11 * time.Second, restart: true, want: false},
		}},
		{"Push: the hub's own stamp", clusterv1alpha1.Push, 0, []step{
			{at: 0, report: metav1.ConditionFalse, restart: true, want: true},
			{at: grace - time.Second, restart: true, want: true},
			{at: grace, want: false},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cluster := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "edge-1"}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: tc.mode}}
			c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(cluster).WithStatusSubresource(cluster).Build()
			ctx := context.Background()
			hubNow := t0
			var r *Reconciler
			for _, s := range tc.steps {
				hubNow = t0.Add(s.at)
				if r == nil || s.restart {
					r = &Reconciler{client: c, now: func() metav1.Time { return metav1.NewTime(hubNow) }, grace: grace}
				}
				if s.report != "" {
					if err := c.Get(ctx, client.ObjectKeyFromObject(cluster), cluster); err != nil {
						t.Fatal(err)
					}
					meta.SetStatusCondition(&cluster.Status.Conditions, metav1.Condition{Type: clusterv1alpha1.ClusterConditionReady,
						Status: s.report, Reason: "Probed", LastTransitionTime: metav1.NewTime(hubNow.Add(tc.skew))})
					if err := c.Status().Update(ctx, cluster); err != nil {
						t.Fatal(err)
					}
				}
				members, _, err := r.members(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if len(members) != 1 || members[0].Ready != s.want {
					t.Errorf("at %s: members %+v, want edge-1 keeping its endpoints: %v", s.at, members, s.want)
				}
			}
		})
	}
}
