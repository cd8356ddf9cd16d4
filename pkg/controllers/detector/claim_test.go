package detector

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
	"github.com/shepherd-io/shepherd/pkg/scheme"
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

// TestUnclaimedBindingsFollowTheSameEdits: an unclaimed binding (no policy
// governs its template any longer) is patched for the same edits of its
// template as a claimed one, and for nothing else: a write of the
// template's status alone is no edit. The patch records the new version,
// so that following it again writes nothing.
func TestUnclaimedBindingsFollowTheSameEdits(t *testing.T) {
	for _, tc := range templateEdits() {
		t.Run(tc.name, func(t *testing.T) {
			written, err := desiredBinding(interpreter.New(), tc.was, true, dividedPolicy(), nil)
			if err != nil {
				t.Fatal(err)
			}
			patches := 0
			c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(written).
				WithInterceptorFuncs(interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
					patches++
					return c.Patch(ctx, obj, patch, opts...)
				}}).Build()
			r := &Reconciler{client: c}
			b := written.DeepCopyObject().(workv1alpha1.BindingObject)
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(b), b); err != nil {
				t.Fatal(err)
			}
			if err := r.followTemplate(context.Background(), b, tc.now); err != nil {
				t.Fatal(err)
			}
			if got := patches > 0; got != tc.follow {
				t.Fatalf("binding patched = %v, want %v", got, tc.follow)
			}
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(b), b); err != nil {
				t.Fatal(err)
			}
			if !recordedVersion(b).same(versionOf(tc.now)) {
				t.Errorf("the binding records %+v, the template is at %+v", recordedVersion(b), versionOf(tc.now))
			}
			if b.GetBindingSpec().Placement.ClusterAffinity == nil {
				t.Error("following the template dropped the binding's placement")
			}
			before := patches
			if err := r.followTemplate(context.Background(), b, tc.now); err != nil {
				t.Fatal(err)
			}
			if patches != before {
				t.Error("following the same version again patched the binding")
			}
		})
	}
}
