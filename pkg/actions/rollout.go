package actions

import (
	"context"
	"fmt"
	"slices"

	authenticationv1 "k8s.io/api/authentication/v1"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// GetBinding reads the binding key names.
func GetBinding(ctx context.Context, c client.Client, key BindingKey) (workv1alpha1.BindingObject, error) {
	var b workv1alpha1.BindingObject = &workv1alpha1.ResourceBinding{}
	objKey := client.ObjectKey{Namespace: key.Namespace, Name: key.Name}
	if key.Cluster {
		b, objKey = &workv1alpha1.ClusterResourceBinding{}, client.ObjectKey{Name: key.Name}
	}
	if err := c.Get(ctx, objKey, b); err != nil {
		return nil, err
	}
	return b, nil
}

// FindBinding reads the ResourceBinding of namespace and name, else the
// ClusterResourceBinding of name (a cluster-scoped template's).
func FindBinding(ctx context.Context, c client.Client, namespace, name string) (workv1alpha1.BindingObject, BindingKey, error) {
	key := BindingKey{Namespace: namespace, Name: name}
	b, err := GetBinding(ctx, c, key)
	if apierrors.IsNotFound(err) {
		key = BindingKey{Cluster: true, Name: name}
		if cb, cerr := GetBinding(ctx, c, key); cerr == nil {
			return cb, key, nil
		}
	}
	return b, key, err
}

// rolloutOf returns b's rollout status, or a StateError when b has no
// Progressive or Staged rollout going.
func rolloutOf(b workv1alpha1.BindingObject) (*workv1alpha1.RolloutStatus, error) {
	if !b.GetBindingSpec().Rollout.Gated() {
		return nil, &StateError{fmt.Sprintf("%s has no Progressive or Staged rollout (its policy's spec.rollout)", b.GetName())}
	}
	st := b.GetBindingStatus().Rollout
	if st == nil || st.Revision == "" {
		return nil, &StateError{fmt.Sprintf("%s has no rollout status yet", b.GetName())}
	}
	return st, nil
}

// patchControl changes b's spec.rolloutControl with change, under an
// optimistic lock, and writes only when something changed.
func patchControl(ctx context.Context, c client.Client, b workv1alpha1.BindingObject, fieldOwner string, change func(*workv1alpha1.RolloutControl)) error {
	orig := b.DeepCopyObject().(client.Object)
	spec := b.GetBindingSpec()
	ctl := spec.RolloutControl.DeepCopy()
	if ctl == nil {
		ctl = &workv1alpha1.RolloutControl{}
	}
	before := ctl.DeepCopy()
	change(ctl)
	if equality.Semantic.DeepEqual(before, ctl) {
		return nil
	}
	spec.RolloutControl = ctl
	return c.Patch(ctx, b, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}), client.FieldOwner(fieldOwner))
}

// PauseRollout holds (paused) or resumes a binding's rollout.
func PauseRollout(ctx context.Context, c client.Client, key BindingKey, paused bool, fieldOwner string) error {
	return onFreshBinding(ctx, c, key, func(b workv1alpha1.BindingObject) error {
		if !b.GetBindingSpec().Rollout.Gated() {
			_, err := rolloutOf(b)
			return err
		}
		return patchControl(ctx, c, b, fieldOwner, func(ctl *workv1alpha1.RolloutControl) { ctl.Paused = paused })
	})
}

// ApproveRollout approves the stage of the revision going out that waits
// for an approval, or stage when not empty (the approval that stage
// needs: Before when it has not started, else After), and returns the
// stage and kind of approval given. Approvals of other revisions are
// dropped: they can never count again. The approval is recorded in the
// name of c's user, as the hub knows it: the hub's admission policy
// refuses an approval in anyone else's name.
func ApproveRollout(ctx context.Context, c client.Client, key BindingKey, stage, fieldOwner string) (string, policyv1alpha1.ApprovalMode, error) {
	approvedBy, err := SelfUser(ctx, c)
	if err != nil {
		return "", "", err
	}
	var name string
	var when policyv1alpha1.ApprovalMode
	err = onFreshBinding(ctx, c, key, func(b workv1alpha1.BindingObject) error {
		st, err := rolloutOf(b)
		if err != nil {
			return err
		}
		if name, when, err = waitingApproval(b.GetBindingSpec(), st, stage); err != nil {
			return err
		}
		return patchControl(ctx, c, b, fieldOwner, func(ctl *workv1alpha1.RolloutControl) {
			ctl.Approvals = slices.DeleteFunc(ctl.Approvals, func(a workv1alpha1.RolloutApproval) bool { return a.Revision != st.Revision })
			if !ctl.Approved(st.Revision, name, when) && len(ctl.Approvals) < workv1alpha1.MaxRolloutApprovals {
				ctl.Approvals = append(ctl.Approvals, workv1alpha1.RolloutApproval{Revision: st.Revision, Stage: name, When: when, ApprovedBy: approvedBy})
			}
		})
	})
	if err != nil {
		return "", "", err
	}
	return name, when, nil
}

// waitingApproval finds the approval to give: for the named stage, or the
// first stage that has not started and needs one (Before of it, or After
// of the stage before it).
func waitingApproval(spec *workv1alpha1.BindingSpec, st *workv1alpha1.RolloutStatus, stage string) (string, policyv1alpha1.ApprovalMode, error) {
	stages := spec.Rollout.Stages
	started := map[string]bool{}
	for _, s := range st.Stages {
		started[s.Name] = s.StartedAt != nil
	}
	for i, s := range stages {
		if stage != "" && s.Name != stage {
			continue
		}
		switch {
		case stage != "" && s.Approval == policyv1alpha1.ApprovalBefore && !started[s.Name]:
			return s.Name, policyv1alpha1.ApprovalBefore, nil
		case stage != "" && s.Approval == policyv1alpha1.ApprovalAfter:
			return s.Name, policyv1alpha1.ApprovalAfter, nil
		case stage != "":
			return "", "", &StateError{fmt.Sprintf("stage %s needs no approval now (approval %s)", s.Name, approvalOf(s))}
		}
		if started[s.Name] {
			continue
		}
		if i > 0 && stages[i-1].Approval == policyv1alpha1.ApprovalAfter {
			return stages[i-1].Name, policyv1alpha1.ApprovalAfter, nil
		}
		if s.Approval == policyv1alpha1.ApprovalBefore {
			return s.Name, policyv1alpha1.ApprovalBefore, nil
		}
		break
	}
	if stage != "" {
		return "", "", &StateError{fmt.Sprintf("the rollout has no stage %q", stage)}
	}
	return "", "", &StateError{fmt.Sprintf("no stage waits for an approval (phase %s: %s)", st.Phase, st.Message)}
}

func approvalOf(s policyv1alpha1.RolloutStage) policyv1alpha1.ApprovalMode {
	if s.Approval == "" {
		return policyv1alpha1.ApprovalNone
	}
	return s.Approval
}

// UndoRollout abandons the revision going out: the clusters it reached get
// the last good revision back. It returns the revision undone.
func UndoRollout(ctx context.Context, c client.Client, key BindingKey, fieldOwner string) (string, error) {
	var undone string
	err := onFreshBinding(ctx, c, key, func(b workv1alpha1.BindingObject) error {
		st, err := rolloutOf(b)
		if err != nil {
			return err
		}
		if st.Revision == st.LastGoodRevision {
			return &StateError{fmt.Sprintf("revision %s is the last good revision: there is nothing to undo", st.Revision)}
		}
		if st.LastGoodRevision == "" {
			return &StateError{fmt.Sprintf("revision %s has no previous good revision to go back to", st.Revision)}
		}
		undone = st.Revision
		return patchControl(ctx, c, b, fieldOwner, func(ctl *workv1alpha1.RolloutControl) { ctl.UndoRevision = st.Revision })
	})
	if err != nil {
		return "", err
	}
	return undone, nil
}

// SelfUser is the user name the hub knows c by (a SelfSubjectReview).
func SelfUser(ctx context.Context, c client.Client) (string, error) {
	r := &authenticationv1.SelfSubjectReview{}
	if err := c.Create(ctx, r); err != nil {
		return "", fmt.Errorf("asking the hub who this is (SelfSubjectReview): %w", err)
	}
	return r.Status.UserInfo.Username, nil
}
