package workstatus

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/names"
	"github.com/shepherd-io/shepherd/pkg/scheme"
)

// TestPodMetricsReporterCost: the agent samples a Work at most once per
// period whatever else changes it, leaves Works of other clusters alone,
// and removes its last sample once the Work no longer asks for one.
// (Sampling itself runs against a real member in the FederatedHPA's
// integration test.)
func TestPodMetricsReporterCost(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	const period = 15 * time.Second
	sampled := func(age time.Duration) *workv1alpha1.PodMetricsSample {
		return &workv1alpha1.PodMetricsSample{SampleTime: metav1.NewTime(now.Add(-age))}
	}
	cases := []struct {
		name        string
		cluster     string
		asked       bool
		sample      *workv1alpha1.PodMetricsSample
		wantRequeue time.Duration
		wantSample  bool // after the reconcile
		wantWrites  int
	}{
		{name: "sampled within the period: not again before its end", cluster: "edge-1", asked: true, sample: sampled(5 * time.Second),
			wantRequeue: 10 * time.Second, wantSample: true},
		{name: "no longer asked: the last sample goes", cluster: "edge-1", sample: sampled(time.Minute), wantWrites: 1},
		{name: "never asked: nothing", cluster: "edge-1"},
		{name: "another cluster's Work: nothing", cluster: "edge-2", asked: true, sample: sampled(time.Minute), wantSample: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: names.ExecutionNamespace(tc.cluster), Name: "shop.web-deployment",
				Labels: map[string]string{workv1alpha1.LabelCluster: tc.cluster}}}
			if tc.asked {
				w.Labels[workv1alpha1.LabelPodMetrics] = "web"
			}
			w.Status.PodMetrics = tc.sample
			writes := 0
			c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(w).WithStatusSubresource(w).
				WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
					writes++
					return c.SubResource(sub).Patch(ctx, obj, p, opts...)
				}}).Build()
			r := &podMetricsReporter{client: c, pullCluster: "edge-1", period: period, now: func() time.Time { return now }}
			res, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKeyFromObject(w)})
			if err != nil {
				t.Fatal(err)
			}
			if res.RequeueAfter != tc.wantRequeue || writes != tc.wantWrites {
				t.Errorf("requeue after %s and %d writes, want %s and %d", res.RequeueAfter, writes, tc.wantRequeue, tc.wantWrites)
			}
			got := &workv1alpha1.Work{}
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(w), got); err != nil {
				t.Fatal(err)
			}
			if (got.Status.PodMetrics != nil) != tc.wantSample {
				t.Errorf("sample %+v, want one: %v", got.Status.PodMetrics, tc.wantSample)
			}
		})
	}
}
