package index

import (
	"slices"
	"testing"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

func TestDependents(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  []string
		want []string
	}{
		{"a dependency by each dependent", dependents(&workv1alpha1.ResourceBinding{Spec: workv1alpha1.BindingSpec{RequiredBy: []workv1alpha1.BindingSnapshot{
			{Namespace: "shop", Name: "web-deployment"}, {Namespace: "shop", Name: "api-deployment", Clusters: []workv1alpha1.TargetCluster{{Name: "m1"}}}}}}),
			[]string{"shop/web-deployment", "shop/api-deployment"}},
		{"a binding nothing requires", dependents(&workv1alpha1.ResourceBinding{}), nil},
		{"the key a dependent is looked up by", []string{DependentKey("shop", "web-deployment")}, []string{"shop/web-deployment"}},
	} {
		if !slices.Equal(tc.got, tc.want) {
			t.Errorf("%s: keys %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}
