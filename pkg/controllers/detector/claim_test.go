package detector

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

func TestClaimConditions(t *testing.T) {
	ref := &workv1alpha1.PolicyReference{Kind: KindPropagationPolicy, Namespace: "ns", Name: "web"}
	tests := []struct {
		name      string
		cond      metav1.Condition
		status    metav1.ConditionStatus
		reason    string
		mentions  string
		unclaimed bool
	}{
		{name: "policy deleted", cond: unclaimedCondition(ref, false), status: metav1.ConditionFalse,
			reason: workv1alpha1.ReasonPolicyDeleted, mentions: "PropagationPolicy ns/web was deleted", unclaimed: true},
		{name: "policy no longer selects the template", cond: unclaimedCondition(ref, true), status: metav1.ConditionFalse,
			reason: workv1alpha1.ReasonPolicyNoLongerMatches, mentions: "PropagationPolicy ns/web no longer selects", unclaimed: true},
		{name: "claimed again", cond: claimedCondition(pp("ns", "other", 0, sel("web", nil))), status: metav1.ConditionTrue,
			reason: workv1alpha1.ReasonPolicyClaimed, mentions: "PropagationPolicy ns/other governs", unclaimed: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.cond
			if c.Type != workv1alpha1.ConditionClaimed || c.Status != tt.status || c.Reason != tt.reason {
				t.Errorf("condition %+v", c)
			}
			if !strings.Contains(c.Message, tt.mentions) {
				t.Errorf("message %q does not say %q", c.Message, tt.mentions)
			}
			st := &workv1alpha1.BindingStatus{Conditions: []metav1.Condition{c}}
			if got := workv1alpha1.Unclaimed(st); got != tt.unclaimed {
				t.Errorf("Unclaimed = %v, want %v", got, tt.unclaimed)
			}
		})
	}
	if workv1alpha1.Unclaimed(&workv1alpha1.BindingStatus{}) {
		t.Error("a binding without a Claimed condition counts as unclaimed")
	}
}
