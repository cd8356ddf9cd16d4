package detector

import (
	"context"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
	"github.com/shepherd-io/shepherd/pkg/names"
	"github.com/shepherd-io/shepherd/pkg/resourceselector"
)

// templateHandler enqueues the template of every event.
func templateHandler() handler.TypedEventHandler[*unstructured.Unstructured, TemplateKey] {
	return handler.TypedEnqueueRequestsFromMapFunc(func(_ context.Context, u *unstructured.Unstructured) []TemplateKey {
		return []TemplateKey{keyOf(u)}
	})
}

// templatePredicate drops events of templates never propagated, and
// updates that change nothing a binding or a Work reflects: a status
// written back by the status controller changes neither the generation nor
// the metadata. Kinds without a generation (ConfigMaps, Secrets) count
// every new resourceVersion as a change.
func templatePredicate() predicate.TypedPredicate[*unstructured.Unstructured] {
	propagatable := func(u *unstructured.Unstructured) bool {
		return !resourceselector.Excluded(u.GroupVersionKind().GroupKind(), u.GetNamespace(), u.GetName())
	}
	return predicate.TypedFuncs[*unstructured.Unstructured]{
		CreateFunc:  func(e event.TypedCreateEvent[*unstructured.Unstructured]) bool { return propagatable(e.Object) },
		DeleteFunc:  func(e event.TypedDeleteEvent[*unstructured.Unstructured]) bool { return propagatable(e.Object) },
		GenericFunc: func(e event.TypedGenericEvent[*unstructured.Unstructured]) bool { return propagatable(e.Object) },
		UpdateFunc: func(e event.TypedUpdateEvent[*unstructured.Unstructured]) bool {
			o, n := e.ObjectOld, e.ObjectNew
			if !propagatable(n) {
				return false
			}
			return o.GetGeneration() != n.GetGeneration() ||
				(n.GetGeneration() == 0 && o.GetResourceVersion() != n.GetResourceVersion()) ||
				!maps.Equal(o.GetLabels(), n.GetLabels()) ||
				!maps.Equal(o.GetAnnotations(), n.GetAnnotations()) ||
				(o.GetDeletionTimestamp() == nil) != (n.GetDeletionTimestamp() == nil)
		},
	}
}

// policyHandler enqueues, on a policy event, every template the policy may
// gain or lose: the templates its selectors match now (for an update, the
// old and the new selectors both, since the handler maps both objects) and
// the templates whose bindings it produced.
func policyHandler[P policyv1alpha1.PolicyObject](r *Reconciler) handler.TypedEventHandler[P, TemplateKey] {
	return handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, p P) []TemplateKey {
		keys := map[TemplateKey]bool{}
		r.selectedTemplates(ctx, p, keys)
		r.governedTemplates(ctx, p, keys)
		out := slices.Collect(maps.Keys(keys))
		slices.SortFunc(out, func(a, b TemplateKey) int { return strings.Compare(a.String(), b.String()) })
		return out
	})
}

// selectedTemplates adds the cached templates p's selectors match. Kinds
// not watched yet are skipped: the policy reconciler starts their watch,
// whose initial events enqueue every template of the kind.
func (r *Reconciler) selectedTemplates(ctx context.Context, p policyv1alpha1.PolicyObject, keys map[TemplateKey]bool) {
	sels := p.GetPropagationSpec().ResourceSelectors
	for i := range sels {
		sel := &sels[i]
		gv, err := schema.ParseGroupVersion(sel.APIVersion)
		if err != nil {
			continue
		}
		gvk, ok := r.kinds.lookup(gv.WithKind(sel.Kind).GroupKind())
		if !ok {
			continue
		}
		ns := p.GetNamespace()
		if ns == "" {
			ns = sel.Namespace
		}
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := r.cache.List(ctx, list, client.InNamespace(ns)); err != nil {
			logf.FromContext(ctx).Error(err, "listing templates", "kind", gvk)
			continue
		}
		for j := range list.Items {
			u := &list.Items[j]
			t := &resourceselector.Template{GroupKind: gvk.GroupKind(), Namespace: u.GetNamespace(), Name: u.GetName(), Labels: u.GetLabels()}
			if resourceselector.SelectorStrength(sel, p.GetNamespace(), t) != resourceselector.NoMatch && !resourceselector.Excluded(t.GroupKind, t.Namespace, t.Name) {
				keys[keyOf(u)] = true
			}
		}
	}
}

// governedTemplates adds the templates of the bindings p produced, found by
// their policy labels.
func (r *Reconciler) governedTemplates(ctx context.Context, p policyv1alpha1.PolicyObject, keys map[TemplateKey]bool) {
	opts := []client.ListOption{client.MatchingLabels(names.PolicyLabels(policyKind(p), p.GetNamespace(), p.GetName()))}
	if ns := p.GetNamespace(); ns != "" {
		opts = append(opts, client.InNamespace(ns))
	}
	addBindingTemplates(ctx, r.client, bindingutil.ResourceBindings(), keys, opts...)
	if p.GetNamespace() == "" {
		addBindingTemplates(ctx, r.client, bindingutil.ClusterResourceBindings(), keys, opts...)
	}
}

func addBindingTemplates[T workv1alpha1.BindingObject](ctx context.Context, c client.Reader, kind bindingutil.Kind[T], keys map[TemplateKey]bool, opts ...client.ListOption) {
	list := kind.NewList()
	if err := c.List(ctx, list, opts...); err != nil {
		logf.FromContext(ctx).Error(err, "listing bindings", "kind", kind.Name)
		return
	}
	for _, b := range kind.Items(list) {
		if k, ok := keyOfBinding(b); ok {
			keys[k] = true
		}
	}
}

// bindingHandler enqueues the template of a binding the detector made.
func bindingHandler[T workv1alpha1.BindingObject]() handler.TypedEventHandler[T, TemplateKey] {
	return handler.TypedEnqueueRequestsFromMapFunc(func(_ context.Context, b T) []TemplateKey {
		if k, ok := keyOfBinding(b); ok {
			return []TemplateKey{k}
		}
		return nil
	})
}

// bindingPredicate passes a binding's creation (also at start-up: a
// template deleted while the detector was down leaves a binding whose
// template is gone) and deletion (by hand, or by the detector itself
// before a policy change that needs the binding back). Updates are other
// controllers' writes and say nothing about templates or policies.
func bindingPredicate[T workv1alpha1.BindingObject]() predicate.TypedPredicate[T] {
	return predicate.TypedFuncs[T]{
		UpdateFunc: func(event.TypedUpdateEvent[T]) bool { return false },
	}
}
