package dependencies

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// AttachedReconciler keeps an attached binding on the dependency object it
// places: an edit of the object moves spec.resource (and so re-renders its
// Works), a deleted object takes the binding (and its member copies) with
// it.
type AttachedReconciler struct {
	client client.Client
	deps   *watcher
}

// Reconcile implements reconcile.Reconciler for attached ResourceBindings.
func (r *AttachedReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	b := &workv1alpha1.ResourceBinding{}
	if err := r.client.Get(ctx, req.NamespacedName, b); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !workv1alpha1.Attached(&b.Spec) || b.DeletionTimestamp != nil {
		return reconcile.Result{}, nil
	}
	res := b.Spec.Resource
	gvk := schema.FromAPIVersionAndKind(res.APIVersion, res.Kind)
	// Attached before this process started: its kind is watched from now.
	if err := r.deps.watch(gvk); err != nil {
		return reconcile.Result{}, err
	}
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(gvk)
	err := r.client.Get(ctx, client.ObjectKey{Namespace: res.Namespace, Name: res.Name}, obj)
	if err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Result{}, err
	}
	if apierrors.IsNotFound(err) || obj.DeletionTimestamp != nil || (res.UID != "" && string(obj.UID) != res.UID) {
		uid := b.UID
		if err := r.client.Delete(ctx, b, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
			return reconcile.Result{}, err
		}
		attachedOps.WithLabelValues("deleted").Inc()
		logf.FromContext(ctx).Info("attached binding deleted: its object is gone from the hub", "binding", b.Name)
		return reconcile.Result{}, nil
	}
	if res.ResourceVersion == obj.ResourceVersion {
		return reconcile.Result{}, nil
	}
	orig := b.DeepCopy()
	b.Spec.Resource.ResourceVersion = obj.ResourceVersion
	return reconcile.Result{}, r.client.Patch(ctx, b, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}), client.FieldOwner(FieldManager))
}
