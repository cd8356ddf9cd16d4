package index

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/mcs"
	"github.com/shepherd-io/shepherd/pkg/names"
)

func TestKeys(t *testing.T) {
	ref := names.BindingRef{Kind: workv1alpha1.KindResourceBinding, Namespace: "shop", Name: "web"}
	for _, tc := range []struct {
		name string
		got  []string
		want []string
	}{
		{"a Work by its binding", worksByBinding(&workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{workv1alpha1.AnnotationBinding: ref.String()}}}),
			[]string{"ResourceBinding/shop/web"}},
		{"a Work of no binding", worksByBinding(&workv1alpha1.Work{}), nil},
		{"a binding by its active targets", targetClusters(&workv1alpha1.ResourceBinding{Spec: workv1alpha1.BindingSpec{Clusters: []workv1alpha1.TargetCluster{
			{Name: "m1", State: workv1alpha1.TargetBound}, {Name: "m2", State: workv1alpha1.TargetUnscheduled}, {Name: "m3", State: workv1alpha1.TargetScheduled}}}}),
			[]string{"m1", "m3"}},
		{"a cluster-scoped binding without targets", targetClusters(&workv1alpha1.ClusterResourceBinding{}), nil},
		{"an import Work by its Service", importedService(&workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{
			mcs.LabelServiceNamespace: "shop", mcs.LabelServiceName: "checkout"}}}), []string{"shop/checkout"}},
		{"a Work that imports no Service", importedService(&workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{
			workv1alpha1.LabelManagedBy: workv1alpha1.ManagedByShepherd}}}), nil},
	} {
		if !slices.Equal(tc.got, tc.want) {
			t.Errorf("%s: keys %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}
