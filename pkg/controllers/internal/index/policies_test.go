package index

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/names"
)

func TestPolicyKeys(t *testing.T) {
	pp := &workv1alpha1.PolicyReference{Kind: "PropagationPolicy", Namespace: "shop", Name: "web"}
	cpp := &workv1alpha1.PolicyReference{Kind: "ClusterPropagationPolicy", Name: "all"}
	unclaimed := workv1alpha1.BindingStatus{Conditions: []metav1.Condition{{Type: workv1alpha1.ConditionClaimed, Status: metav1.ConditionFalse}}}
	tied := map[string]string{workv1alpha1.AnnotationTiedPolicies: names.PolicyRef(pp.Kind, pp.Namespace, pp.Name) + "," + names.PolicyRef(cpp.Kind, "", cpp.Name)}
	for _, tc := range []struct {
		name string
		got  []string
		want []string
	}{
		{"a binding by its policy", GoverningPolicy(&workv1alpha1.ResourceBinding{Spec: workv1alpha1.BindingSpec{PolicyRef: pp}}),
			[]string{"PropagationPolicy shop/web"}},
		{"a cluster-scoped binding by its cluster policy", GoverningPolicy(&workv1alpha1.ClusterResourceBinding{Spec: workv1alpha1.BindingSpec{PolicyRef: cpp}}),
			[]string{"ClusterPropagationPolicy all"}},
		{"an unclaimed binding by no policy", GoverningPolicy(&workv1alpha1.ResourceBinding{Spec: workv1alpha1.BindingSpec{PolicyRef: pp}, Status: unclaimed}), nil},
		{"a binding without a policy (attached)", GoverningPolicy(&workv1alpha1.ResourceBinding{}), nil},
		{"not a binding", GoverningPolicy(&workv1alpha1.Work{}), nil},
		{"a binding by each tied policy", TiedPolicies(&workv1alpha1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Annotations: tied}}),
			[]string{"PropagationPolicy shop/web", "ClusterPropagationPolicy all"}},
		{"a binding without ties", TiedPolicies(&workv1alpha1.ClusterResourceBinding{}), nil},
	} {
		if !slices.Equal(tc.got, tc.want) {
			t.Errorf("%s: keys %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}
