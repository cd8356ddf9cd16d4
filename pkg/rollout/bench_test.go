package rollout

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// BenchmarkDecide1000 decides one step of a Staged rollout over 1,000
// clusters in 10 stages, half-way through: the work the binding
// controller does per reconcile of such a binding, besides the API calls.
func BenchmarkDecide1000(b *testing.B) {
	var stages []policyv1alpha1.RolloutStage
	for i := range 10 {
		stages = append(stages, stage(fmt.Sprintf("s%d", i), policyv1alpha1.ApprovalNone, 0))
	}
	s := staged(stages...)
	s.MaxConcurrency = ptr.To(intstr.FromString("5%"))
	prior := &workv1alpha1.RolloutStatus{Revision: "b", LastGoodRevision: "a", StartedAt: at(0)}
	var clusters []Cluster
	for i := range 1000 {
		rev := "a"
		if i < 500 {
			rev = "b"
		}
		c := Cluster{Name: fmt.Sprintf("m%04d", i), HasWork: true, Revision: rev, Ready: true, Stages: []int{i / 100}}
		clusters = append(clusters, c)
		prior.Clusters = append(prior.Clusters, was(c.Name, rev, 0, 0, false))
	}
	in := Input{Strategy: s, Target: "b", Prior: prior, Clusters: clusters, Now: t0.Add(time.Minute)}
	b.ReportAllocs()
	for b.Loop() {
		Decide(in)
	}
}
