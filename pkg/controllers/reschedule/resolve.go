package reschedule

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	taskv1alpha1 "github.com/shepherd-io/shepherd/api/task/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// resolve lists the task's targets: the bindings of its resources and
// policies, each once, in the order the spec names them, as Pending;
// and a Failed target for each resource without a binding and each
// policy missing or governing nothing. It reads from the API server, so
// a binding created just before the task counts.
func (r *Reconciler) resolve(ctx context.Context, spec *taskv1alpha1.RescheduleTaskSpec) ([]taskv1alpha1.TargetStatus, error) {
	var out []taskv1alpha1.TargetStatus
	seen := map[string]bool{}
	add := func(b workv1alpha1.BindingObject) {
		key := bindingKey(b.GetNamespace(), b.GetName())
		if seen[key] {
			return
		}
		seen[key] = true
		res := b.GetBindingSpec().Resource
		out = append(out, taskv1alpha1.TargetStatus{
			Resource: taskv1alpha1.ResourceSelector{APIVersion: res.APIVersion, Kind: res.Kind, Namespace: res.Namespace, Name: res.Name},
			Binding:  key,
			Phase:    taskv1alpha1.TargetPending,
		})
	}
	for _, sel := range spec.TargetRefResource {
		b, err := r.bindingOfResource(ctx, sel)
		if err != nil {
			return nil, err
		}
		if b == nil {
			out = append(out, failed(sel, fmt.Sprintf("no binding for %s", describeResource(sel))))
			continue
		}
		add(b)
	}
	for _, sel := range spec.TargetRefPolicy {
		bs, err := r.bindingsOfPolicy(ctx, sel)
		if err != nil {
			return nil, err
		}
		if len(bs) == 0 {
			reason, err := r.whyNoBinding(ctx, sel)
			if err != nil {
				return nil, err
			}
			out = append(out, failed(policyResource(sel), reason))
			continue
		}
		for _, b := range bs {
			add(b)
		}
	}
	return out, nil
}

func failed(res taskv1alpha1.ResourceSelector, reason string) taskv1alpha1.TargetStatus {
	return taskv1alpha1.TargetStatus{Resource: res, Phase: taskv1alpha1.TargetFailed, Reason: reason}
}

// bindingOfResource returns the binding of the named template, nil when
// there is none. The binding must name that template: two kinds of the
// same name in different groups share a binding name.
func (r *Reconciler) bindingOfResource(ctx context.Context, sel taskv1alpha1.ResourceSelector) (workv1alpha1.BindingObject, error) {
	b := bindingutil.NewForTemplate(sel.Namespace != "")
	key := client.ObjectKey{Namespace: sel.Namespace, Name: names.BindingName(sel.Kind, sel.Name)}
	if err := r.apiReader.Get(ctx, key, b); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	if !places(b.GetBindingSpec().Resource, sel) {
		return nil, nil
	}
	return b, nil
}

// places reports whether a binding's template is the selected one; the
// version may differ (the detector records the version it watches).
func places(res workv1alpha1.ObjectReference, sel taskv1alpha1.ResourceSelector) bool {
	got, err1 := schema.ParseGroupVersion(res.APIVersion)
	want, err2 := schema.ParseGroupVersion(sel.APIVersion)
	return err1 == nil && err2 == nil && got.Group == want.Group &&
		res.Kind == sel.Kind && res.Namespace == sel.Namespace && res.Name == sel.Name
}

// bindingsOfPolicy returns the bindings the policy governs: labelled with
// it (the label holds names.LabelValue of the name) and naming it.
func (r *Reconciler) bindingsOfPolicy(ctx context.Context, sel taskv1alpha1.PolicySelector) ([]workv1alpha1.BindingObject, error) {
	kind := policyKind(sel)
	labels := client.MatchingLabels(names.PolicyLabels(kind, sel.Namespace, sel.Name))
	var out []workv1alpha1.BindingObject
	rbs := &workv1alpha1.ResourceBindingList{}
	opts := []client.ListOption{labels}
	if sel.Namespace != "" {
		opts = append(opts, client.InNamespace(sel.Namespace))
	}
	if err := r.apiReader.List(ctx, rbs, opts...); err != nil {
		return nil, err
	}
	for i := range rbs.Items {
		out = append(out, &rbs.Items[i])
	}
	if sel.Namespace == "" {
		crbs := &workv1alpha1.ClusterResourceBindingList{}
		if err := r.apiReader.List(ctx, crbs, labels); err != nil {
			return nil, err
		}
		for i := range crbs.Items {
			out = append(out, &crbs.Items[i])
		}
	}
	kept := out[:0]
	for _, b := range out {
		if ref := b.GetBindingSpec().PolicyRef; ref != nil && ref.Kind == kind && ref.Namespace == sel.Namespace && ref.Name == sel.Name {
			kept = append(kept, b)
		}
	}
	return kept, nil
}

// whyNoBinding says why a policy yields no target.
func (r *Reconciler) whyNoBinding(ctx context.Context, sel taskv1alpha1.PolicySelector) (string, error) {
	var policy client.Object = &policyv1alpha1.ClusterPropagationPolicy{}
	if sel.Namespace != "" {
		policy = &policyv1alpha1.PropagationPolicy{}
	}
	desc := fmt.Sprintf("%s %s", policyKind(sel), bindingKey(sel.Namespace, sel.Name))
	err := r.apiReader.Get(ctx, client.ObjectKey{Namespace: sel.Namespace, Name: sel.Name}, policy)
	switch {
	case apierrors.IsNotFound(err):
		return desc + " not found", nil
	case err != nil:
		return "", err
	}
	return desc + " governs no workload", nil
}

func policyKind(sel taskv1alpha1.PolicySelector) string {
	if sel.Namespace == "" {
		return "ClusterPropagationPolicy"
	}
	return "PropagationPolicy"
}

// policyResource names a policy in a target's resource, for the Failed
// target of a policy that yields no binding.
func policyResource(sel taskv1alpha1.PolicySelector) taskv1alpha1.ResourceSelector {
	return taskv1alpha1.ResourceSelector{
		APIVersion: policyv1alpha1.SchemeGroupVersion.String(),
		Kind:       policyKind(sel),
		Namespace:  sel.Namespace,
		Name:       sel.Name,
	}
}
