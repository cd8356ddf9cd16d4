package execution

import (
	"testing"

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
