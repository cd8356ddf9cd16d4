package workstatus

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/clusterclient"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// ControllerName prefixes the controllers' names in logs, metrics and events.
const ControllerName = "work-status"

var statusWrites = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "shepherd_status_writes_total",
	Help: "Status writes by the work status controller, by object (work, binding, template).",
}, []string{"object"})

func init() { metrics.Registry.MustRegister(statusWrites) }

// memberReconciler stops a member's informers when its Cluster goes.
type memberReconciler struct {
	client  client.Client
	members *members
	clients *clusterclient.Cache
}

func (r *memberReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	c := &clusterv1alpha1.Cluster{}
	err := r.client.Get(ctx, req.NamespacedName, c)
	if apierrors.IsNotFound(err) || (err == nil && !c.DeletionTimestamp.IsZero()) {
		r.members.stop(req.Name)
		r.clients.Forget(req.Name)
		return reconcile.Result{}, nil
	}
	return reconcile.Result{}, err
}

// worksOfKind returns the Works in an execution namespace with a manifest
// of kind gvk whose status was collected (the others have nothing to
// re-evaluate).
func worksOfKind(works []workv1alpha1.Work, gvk schema.GroupVersionKind) []types.NamespacedName {
	var out []types.NamespacedName
	for i := range works {
		w := &works[i]
		if !names.IsExecutionNamespace(w.Namespace) {
			continue
		}
		for _, ms := range w.Status.ManifestStatuses {
			if id := ms.Identifier; id.Group == gvk.Group && id.Version == gvk.Version && id.Kind == gvk.Kind {
				out = append(out, types.NamespacedName{Namespace: w.Namespace, Name: w.Name})
				break
			}
		}
	}
	return out
}
