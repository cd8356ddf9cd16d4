package execution

import (
	"errors"
	"testing"
	"time"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// TestAfterApplyWaitsForATerminatingNamespace: a manifest refused because
// its namespace is being deleted in the member is looked at again on a
// timer, not returned as an error (which would be logged as one); a
// manifest that failed otherwise still is.
func TestAfterApplyWaitsForATerminatingNamespace(t *testing.T) {
	r := &Reconciler{Options: Options{}.withDefaults()}
	work := &workv1alpha1.Work{}
	cluster := &clusterv1alpha1.Cluster{}
	res, err := r.afterApply(work, cluster, nil, &pass{terminating: 1}, true, "namespace shop is being terminated")
	if err != nil || res.RequeueAfter != namespaceTerminatingRetry {
		t.Errorf("terminating namespace: %+v, %v; want a retry after %s and no error", res, err, namespaceTerminatingRetry)
	}
	if _, err := r.afterApply(work, cluster, nil, &pass{terminating: 1, retry: true}, true, "the member timed out"); err == nil {
		t.Errorf("another failure beside it: want the error returned")
	}
}

// TestAfterApplyWaitsForAnUnservedKind: a Work whose only failures are
// kinds the member does not serve (a CRD sent in the same moment as its
// objects) is looked at again on a timer that doubles up to the retry
// cap, not returned as an error; a failure of another kind beside it, or
// an unreachable member, still is.
func TestAfterApplyWaitsForAnUnservedKind(t *testing.T) {
	r := &Reconciler{Options: Options{RetryBaseDelay: time.Second, RetryMaxDelay: 10 * time.Second}.withDefaults()}
	work, cluster := &workv1alpha1.Work{}, &clusterv1alpha1.Cluster{}
	for _, tc := range []struct {
		name    string
		p       pass
		wantErr bool
		want    time.Duration
	}{
		{"first attempt", pass{retry: true, unserved: 1, unservedAttempts: 1, failures: []string{"no kind"}}, false, time.Second},
		{"third attempt, two kinds", pass{retry: true, unserved: 2, unservedAttempts: 3, failures: []string{"a", "b"}}, false, 4 * time.Second},
		{"capped", pass{retry: true, unserved: 1, unservedAttempts: 30, failures: []string{"a"}}, false, 10 * time.Second},
		{"another failure beside it", pass{retry: true, unserved: 1, unservedAttempts: 1, failures: []string{"a", "timeout"}}, true, 0},
		{"member unreachable", pass{retry: true, unserved: 1, unservedAttempts: 1, failures: []string{"a"}, unreachable: errors.New("down")}, true, 0},
	} {
		res, err := r.afterApply(work, cluster, nil, &tc.p, true, "message")
		if (err != nil) != tc.wantErr || (!tc.wantErr && res.RequeueAfter != tc.want) {
			t.Errorf("%s: %+v, %v; want error %v, retry after %s", tc.name, res, err, tc.wantErr, tc.want)
		}
	}
}

func TestKindRetry(t *testing.T) {
	for _, tc := range []struct {
		attempts int
		limit    time.Duration
		want     time.Duration
	}{
		{0, time.Minute, time.Second}, {1, time.Minute, time.Second}, {2, time.Minute, 2 * time.Second},
		{7, time.Minute, time.Minute}, {1000, time.Minute, time.Minute}, {1, 500 * time.Millisecond, 500 * time.Millisecond},
	} {
		if got := kindRetry(tc.attempts, time.Second, tc.limit); got != tc.want {
			t.Errorf("kindRetry(%d, %s) = %s, want %s", tc.attempts, tc.limit, got, tc.want)
		}
	}
}
