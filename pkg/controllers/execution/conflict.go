package execution

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// ReasonConflict is the Applied condition's reason when a member object
// that the Work does not own stands where a manifest would go.
const ReasonConflict = "Conflict"

// ConflictError says that a manifest's member object exists and is not
// the Work's to change.
type ConflictError struct {
	Cluster string
	Object  string
	// Owner is the Work named by the object's annotation; empty when
	// Shepherd never wrote the object.
	Owner string
	// OwnerExists: the owning Work is still on the hub, so even
	// Overwrite does not take the object from it.
	OwnerExists bool
	// Diff says how the object differs from what would be sent, when
	// whenToTakeOver: IfNoDiff declined to take it over for that.
	Diff string
	// NotFrom is applyStrategy.takeOverFrom when the object is not that
	// system's (so not taken over even if it matches).
	NotFrom string
}

func (e *ConflictError) Error() string {
	switch {
	case e.OwnerExists:
		return fmt.Sprintf("conflict: %s in cluster %s belongs to Work %s, which still exists; two Works never share an object, "+
			"so Shepherd leaves it untouched (is the same cluster joined under two names, or do two templates render the same object?)",
			e.Object, e.Cluster, e.Owner)
	case e.Owner != "":
		return fmt.Sprintf("conflict: %s already exists in cluster %s and belongs to Work %s, not to this one; Shepherd leaves it untouched. "+
			"To adopt it, set spec.conflictResolution: Overwrite on the policy", e.Object, e.Cluster, e.Owner)
	}
	if e.NotFrom != "" {
		return fmt.Sprintf("conflict: %s already exists in cluster %s and was written neither by Shepherd nor by %s, so applyStrategy.takeOverFrom: %s "+
			"leaves it untouched, even if it matches. It is not part of the fleet being moved: remove it from the member, or adopt it with a policy "+
			"without takeOverFrom", e.Object, e.Cluster, e.NotFrom, e.NotFrom)
	}
	if e.Diff != "" {
		return fmt.Sprintf("conflict: %s already exists in cluster %s, was not created by Shepherd, and differs from what would be sent "+
			"(%s), so applyStrategy.whenToTakeOver: IfNoDiff leaves it untouched. Make them match, or set spec.conflictResolution: Overwrite "+
			"without whenToTakeOver to adopt it anyway", e.Object, e.Cluster, e.Diff)
	}
	return fmt.Sprintf("conflict: %s already exists in cluster %s and was not created by Shepherd; Shepherd leaves it untouched. "+
		"To adopt it, set spec.conflictResolution: Overwrite on the policy (or remove the object from the member)", e.Object, e.Cluster)
}

func isConflict(err error) bool {
	var ce *ConflictError
	return errors.As(err, &ce)
}

// mayAdopt decides whether the Work may take over a member object whose
// annotation names owner (empty: not written by Shepherd). Only under
// Overwrite, and never from another Work that still exists on the hub.
func (r *Reconciler) mayAdopt(ctx context.Context, work *workv1alpha1.Work, id workv1alpha1.ResourceIdentifier, owner string) error {
	conflict := &ConflictError{Cluster: clusterOf(work), Object: describe(id), Owner: owner}
	if work.Spec.ConflictResolution != policyv1alpha1.ConflictOverwrite {
		return conflict
	}
	if owner == "" {
		return nil
	}
	ns, name, ok := strings.Cut(owner, "/")
	if !ok {
		return nil // not a Work key: an annotation someone else wrote
	}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &workv1alpha1.Work{})
	switch {
	case apierrors.IsNotFound(err):
		return nil // its Work is gone: the object is an orphan
	case apierrors.IsForbidden(err):
		// An agent may read its own cluster's Works only: a Work it cannot
		// see is taken to exist, so nothing is taken from it.
	case err != nil:
		return err
	}
	conflict.OwnerExists = true
	return conflict
}
