package clusterstatus

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
)

var hubNow = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// lease is a Lease held by holder ("" released), renewed at renewTime on
// the agent's clock.
func lease(holder string, renewTime time.Time, seconds int32) *coordinationv1.Lease {
	l := &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{
		RenewTime:            ptr.To(metav1.NewMicroTime(renewTime)),
		LeaseDurationSeconds: ptr.To(seconds),
	}}
	if holder != "" {
		l.Spec.HolderIdentity = ptr.To(holder)
	}
	return l
}

// TestAgentReadiness: a Lease counts from when the hub saw it renewed, on
// the hub's clock; the renewTime the agent wrote, on its own clock, is
// never compared with the hub's, so an agent whose clock is off by more
// than the Lease's duration, either way, is judged as one whose clock is
// right.
func TestAgentReadiness(t *testing.T) {
	tests := []struct {
		name        string
		lease       *coordinationv1.Lease
		seenAgo     time.Duration
		wantAlive   bool
		wantReason  string
		wantRecheck time.Duration
	}{
		{name: "no lease yet", lease: nil, wantReason: clusterv1alpha1.ReasonAgentNotConnected},
		{name: "lease never renewed", lease: &coordinationv1.Lease{}, wantReason: clusterv1alpha1.ReasonAgentNotConnected},
		{name: "seen renewed within its duration", lease: lease("a", hubNow.Add(-10*time.Second), 40), seenAgo: 10 * time.Second, wantAlive: true, wantRecheck: 30 * time.Second},
		{name: "seen renewed just now", lease: lease("a", hubNow, 40), wantAlive: true, wantRecheck: 40 * time.Second},
		{name: "expired exactly at its duration", lease: lease("a", hubNow.Add(-40*time.Second), 40), seenAgo: 40 * time.Second, wantReason: clusterv1alpha1.ReasonAgentLeaseExpired},
		{name: "expired long ago", lease: lease("a", hubNow.Add(-time.Hour), 40), seenAgo: time.Hour, wantReason: clusterv1alpha1.ReasonAgentLeaseExpired},
		{name: "released by a stopping agent", lease: lease("", hubNow.Add(-time.Second), 40), wantReason: clusterv1alpha1.ReasonAgentLeaseExpired},
		{name: "no duration: 15 s assumed", lease: lease("a", hubNow.Add(-20*time.Second), 0), seenAgo: 20 * time.Second, wantReason: clusterv1alpha1.ReasonAgentLeaseExpired},
		{name: "the agent's clock two durations behind, seen renewed just now", lease: lease("a", hubNow.Add(-80*time.Second), 40), wantAlive: true, wantRecheck: 40 * time.Second},
		{name: "the agent's clock two durations ahead, not seen renewed for a duration", lease: lease("a", hubNow.Add(40*time.Second), 40), seenAgo: 40 * time.Second, wantReason: clusterv1alpha1.ReasonAgentLeaseExpired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rd, alive, recheck := agentReadiness(tt.lease, hubNow.Add(-tt.seenAgo), hubNow)
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

// TestRenewalsSeen: a renewal counts from when the hub first read it; a
// Lease read again unchanged keeps that time, and a new renewTime or
// holder is a renewal seen now. Clusters are apart.
func TestRenewalsSeen(t *testing.T) {
	agentClock := hubNow.Add(-5 * time.Minute) // far behind: never compared
	var rs renewals
	for _, step := range []struct {
		name    string
		cluster string
		lease   *coordinationv1.Lease
		at      time.Duration // hub time since the start
		want    time.Duration
	}{
		{"first sight", "edge-1", lease("a", agentClock, 40), 0, 0},
		{"read again unchanged", "edge-1", lease("a", agentClock, 40), 30 * time.Second, 0},
		{"another cluster", "edge-2", lease("a", agentClock, 40), 31 * time.Second, 31 * time.Second},
		{"renewed", "edge-1", lease("a", agentClock.Add(10*time.Second), 40), 32 * time.Second, 32 * time.Second},
		{"renewed, read again", "edge-1", lease("a", agentClock.Add(10*time.Second), 40), 50 * time.Second, 32 * time.Second},
		{"taken by another agent at the same renewTime", "edge-1", lease("b", agentClock.Add(10*time.Second), 40), 51 * time.Second, 51 * time.Second},
	} {
		if got := rs.seen(step.cluster, step.lease, hubNow.Add(step.at)); !got.Equal(hubNow.Add(step.want)) {
			t.Errorf("%s: seen at %s, want %s", step.name, got.Sub(hubNow), step.want)
		}
	}
	rs.forget("edge-1")
	if got := rs.seen("edge-1", lease("b", agentClock.Add(10*time.Second), 40), hubNow.Add(time.Minute)); !got.Equal(hubNow.Add(time.Minute)) {
		t.Errorf("after forget: seen at %s, want the first sight's time", got.Sub(hubNow))
	}
}
