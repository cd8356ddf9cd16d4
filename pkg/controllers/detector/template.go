package detector

import (
	"context"
	"fmt"
	"strings"

	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
	"github.com/shepherd-io/shepherd/pkg/names"
	"github.com/shepherd-io/shepherd/pkg/policymatch"
	"github.com/shepherd-io/shepherd/pkg/resourceselector"
)

// Event reasons on templates.
const (
	ReasonApplyPolicySucceed = "ApplyPolicySucceed"
	ReasonApplyPolicyFailed  = "ApplyPolicyFailed"
	ReasonBindingConflict    = "BindingNameConflict"
	ReasonPolicyConflict     = "PolicyConflict"
	// ReasonPreemptPolicySucceed: a policy with preemption Always took the
	// template over from the policy that had claimed it (Karmada's reason).
	ReasonPreemptPolicySucceed = "PreemptPolicySucceed"
)

// TemplateKey identifies a resource template. The version is not part of
// it: the detector reads each kind in one version (see kinds).
type TemplateKey struct {
	Group, Kind string
	// Namespace is empty for a cluster-scoped template.
	Namespace, Name string
}

// GroupKind of the template.
func (k TemplateKey) GroupKind() schema.GroupKind {
	return schema.GroupKind{Group: k.Group, Kind: k.Kind}
}

func (k TemplateKey) String() string {
	return fmt.Sprintf("%s %s/%s", k.GroupKind(), k.Namespace, k.Name)
}

func keyOf(u *unstructured.Unstructured) TemplateKey {
	gk := u.GroupVersionKind().GroupKind()
	return TemplateKey{Group: gk.Group, Kind: gk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}
}

// keyOfBinding returns the template a binding the detector made places, or
// an attached binding (a dependency's, which a policy may come to govern);
// false for a binding written by hand, which the detector leaves alone.
func keyOfBinding(b workv1alpha1.BindingObject) (TemplateKey, bool) {
	spec := b.GetBindingSpec()
	if spec.PolicyRef == nil && !workv1alpha1.Attached(spec) {
		return TemplateKey{}, false
	}
	gv, err := schema.ParseGroupVersion(spec.Resource.APIVersion)
	if err != nil {
		return TemplateKey{}, false
	}
	return TemplateKey{Group: gv.Group, Kind: spec.Resource.Kind, Namespace: spec.Resource.Namespace, Name: spec.Resource.Name}, true
}

// Reconciler makes the binding of one resource template agree with the
// policies: creates or updates it when a policy governs the template,
// deletes it when none does or the template is gone. The hub runs no
// garbage collector, so the owner reference bindings carry documents the
// relation but deletes nothing: the detector deletes bindings itself.
type Reconciler struct {
	// in reads a template's replicas (d.Interpreter).
	in       interpreter.Interpreter
	client   client.Client
	cache    cache.Cache
	kinds    *kinds
	recorder events.EventRecorder
	opts     Options
}

// Reconcile implements reconcile.TypedReconciler.
func (r *Reconciler) Reconcile(ctx context.Context, key TemplateKey) (reconcile.Result, error) {
	tmpl, err := r.template(ctx, key)
	if err != nil {
		return reconcile.Result{}, err
	}
	existing, ours, err := r.existing(ctx, key)
	if err != nil {
		return reconcile.Result{}, err
	}
	if tmpl == nil {
		return reconcile.Result{}, r.unbind(ctx, existing, ours)
	}
	var claimant *workv1alpha1.PolicyReference
	if ours {
		claimant = existing.GetBindingSpec().PolicyRef
	}
	p, preempted, tied, err := r.match(ctx, tmpl, claimant)
	if err != nil {
		return reconcile.Result{}, err
	}
	if p == nil {
		if !ours {
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, r.unclaim(ctx, tmpl, existing)
	}
	if ours {
		if err := r.reclaim(ctx, tmpl, existing, p); err != nil {
			return reconcile.Result{}, err
		}
	}
	if err := r.bind(ctx, key, tmpl, p, tied, existing, ours); err != nil {
		return reconcile.Result{}, err
	}
	if preempted != nil {
		r.recorder.Eventf(tmpl, p, "Normal", ReasonPreemptPolicySucceed, "ApplyPolicy", "%s", bindingutil.Note(fmt.Sprintf(
			"%s %s (preemption: Always) took this template over from %s %s",
			policyKind(p), client.ObjectKeyFromObject(p), policyKind(preempted), client.ObjectKeyFromObject(preempted))))
	}
	return reconcile.Result{}, nil
}

// template returns the template from the cache; nil when it is gone, being
// deleted, or never propagated.
//
// The kind is watched here if it is not yet: after a restart, a binding's
// creation event may come before the policy controller has started the
// watch of its kind, and taking the template for gone then would delete a
// healthy binding and its Works. Only a kind the API server no longer
// serves (its CRD deleted, and so every template of it) counts as gone.
func (r *Reconciler) template(ctx context.Context, key TemplateKey) (*unstructured.Unstructured, error) {
	if resourceselector.Excluded(key.GroupKind(), key.Namespace, key.Name) {
		return nil, nil
	}
	gvk, err := r.kinds.ensure(key.GroupKind())
	if meta.IsNoMatchError(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	err = r.cache.Get(ctx, client.ObjectKey{Namespace: key.Namespace, Name: key.Name}, u)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil || u.GetDeletionTimestamp() != nil || resourceselector.ExcludedObject(u) {
		return nil, err
	}
	return u, nil
}

// match returns the policy governing tmpl, nil when none does, the policy
// it took tmpl over from (see policymatch.Govern; claimant is the policy
// the binding names), and the policies tied with it (policymatch.Tied).
func (r *Reconciler) match(ctx context.Context, tmpl *unstructured.Unstructured, claimant *workv1alpha1.PolicyReference) (p, preempted policyv1alpha1.PolicyObject, tied []policyv1alpha1.PolicyObject, err error) {
	var pps []policyv1alpha1.PolicyObject
	if ns := tmpl.GetNamespace(); ns != "" {
		list := &policyv1alpha1.PropagationPolicyList{}
		if err := r.client.List(ctx, list, client.InNamespace(ns)); err != nil {
			return nil, nil, nil, err
		}
		pps = asPolicies(bindingutil.Pointers(list.Items))
	}
	clist := &policyv1alpha1.ClusterPropagationPolicyList{}
	if err := r.client.List(ctx, clist); err != nil {
		return nil, nil, nil, err
	}
	cpps := asPolicies(bindingutil.Pointers(clist.Items))
	t := resourceselector.TemplateOf(tmpl)
	p, preempted = policymatch.Govern(t, claimant, pps, cpps)
	return p, preempted, policymatch.Tied(t, p, pps, cpps), nil
}

// asPolicies converts policies of one kind to their interface.
func asPolicies[P policyv1alpha1.PolicyObject](ps []P) []policyv1alpha1.PolicyObject {
	out := make([]policyv1alpha1.PolicyObject, len(ps))
	for i, p := range ps {
		out[i] = p
	}
	return out
}

// existing returns the binding named for key; nil when there is none or it
// does not place this template (another kind of the same name in another
// API group, or a binding written by hand).
func (r *Reconciler) existing(ctx context.Context, key TemplateKey) (workv1alpha1.BindingObject, bool, error) {
	b := bindingutil.NewForTemplate(key.Namespace != "")
	err := r.client.Get(ctx, client.ObjectKey{Namespace: key.Namespace, Name: names.BindingName(key.Kind, key.Name)}, b)
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	owned, ok := keyOfBinding(b)
	return b, ok && owned == key, nil
}

// bind creates or updates the binding of tmpl, governed by p, with
// server-side apply: the detector's fields only, so spec.clusters, the
// eviction fields and the status stay as their owners wrote them. Nothing
// is written when the binding already holds those fields.
//
// existing is the binding named for key, ours whether it places tmpl (see
// existing).
func (r *Reconciler) bind(ctx context.Context, key TemplateKey, tmpl *unstructured.Unstructured, p policyv1alpha1.PolicyObject,
	tied []policyv1alpha1.PolicyObject, existing workv1alpha1.BindingObject, ours bool) error {
	log := logf.FromContext(ctx)
	desired, err := desiredBinding(r.in, tmpl, key.Namespace != "", p, tied)
	if err != nil {
		r.recorder.Eventf(tmpl, p, "Warning", ReasonApplyPolicyFailed, "ApplyPolicy", "%s", bindingutil.Note("Reading the template: "+err.Error()))
		return err
	}
	if err := r.dependentOverridesExist(ctx, p); err != nil {
		r.recorder.Eventf(tmpl, p, "Warning", ReasonApplyPolicyFailed, "ApplyPolicy", "%s", bindingutil.Note(err.Error()))
		return err
	}
	if desired.GetBindingSpec().SchedulePriority, err = r.schedulePriority(ctx, p); err != nil {
		r.recorder.Eventf(tmpl, p, "Warning", ReasonApplyPolicyFailed, "ApplyPolicy", "%s", bindingutil.Note(err.Error()))
		return err
	}
	switch {
	case existing != nil && !ours:
		r.recorder.Eventf(tmpl, existing, "Warning", ReasonBindingConflict, "ApplyPolicy",
			"Binding %s already places another resource; not propagating this %s", existing.GetName(), key.Kind)
		return nil
	case existing != nil && existing.GetDeletionTimestamp() != nil:
		// Its deletion event brings the template back here.
		return nil
	case existing != nil && ownedFieldsEqual(existing, desired):
		return nil
	case existing != nil && lazyDeferred(existing, desired, tmpl, p):
		log.V(1).Info("policy change deferred until the template changes (activationPreference: Lazy)", "binding", existing.GetName())
		return nil
	}
	u, err := applyObject(desired)
	if err != nil {
		return err
	}
	if err := r.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(workv1alpha1.FieldManager), client.ForceOwnership); err != nil {
		r.recorder.Eventf(tmpl, p, "Warning", ReasonApplyPolicyFailed, "ApplyPolicy", "%s",
			bindingutil.Note(fmt.Sprintf("Writing %s %s: %v", u.GetKind(), u.GetName(), err)))
		return err
	}
	op := opUpdated
	if existing == nil {
		op = opCreated
	}
	bindingOps.WithLabelValues(u.GetKind(), op).Inc()
	log.V(1).Info("binding "+op, "binding", u.GetName(), "kind", u.GetKind(), "policy", desired.GetBindingSpec().PolicyRef)
	if existing == nil || !equality.Semantic.DeepEqual(existing.GetBindingSpec().PolicyRef, desired.GetBindingSpec().PolicyRef) {
		r.recorder.Eventf(tmpl, p, "Normal", ReasonApplyPolicySucceed, "ApplyPolicy",
			"Propagated by %s %s (binding %s)", policyKind(p), client.ObjectKeyFromObject(p), u.GetName())
	}
	if t := desired.GetAnnotations()[workv1alpha1.AnnotationTiedPolicies]; t != "" && (existing == nil || existing.GetAnnotations()[workv1alpha1.AnnotationTiedPolicies] != t) {
		r.recorder.Eventf(tmpl, p, "Warning", ReasonPolicyConflict, "ApplyPolicy", "%s", bindingutil.Note(fmt.Sprintf(
			"Policies %s match this template equally well (same selector strength and priority); %s governs it because its name sorts first. Give the intended one a higher spec.priority",
			t, names.PolicyRef(policyKind(p), p.GetNamespace(), p.GetName()))))
	}
	return nil
}

// dependentOverridesExist checks that the override policies p's
// spec.dependentOverrides names exist: the binding is not written before
// they do (the reconcile retries), as in Karmada, so that overrides created
// together with a template apply from its first rendering.
func (r *Reconciler) dependentOverridesExist(ctx context.Context, p policyv1alpha1.PolicyObject) error {
	var missing []string
	for _, name := range p.GetPropagationSpec().DependentOverrides {
		var obj client.Object = &policyv1alpha1.OverridePolicy{}
		if p.GetNamespace() == "" {
			obj = &policyv1alpha1.ClusterOverridePolicy{}
		}
		err := r.client.Get(ctx, client.ObjectKey{Namespace: p.GetNamespace(), Name: name}, obj)
		switch {
		case apierrors.IsNotFound(err):
			missing = append(missing, name)
		case err != nil:
			return err
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s %s: spec.dependentOverrides: %s not found; the template is propagated once they exist",
			policyKind(p), client.ObjectKeyFromObject(p), strings.Join(missing, ", "))
	}
	return nil
}

// schedulePriority resolves p's spec.schedulePriority to the value of the
// PriorityClass it names; nil without one. The binding is not written while
// the PriorityClass does not exist (the reconcile retries), as in Karmada:
// writing it without the priority would schedule it out of turn.
func (r *Reconciler) schedulePriority(ctx context.Context, p policyv1alpha1.PolicyObject) (*workv1alpha1.SchedulePriority, error) {
	sp := p.GetPropagationSpec().SchedulePriority
	if sp == nil {
		return nil, nil
	}
	pc := &schedulingv1.PriorityClass{}
	if err := r.client.Get(ctx, client.ObjectKey{Name: sp.PriorityClassName}, pc); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("%s %s: spec.schedulePriority.priorityClassName: PriorityClass %q not found; create it or change the name",
				policyKind(p), client.ObjectKeyFromObject(p), sp.PriorityClassName)
		}
		return nil, err
	}
	return &workv1alpha1.SchedulePriority{Priority: pc.Value}, nil
}

// unbind deletes the binding of a template that is gone; b is the binding
// named for it and ours whether it places this template (see existing).
// The binding controller's finalizer removes the binding's Works (and
// with them the member copies, or releases them when the binding
// preserves resources) before the binding goes. A template that no policy
// governs any longer keeps its binding, unclaimed (see unclaim).
//
// A binding other workloads depend on (spec.requiredBy) is not deleted: it
// loses the policy's fields and stays, attached, for its dependents (see
// package dependencies), which delete it once none needs it.
func (r *Reconciler) unbind(ctx context.Context, b workv1alpha1.BindingObject, ours bool) error {
	if !ours || b.GetDeletionTimestamp() != nil {
		return nil
	}
	if spec := b.GetBindingSpec(); len(spec.RequiredBy) > 0 {
		if spec.PolicyRef == nil {
			return nil
		}
		return r.detach(ctx, b)
	}
	uid := b.GetUID()
	if err := r.client.Delete(ctx, b, client.Preconditions{UID: &uid}); err != nil {
		return client.IgnoreNotFound(err)
	}
	kind := bindingutil.KindOf(b)
	bindingOps.WithLabelValues(kind, opDeleted).Inc()
	logf.FromContext(ctx).Info("binding deleted: its template is gone", "binding", b.GetName(), "kind", kind)
	return nil
}

// detach removes from b what the detector wrote for a policy, leaving the
// binding attached: its dependents' clusters only, no scheduling.
func (r *Reconciler) detach(ctx context.Context, b workv1alpha1.BindingObject) error {
	patch := []byte(`{"metadata":{"labels":{"` + workv1alpha1.LabelPolicyKind + `":null,"` + workv1alpha1.LabelPolicyNamespace + `":null,"` +
		workv1alpha1.LabelPolicyName + `":null}},"spec":{"policyRef":null,"placement":null,"clusters":null,"replicas":null,"failover":null}}`)
	if err := r.client.Patch(ctx, b, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(workv1alpha1.FieldManager)); err != nil {
		return client.IgnoreNotFound(err)
	}
	logf.FromContext(ctx).Info("binding detached: no policy governs it, but dependents require it", "binding", b.GetName())
	return nil
}
