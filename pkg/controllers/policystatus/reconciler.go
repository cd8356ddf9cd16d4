package policystatus

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/index"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// ControllerName names the controller in logs and events.
const ControllerName = "policystatus"

// EventPolicyConflict is the Warning event on a policy that starts tying.
const EventPolicyConflict = "PolicyConflict"

// Kinds of policies, as written in spec.policyRef.kind.
const (
	kindPP  = policyv1alpha1.KindPropagationPolicy
	kindCPP = policyv1alpha1.KindClusterPropagationPolicy
)

// setupIndexes registers the cache indexes of the kind's bindings: by the
// policy governing them, and by each policy tied on them.
func setupIndexes[T workv1alpha1.BindingObject](d controllerdeps.Deps, kind bindingutil.Kind[T]) error {
	if err := index.SetupBindingsByGoverningPolicy(d, kind); err != nil {
		return err
	}
	return index.SetupBindingsByTiedPolicy(d, kind)
}

// Reconciler writes policy statuses. A request with a namespace is a
// PropagationPolicy, one without a ClusterPropagationPolicy.
type Reconciler struct {
	client   client.Client
	recorder events.EventRecorder
}

func policyRefOf(b workv1alpha1.BindingObject) string {
	ref := b.GetBindingSpec().PolicyRef
	if ref == nil {
		return ""
	}
	return names.PolicyRef(ref.Kind, ref.Namespace, ref.Name)
}

// requestOf turns a names.PolicyRef back into a request.
func requestOf(ref string) (reconcile.Request, bool) {
	kind, key, ok := strings.Cut(ref, " ")
	if !ok {
		return reconcile.Request{}, false
	}
	ns, name, namespaced := strings.Cut(key, "/")
	switch {
	case kind == kindPP && namespaced:
		return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}, true
	case kind == kindCPP && !namespaced:
		return reconcile.Request{NamespacedName: types.NamespacedName{Name: key}}, true
	}
	return reconcile.Request{}, false
}

// policiesOfBinding wakes the policy governing a binding and the tied ones.
func policiesOfBinding(_ context.Context, o client.Object) []reconcile.Request {
	var reqs []reconcile.Request
	for _, ref := range append(index.GoverningPolicy(o), index.TiedPolicies(o)...) {
		if req, ok := requestOf(ref); ok {
			reqs = append(reqs, req)
		}
	}
	return reqs
}

// allPolicies wakes every policy: a Cluster came or went.
func (r *Reconciler) allPolicies(ctx context.Context, _ client.Object) []reconcile.Request {
	var reqs []reconcile.Request
	pps := &policyv1alpha1.PropagationPolicyList{}
	cpps := &policyv1alpha1.ClusterPropagationPolicyList{}
	if r.client.List(ctx, pps) != nil || r.client.List(ctx, cpps) != nil {
		return nil
	}
	for i := range pps.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&pps.Items[i])})
	}
	for i := range cpps.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&cpps.Items[i])})
	}
	return reqs
}

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var p policyv1alpha1.PolicyObject = &policyv1alpha1.PropagationPolicy{}
	kind := kindPP
	if req.Namespace == "" {
		p, kind = &policyv1alpha1.ClusterPropagationPolicy{}, kindCPP
	}
	if err := r.client.Get(ctx, req.NamespacedName, p.(client.Object)); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if p.GetDeletionTimestamp() != nil {
		return reconcile.Result{}, nil
	}
	self := names.PolicyRef(kind, p.GetNamespace(), p.GetName())
	governed, err := r.bindings(ctx, index.BindingsByGoverningPolicy, self)
	if err != nil {
		return reconcile.Result{}, err
	}
	tiedOn, err := r.bindings(ctx, index.BindingsByTiedPolicy, self)
	if err != nil {
		return reconcile.Result{}, err
	}
	// Only the clusters the policy names are looked up: listing (and
	// copying) a fleet of a thousand clusters on every reconcile was the
	// controller's largest cost.
	named := namedClusters(&p.GetPropagationSpec().Placement)
	exists := make(map[string]bool, len(named))
	for _, n := range named {
		if _, seen := exists[n]; seen {
			continue
		}
		c := &clusterv1alpha1.Cluster{}
		err := r.client.Get(ctx, client.ObjectKey{Name: n}, c)
		if err != nil && !apierrors.IsNotFound(err) {
			return reconcile.Result{}, err
		}
		exists[n] = err == nil && c.DeletionTimestamp.IsZero()
	}
	prev := p.GetPolicyStatus()
	next := decide(self, p.GetGeneration(), governed, tiedOn, named, func(n string) bool { return exists[n] }, prev)
	if equality.Semantic.DeepEqual(prev, &next) {
		return reconcile.Result{}, nil
	}
	wasConflicted := meta.IsStatusConditionTrue(prev.Conditions, policyv1alpha1.PolicyConditionConflicted)
	orig := p.DeepCopyObject().(client.Object)
	*p.GetPolicyStatus() = next
	if err := r.client.Status().Patch(ctx, p.(client.Object), client.MergeFrom(orig), client.FieldOwner(workv1alpha1.FieldManager)); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if c := meta.FindStatusCondition(next.Conditions, policyv1alpha1.PolicyConditionConflicted); c != nil && c.Status == "True" && !wasConflicted {
		r.recorder.Eventf(p, nil, corev1.EventTypeWarning, EventPolicyConflict, "Match", "%s", c.Message)
	}
	return reconcile.Result{}, nil
}

// bindings reads the facts of the bindings of both kinds indexed under ref
// in the index named field.
//
// The bindings are the cache's own, not copies (UnsafeDisableDeepCopy):
// only a few strings are read from them. Copying every binding of a policy
// on every reconcile was a quarter of the controllers' CPU in
// `shepherd bench e2e`.
func (r *Reconciler) bindings(ctx context.Context, field, ref string) ([]bindingFacts, error) {
	var out []bindingFacts
	rbs := &workv1alpha1.ResourceBindingList{}
	if err := r.client.List(ctx, rbs, client.MatchingFields{field: ref}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	for i := range rbs.Items {
		out = append(out, factsOf(&rbs.Items[i]))
	}
	crbs := &workv1alpha1.ClusterResourceBindingList{}
	if err := r.client.List(ctx, crbs, client.MatchingFields{field: ref}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	for i := range crbs.Items {
		out = append(out, factsOf(&crbs.Items[i]))
	}
	return out, nil
}

// factsChanged reports whether an update of a binding changed what the
// policy status reads from it (factsOf): its template, its governing
// policy, its tied policies.
func factsChanged(oldObj, newObj client.Object) bool {
	o, ok1 := oldObj.(workv1alpha1.BindingObject)
	n, ok2 := newObj.(workv1alpha1.BindingObject)
	if !ok1 || !ok2 {
		return true
	}
	return factsOf(o).template != factsOf(n).template || policyRefOf(o) != policyRefOf(n) ||
		workv1alpha1.Unclaimed(o.GetBindingStatus()) != workv1alpha1.Unclaimed(n.GetBindingStatus()) ||
		o.GetAnnotations()[workv1alpha1.AnnotationTiedPolicies] != n.GetAnnotations()[workv1alpha1.AnnotationTiedPolicies]
}

func factsOf(b workv1alpha1.BindingObject) bindingFacts {
	res := b.GetBindingSpec().Resource
	tmpl := res.Name
	if res.Namespace != "" {
		tmpl = res.Namespace + "/" + res.Name
	}
	return bindingFacts{template: fmt.Sprintf("%s %s", res.Kind, tmpl), governedBy: policyRefOf(b), tied: index.TiedPolicies(b)}
}
