package clusterstatus

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
)

func TestAgentReadiness(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	lease := func(holder string, renewedAgo time.Duration, seconds int32) *coordinationv1.Lease {
		l := &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{
			RenewTime:            ptr.To(metav1.NewMicroTime(now.Add(-renewedAgo))),
			LeaseDurationSeconds: ptr.To(seconds),
		}}
		if holder != "" {
			l.Spec.HolderIdentity = ptr.To(holder)
		}
		return l
	}
	tests := []struct {
		name        string
		lease       *coordinationv1.Lease
		wantAlive   bool
		wantReason  string
		wantRecheck time.Duration
	}{
		{name: "no lease yet", lease: nil, wantReason: clusterv1alpha1.ReasonAgentNotConnected},
		{name: "lease never renewed", lease: &coordinationv1.Lease{}, wantReason: clusterv1alpha1.ReasonAgentNotConnected},
		{name: "renewed within its duration", lease: lease("a", 10*time.Second, 40), wantAlive: true, wantRecheck: 30 * time.Second},
		{name: "renewed just now", lease: lease("a", 0, 40), wantAlive: true, wantRecheck: 40 * time.Second},
		{name: "expired exactly at its duration", lease: lease("a", 40*time.Second, 40), wantReason: clusterv1alpha1.ReasonAgentLeaseExpired},
		{name: "expired long ago", lease: lease("a", time.Hour, 40), wantReason: clusterv1alpha1.ReasonAgentLeaseExpired},
		{name: "released by a stopping agent", lease: lease("", time.Second, 40), wantReason: clusterv1alpha1.ReasonAgentLeaseExpired},
		{name: "no duration: 15 s assumed", lease: lease("a", 20*time.Second, 0), wantReason: clusterv1alpha1.ReasonAgentLeaseExpired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rd, alive, recheck := agentReadiness(tt.lease, now)
			if alive != tt.wantAlive {
				t.Fatalf("alive = %v, want %v (%+v)", alive, tt.wantAlive, rd)
			}
			if alive {
				if recheck != tt.wantRecheck {
					t.Errorf("recheck = %s, want %s", recheck, tt.wantRecheck)
				}
				return
			}
			if rd.status != metav1.ConditionUnknown || rd.reason != tt.wantReason || rd.message == "" {
				t.Errorf("readiness = %+v, want Unknown with reason %s and a message", rd, tt.wantReason)
			}
		})
	}
}
