// Package conflicts turns the conflicts of optimistic-lock writes into
// quiet, rate-limited requeues, for every controller of Shepherd's (the
// hub's and the members').
package conflicts

import (
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Requeue turns the conflicts of optimistic-lock writes into quiet,
// rate-limited requeues. Several controllers write one object (a binding's
// spec and status, a workload's annotations), each from its cache; a
// conflict only says that the cache was behind another write, which the
// next attempt reads. It is not worth an error log (controller-runtime
// logs every returned error).
type Requeue struct {
	limiter workqueue.TypedRateLimiter[reconcile.Request]
}

// NewRequeue retries after 10 ms, doubling up to 5 s while the same
// request keeps conflicting.
func NewRequeue() *Requeue {
	return &Requeue{limiter: workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](10*time.Millisecond, 5*time.Second)}
}

// Result is what Reconcile returns for the outcome of reconciling req.
func (c *Requeue) Result(req reconcile.Request, res reconcile.Result, err error) (reconcile.Result, error) {
	if apierrors.IsConflict(err) {
		return reconcile.Result{RequeueAfter: c.limiter.When(req)}, nil
	}
	if err == nil {
		c.limiter.Forget(req)
	}
	return res, err
}
