package execution

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// A Work whose manifest's kind the member does not serve (its CRD not
// there yet, or removed by hand) fails, and its retries back off to
// RetryMaxDelay (see kindRetry): after a few failures the next one is
// minutes away. The
// member serving the kind again is what such a Work waits for, and the
// cluster status controller notices it at its next probe, in the Cluster's
// apiEnablements. So the Works that last failed for an unserved kind are
// remembered here, and a change of their Cluster's apiEnablements applies
// them at once.

// kindUnserved reports whether err says the member does not serve the
// manifest's kind now. Three answers say so:
//   - no mapping for the kind (its CRD was not there when the member's
//     discovery was read);
//   - a 404 that is not a Status (the API server serves no such path: the
//     CRD went after the mapping was cached);
//   - a refusal while the kind's CRD is terminating (its objects are being
//     deleted, and a new one is refused until the CRD is gone).
//
// Only the first was counted once, so a Work whose CRD was deleted by hand
// in the member retried on its back-off alone, minutes apart, after the
// CRD was back.
func kindUnserved(err error) bool {
	if err == nil {
		return false
	}
	if meta.IsNoMatchError(err) {
		return true
	}
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return false
	}
	s := st.Status()
	switch s.Reason {
	case metav1.StatusReasonNotFound:
		if s.Details == nil {
			return false
		}
		for _, c := range s.Details.Causes {
			if c.Type == metav1.CauseTypeUnexpectedServerResponse {
				return true
			}
		}
	case metav1.StatusReasonForbidden:
		return strings.Contains(s.Message, "while custom resource definition is terminating")
	}
	return false
}

// kindWaiters are the Works whose last apply met a kind their member did
// not serve, each with how many applies in a row did.
type kindWaiters struct {
	mu    sync.Mutex
	works map[types.NamespacedName]int
}

// set records whether work's last apply met an unserved kind, and returns
// how many applies in a row have (0 once one met every kind served).
func (w *kindWaiters) set(work types.NamespacedName, waiting bool) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !waiting {
		delete(w.works, work)
		return 0
	}
	if w.works == nil {
		w.works = map[types.NamespacedName]int{}
	}
	w.works[work]++
	return w.works[work]
}

// Waiting for a kind is a wait, not an error: a Work whose only failures
// are kinds its member does not serve is looked at again on a timer that
// doubles from the controller's RetryBaseDelay up to its RetryMaxDelay, as
// an error's retries would, besides the wake when the member's APIs
// change; but it is not returned as an error, which controller-runtime
// would log as one. The usual case is a CRD and its objects sent in the
// same moment: the objects' Work meets the kind unserved until the CRD's
// Work has been applied and the CRD is established, a second or so later.

// kindRetry is when a Work that met unserved kinds attempts times in a
// row is applied again: base doubled per attempt after the first, at most
// limit.
func kindRetry(attempts int, base, limit time.Duration) time.Duration {
	d := base
	for i := 1; i < attempts && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}

// of returns the waiting Works of cluster, sorted. They stay recorded
// until an apply of theirs meets every kind served.
func (w *kindWaiters) of(cluster string) []types.NamespacedName {
	ns := names.ExecutionNamespace(cluster)
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []types.NamespacedName
	for k := range w.works {
		if k.Namespace == ns {
			out = append(out, k)
		}
	}
	// One namespace: the names order them.
	slices.SortFunc(out, func(a, b types.NamespacedName) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// worksAwaitingKinds maps a Cluster whose served APIs changed to its Works
// waiting for a kind.
func (r *Reconciler) worksAwaitingKinds(_ context.Context, o client.Object) []reconcile.Request {
	works := r.waiting.of(o.GetName())
	reqs := make([]reconcile.Request, 0, len(works))
	for _, w := range works {
		reqs = append(reqs, reconcile.Request{NamespacedName: w})
	}
	return reqs
}

// apisChanged passes a Cluster update whose apiEnablements changed.
func apisChanged() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, ok1 := e.ObjectOld.(*clusterv1alpha1.Cluster)
			n, ok2 := e.ObjectNew.(*clusterv1alpha1.Cluster)
			return ok1 && ok2 && !equality.Semantic.DeepEqual(o.Status.APIEnablements, n.Status.APIEnablements)
		},
	}
}
