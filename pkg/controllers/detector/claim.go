package detector

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// Event reasons on templates when their binding loses or regains a policy.
const (
	// ReasonBindingUnclaimed: no policy governs the template any longer;
	// its binding and member copies stay as they are.
	ReasonBindingUnclaimed = "BindingUnclaimed"
	// ReasonBindingClaimed: a policy claimed an unclaimed binding.
	ReasonBindingClaimed = "BindingClaimed"
)

// The Claimed condition carries no observedGeneration: it describes the
// policies, not the binding's spec, and must not be rewritten by each
// template edit the binding follows.

// unclaimedCondition is the Claimed condition of a binding that ref named
// and that no policy governs any longer; policyExists says whether the
// policy ref names still exists (it then no longer selects the template).
func unclaimedCondition(ref *workv1alpha1.PolicyReference, policyExists bool) metav1.Condition {
	policy := names.PolicyRef(ref.Kind, ref.Namespace, ref.Name)
	c := metav1.Condition{Type: workv1alpha1.ConditionClaimed, Status: metav1.ConditionFalse,
		Reason: workv1alpha1.ReasonPolicyDeleted,
		Message: policy + " was deleted and no other policy selects the template: the binding and its member copies stay as they are " +
			"(template edits still reach them; the placement does not change) until the template is deleted or a policy selects it"}
	if policyExists {
		c.Reason = workv1alpha1.ReasonPolicyNoLongerMatches
		c.Message = policy + " no longer selects the template and no other policy does: the binding and its member copies stay as they are " +
			"(template edits still reach them; the placement does not change) until the template is deleted or a policy selects it"
	}
	return c
}

// claimedCondition is the Claimed condition of a binding p claimed back.
func claimedCondition(p policyv1alpha1.PolicyObject) metav1.Condition {
	return metav1.Condition{Type: workv1alpha1.ConditionClaimed, Status: metav1.ConditionTrue,
		Reason:  workv1alpha1.ReasonPolicyClaimed,
		Message: names.PolicyRef(policyKind(p), p.GetNamespace(), p.GetName()) + " governs the template again"}
}

// unclaim marks the binding of a template that no policy governs any
// longer as unclaimed (Claimed=False) instead of deleting it: the
// workloads keep running where they run, as in Karmada, so that a policy
// dropped by mistake (a GitOps sync, a rename) takes nothing down. The
// binding goes with its template, or is claimed by the next policy that
// selects the template (see Govern). Nothing is written when the
// condition already says so.
func (r *Reconciler) unclaim(ctx context.Context, tmpl *unstructured.Unstructured, b workv1alpha1.BindingObject) error {
	spec := b.GetBindingSpec()
	ref := spec.PolicyRef
	if ref == nil || b.GetDeletionTimestamp() != nil {
		return nil // attached: the dependencies controller's to keep or delete
	}
	if spec.Resource.UID != "" && spec.Resource.UID != string(tmpl.GetUID()) {
		// The template it placed is gone; this one merely has its name.
		return r.unbind(ctx, b, true)
	}
	exists, err := r.policyExists(ctx, ref)
	if err != nil {
		return err
	}
	c := unclaimedCondition(ref, exists)
	wrote, err := r.setClaimed(ctx, b, c)
	if err != nil {
		return err
	}
	if err := r.followTemplate(ctx, b, tmpl); err != nil || !wrote {
		return err
	}
	logf.FromContext(ctx).Info("binding unclaimed: no policy governs its template; it keeps its placement", "binding", b.GetName(), "reason", c.Reason)
	r.recorder.Eventf(tmpl, b, "Warning", ReasonBindingUnclaimed, "ApplyPolicy", "%s", bindingutil.Note(fmt.Sprintf(
		"%s %s: %s", bindingutil.KindOf(b), b.GetName(), c.Message)))
	return nil
}

// reclaim turns the Claimed condition of an unclaimed binding True once p
// governs its template again.
func (r *Reconciler) reclaim(ctx context.Context, tmpl *unstructured.Unstructured, b workv1alpha1.BindingObject, p policyv1alpha1.PolicyObject) error {
	if !workv1alpha1.Unclaimed(b.GetBindingStatus()) {
		return nil
	}
	c := claimedCondition(p)
	if wrote, err := r.setClaimed(ctx, b, c); !wrote {
		return err
	}
	r.recorder.Eventf(tmpl, p, "Normal", ReasonBindingClaimed, "ApplyPolicy", "%s", bindingutil.Note(fmt.Sprintf(
		"%s %s claimed binding %s", policyKind(p), client.ObjectKeyFromObject(p), b.GetName())))
	return nil
}

// setClaimed writes c into b's status when it changes it, under an
// optimistic lock (other controllers write the status's conditions too,
// and a merge patch replaces the whole list). It returns whether it wrote.
func (r *Reconciler) setClaimed(ctx context.Context, b workv1alpha1.BindingObject, c metav1.Condition) (bool, error) {
	orig := b.DeepCopyObject().(client.Object)
	if !meta.SetStatusCondition(&b.GetBindingStatus().Conditions, c) {
		return false, nil
	}
	if err := r.client.Status().Patch(ctx, b, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}), client.FieldOwner(workv1alpha1.FieldManager)); err != nil {
		return false, fmt.Errorf("writing the Claimed condition of %s %s: %w", bindingutil.KindOf(b), b.GetName(), err)
	}
	return true, nil
}

// policyExists says whether the policy ref names exists (and is not being
// deleted).
func (r *Reconciler) policyExists(ctx context.Context, ref *workv1alpha1.PolicyReference) (bool, error) {
	var p client.Object = &policyv1alpha1.PropagationPolicy{}
	if ref.Kind == KindClusterPropagationPolicy {
		p = &policyv1alpha1.ClusterPropagationPolicy{}
	}
	err := r.client.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, p)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil && p.GetDeletionTimestamp() == nil, client.IgnoreNotFound(err)
}

// followTemplate records the version of the template an unclaimed binding
// follows (templateVersion), as bind does for a claimed one, so that the
// binding controller renders template edits to the clusters the binding
// is on. Nothing else of the binding changes. A merge patch of those
// fields only: applying the detector's fields without a policy would drop
// the placement.
func (r *Reconciler) followTemplate(ctx context.Context, b workv1alpha1.BindingObject, tmpl *unstructured.Unstructured) error {
	v := versionOf(tmpl)
	if recordedVersion(b).same(v) {
		return nil
	}
	patch := map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{
			workv1alpha1.AnnotationTemplateGeneration: nilIfEmpty(v.generation),
			workv1alpha1.AnnotationTemplateMetadata:   nilIfEmpty(v.metadata),
		}},
		"spec": map[string]any{"resource": map[string]any{"resourceVersion": v.resourceVersion}},
	}
	data, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	if err := r.client.Patch(ctx, b, client.RawPatch(types.MergePatchType, data), client.FieldOwner(workv1alpha1.FieldManager)); err != nil {
		return client.IgnoreNotFound(err)
	}
	return nil
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
