package dependencies

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/index"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// Event reasons on dependent bindings.
const (
	ReasonDependencyMissing  = "DependencyMissing"
	ReasonDependencyConflict = "DependencyConflict"
)

// missingRetry is how soon a dependent whose dependency is missing on the
// hub is looked at again.
const missingRetry = 30 * time.Second

// Reconciler writes a dependent binding's entry into the bindings of its
// dependencies.
type Reconciler struct {
	client   client.Client
	recorder events.EventRecorder
	in       interpreter.Interpreter
	deps     *watcher
}

// Reconcile implements reconcile.Reconciler for dependent ResourceBindings.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	b := &workv1alpha1.ResourceBinding{}
	if err := r.client.Get(ctx, req.NamespacedName, b); err != nil {
		if !apierrors.IsNotFound(err) {
			return reconcile.Result{}, err
		}
		b = nil
	}
	deps, err := r.dependencies(ctx, b)
	if err != nil {
		return reconcile.Result{}, err
	}
	wanted := map[string]bool{}
	var missing []string
	for _, d := range deps {
		name := names.BindingName(d.Kind, d.Name)
		wanted[name] = true
		found, err := r.require(ctx, b, d, name)
		if err != nil {
			return reconcile.Result{}, err
		}
		if !found {
			missing = append(missing, d.Kind+" "+d.Name)
		}
	}
	if err := r.release(ctx, req.Namespace, req.Name, wanted); err != nil {
		return reconcile.Result{}, err
	}
	if len(missing) > 0 {
		r.recorder.Eventf(b, nil, "Warning", ReasonDependencyMissing, "PropagateDependencies", "%s", bindingutil.Note(fmt.Sprintf(
			"Not on the hub, so not propagated: %s; each follows once it exists", strings.Join(missing, ", "))))
		return reconcile.Result{RequeueAfter: missingRetry}, nil
	}
	return reconcile.Result{}, nil
}

// dependencies are what b's template needs; none when b is gone, being
// deleted, does not propagate its dependencies, or its template is gone.
func (r *Reconciler) dependencies(ctx context.Context, b *workv1alpha1.ResourceBinding) ([]interpreter.Dependency, error) {
	if b == nil || b.DeletionTimestamp != nil || !b.Spec.PropagateDeps {
		return nil, nil
	}
	res := b.Spec.Resource
	gv, err := schema.ParseGroupVersion(res.APIVersion)
	if err != nil {
		return nil, nil
	}
	tmpl := &unstructured.Unstructured{}
	tmpl.SetGroupVersionKind(gv.WithKind(res.Kind))
	if err := r.client.Get(ctx, client.ObjectKey{Namespace: res.Namespace, Name: res.Name}, tmpl); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return r.in.Dependencies(tmpl)
}

// require writes b's entry into the binding of dependency d, creating an
// attached binding when none exists. found is false when d is not on the
// hub.
func (r *Reconciler) require(ctx context.Context, b *workv1alpha1.ResourceBinding, d interpreter.Dependency, name string) (found bool, err error) {
	gvk := schema.FromAPIVersionAndKind(d.APIVersion, d.Kind)
	if err := r.deps.watch(gvk); err != nil {
		return false, err
	}
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(gvk)
	if err := r.client.Get(ctx, client.ObjectKey{Namespace: d.Namespace, Name: d.Name}, obj); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	if obj.DeletionTimestamp != nil {
		return false, nil
	}
	snap := snapshot(b, bindingutil.ActiveTargets(b.Spec.Clusters))
	dep := &workv1alpha1.ResourceBinding{}
	err = r.client.Get(ctx, client.ObjectKey{Namespace: d.Namespace, Name: name}, dep)
	if apierrors.IsNotFound(err) {
		return true, r.createAttached(ctx, d, obj, name, snap)
	}
	if err != nil {
		return true, err
	}
	if res := dep.Spec.Resource; res.Kind != d.Kind || res.Name != d.Name || res.APIVersion != d.APIVersion {
		r.recorder.Eventf(b, dep, "Warning", ReasonDependencyConflict, "PropagateDependencies", "%s", bindingutil.Note(fmt.Sprintf(
			"Binding %s places %s %s, not the %s %s this workload depends on; not propagating it", name, res.Kind, res.Name, d.Kind, d.Name)))
		return true, nil
	}
	if dep.DeletionTimestamp != nil {
		return true, fmt.Errorf("binding %s/%s of a dependency is being deleted; retrying", d.Namespace, name)
	}
	req, changed := withRequirement(dep.Spec.RequiredBy, snap)
	if !changed {
		return true, nil
	}
	return true, r.patchRequiredBy(ctx, dep, req)
}

// createAttached creates the binding of a dependency no policy selects.
func (r *Reconciler) createAttached(ctx context.Context, d interpreter.Dependency, obj *metav1.PartialObjectMetadata, name string, snap workv1alpha1.BindingSnapshot) error {
	dep := &workv1alpha1.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: d.Namespace, Name: name, Labels: map[string]string{workv1alpha1.LabelAttached: "true"}},
		Spec: workv1alpha1.BindingSpec{
			Resource: workv1alpha1.ObjectReference{APIVersion: d.APIVersion, Kind: d.Kind, Namespace: d.Namespace, Name: d.Name,
				UID: string(obj.UID), ResourceVersion: obj.ResourceVersion},
			RequiredBy: []workv1alpha1.BindingSnapshot{snap},
		},
	}
	if err := r.client.Create(ctx, dep, client.FieldOwner(FieldManager)); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("binding %s/%s appeared meanwhile; retrying", d.Namespace, name)
		}
		return err
	}
	attachedOps.WithLabelValues("created").Inc()
	logf.FromContext(ctx).Info("attached binding created", "binding", name, "dependency", d.Kind+"/"+d.Name)
	return nil
}

// release removes the entry of dependent ns/name from every binding it is
// listed in but no longer needs, deleting attached bindings nobody needs.
func (r *Reconciler) release(ctx context.Context, ns, name string, wanted map[string]bool) error {
	list := &workv1alpha1.ResourceBindingList{}
	if err := r.client.List(ctx, list, client.InNamespace(ns), client.MatchingFields{index.BindingsByDependent: index.DependentKey(ns, name)}); err != nil {
		return err
	}
	for i := range list.Items {
		dep := &list.Items[i]
		if wanted[dep.Name] {
			continue
		}
		req, changed := withoutRequirement(dep.Spec.RequiredBy, ns, name)
		if !changed {
			continue
		}
		if len(req) == 0 && dep.Spec.PolicyRef == nil {
			uid := dep.UID
			if err := r.client.Delete(ctx, dep, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
				return err
			}
			attachedOps.WithLabelValues("deleted").Inc()
			logf.FromContext(ctx).Info("attached binding deleted: no dependent needs it", "binding", dep.Name)
			continue
		}
		if err := r.patchRequiredBy(ctx, dep, req); err != nil {
			return err
		}
	}
	return nil
}

// patchRequiredBy writes spec.requiredBy with a merge patch under an
// optimistic lock (dependents of one object write it concurrently), as an
// update of this controller's own: the detector's server-side apply of
// the same binding does not own the field and so never removes it.
func (r *Reconciler) patchRequiredBy(ctx context.Context, dep *workv1alpha1.ResourceBinding, req []workv1alpha1.BindingSnapshot) error {
	orig := dep.DeepCopy()
	dep.Spec.RequiredBy = req
	return r.client.Patch(ctx, dep, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}), client.FieldOwner(FieldManager))
}
