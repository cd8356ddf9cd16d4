package detector

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
	"github.com/shepherd-io/shepherd/pkg/resourceselector"
)

// Event reasons on policies.
const (
	ReasonResourceKindUnknown         = "ResourceKindUnknown"
	ReasonResourceKindNotPropagatable = "ResourceKindNotPropagatable"
	ReasonSelectorNamespaceIgnored    = "SelectorNamespaceIgnored"
	ReasonInvalidSelector             = "InvalidSelector"
)

// policyReconciler makes sure the detector watches every kind a policy
// names, and tells the policy's author, with events, about selectors that
// can match nothing. Matching itself happens per template (Reconciler):
// a policy event enqueues the templates it may concern.
type policyReconciler[P policyv1alpha1.PolicyObject] struct {
	client    client.Client
	kinds     *kinds
	recorder  events.EventRecorder
	newPolicy func() P
	opts      Options
}

// Reconcile implements reconcile.Reconciler.
func (r *policyReconciler[P]) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	p := r.newPolicy()
	if err := r.client.Get(ctx, req.NamespacedName, p); err != nil || p.GetDeletionTimestamp() != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	retry := false
	sels := p.GetPropagationSpec().ResourceSelectors
	for i := range sels {
		sel := &sels[i]
		gv, err := schema.ParseGroupVersion(sel.APIVersion)
		if err != nil {
			r.warn(p, ReasonInvalidSelector, "resourceSelectors[%d]: apiVersion %q: %v", i, sel.APIVersion, err)
			continue
		}
		gk := gv.WithKind(sel.Kind).GroupKind()
		if resourceselector.ExcludedKind(gk) {
			r.warn(p, ReasonResourceKindNotPropagatable, "resourceSelectors[%d]: %s objects stay on the hub and are never propagated", i, gk)
			continue
		}
		if ns := p.GetNamespace(); ns != "" && sel.Namespace != "" && sel.Namespace != ns {
			r.warn(p, ReasonSelectorNamespaceIgnored, "resourceSelectors[%d]: a PropagationPolicy only selects templates of its own namespace %q, not %q", i, ns, sel.Namespace)
			continue
		}
		if sel.LabelSelector != nil {
			if _, err := metav1.LabelSelectorAsSelector(sel.LabelSelector); err != nil {
				r.warn(p, ReasonInvalidSelector, "resourceSelectors[%d]: labelSelector: %v", i, err)
				continue
			}
		}
		if _, err := r.kinds.ensure(gk); err != nil {
			if !meta.IsNoMatchError(err) {
				return reconcile.Result{}, err
			}
			r.warn(p, ReasonResourceKindUnknown, "resourceSelectors[%d]: the hub does not serve %s; retrying in %s", i, gk, r.opts.UnknownKindRetry)
			retry = true
		}
	}
	if retry {
		logf.FromContext(ctx).Info("policy names kinds the hub does not serve; retrying", "after", r.opts.UnknownKindRetry)
		return reconcile.Result{RequeueAfter: r.opts.UnknownKindRetry}, nil
	}
	return reconcile.Result{}, nil
}

func (r *policyReconciler[P]) warn(p P, reason, note string, args ...any) {
	r.recorder.Eventf(p, nil, "Warning", reason, "ValidatePolicy", "%s", bindingutil.Note(fmt.Sprintf(note, args...)))
}
