package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ConditionClaimed on a binding is False while no policy governs its
// template any longer (the policy was deleted, or no longer selects the
// template): the binding and its member copies stay where they are,
// unclaimed, until the template is deleted or another policy claims it.
// It turns True when a policy claims the template again. Bindings that
// never lost their policy carry no Claimed condition.
const ConditionClaimed = "Claimed"

// Reasons of the Claimed condition.
const (
	// ReasonPolicyDeleted (False): the policy the binding names is gone.
	ReasonPolicyDeleted = "PolicyDeleted"
	// ReasonPolicyNoLongerMatches (False): the policy exists but no longer
	// selects the template, and no other policy does.
	ReasonPolicyNoLongerMatches = "PolicyNoLongerMatches"
	// ReasonPolicyClaimed (True): a policy claimed the template again.
	ReasonPolicyClaimed = "PolicyClaimed"
)

// Unclaimed reports whether a binding lost its policy and waits, keeping
// its placement, for its template to be deleted or claimed again: the
// scheduler, failover and descheduler then leave its targets alone.
func Unclaimed(status *BindingStatus) bool {
	return meta.IsStatusConditionPresentAndEqual(status.Conditions, ConditionClaimed, metav1.ConditionFalse)
}
