package v1alpha1

import policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"

// CopyApplied is the state of a copy that is applied and whose kind no
// health rule judges (a ConfigMap, a Role, a NetworkPolicy): there is
// nothing more to say about it than that it is there.
const CopyApplied = "Applied"

// State says in one word what a cluster's copy is, for people (`shepherd
// get placements`, the dashboard): why it is not applied when it is not
// (the Work's reason, such as Conflict or Failed), its health when a rule
// judged it Healthy or Unhealthy, CopyApplied when it is applied and
// nothing judged its health, and Unknown before anything was collected.
func (s *AggregatedStatusItem) State() string {
	switch {
	case !s.Applied && s.AppliedReason != "":
		return s.AppliedReason
	case s.Health == policyv1alpha1.ResourceHealthy || s.Health == policyv1alpha1.ResourceUnhealthy:
		return string(s.Health)
	case s.Applied:
		return CopyApplied
	default:
		return string(policyv1alpha1.ResourceUnknown)
	}
}
