package federatedhpa_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/shepherd-io/shepherd/api/autoscaling/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/agent"
	"github.com/shepherd-io/shepherd/pkg/controllers/workstatus"
	"github.com/shepherd-io/shepherd/pkg/names"
	"github.com/shepherd-io/shepherd/test/fleetenv"
	"github.com/shepherd-io/shepherd/test/testenv"
)

// pullMetricMaxAge: a Pull member whose agent's newest sample the hub
// first read longer ago is left out as stale.
const pullMetricMaxAge = 10 * time.Second

// pullAgentOptions time the Pull member's agent: a fast Lease, and its
// pods' metrics sampled every second.
func pullAgentOptions() agent.Options {
	o := fleetenv.FastAgent()
	o.WorkStatus = workstatus.Options{PodMetricsPeriod: time.Second}
	return o
}

// TestPullMember runs a FederatedHPA over a Push member (member1) and a
// Pull member (member3) whose agent runs beside it, every controller on a
// real hub: the hub never reaches member3, whose utilization comes from
// the sample its agent reports in the target's Work, and only in that
// Work (the Push member's Work is not asked for one); a load rise in the
// Pull member alone scales the template; a Pods metric added to the
// FederatedHPA is asked for in the Work's annotation and read through the
// agent from the member's custom.metrics.k8s.io; once the agent stops
// reporting, the member is left out as stale and named; once the
// FederatedHPA goes, the Work no longer asks, and the agent clears its
// sample.
func TestPullMember(t *testing.T) {
	env := liveFleet.Fleet(t)
	ctx := context.Background()
	const ns, name = "fhpa-pull", "web"
	fleetenv.CreateNamespace(t, env.Hub, ns)
	fleetenv.ApplyYAML(t, env.Hub, "test", liveWorkload(ns, name, "member3", 2, 40))
	t.Cleanup(func() { deleteLiveWorkload(t, env.Hub, ns, name) })
	key := createLiveFHPA(t, ctx, env.Hub, ns, name)
	workOf := func(cluster string) client.ObjectKey {
		return client.ObjectKey{Namespace: names.ExecutionNamespace(cluster), Name: names.WorkName(ns, names.BindingName("Deployment", name))}
	}

	t.Run("the Pull member's utilization comes from its agent", func(t *testing.T) {
		waitStatus(t, env.Hub, key, func(st autoscalingv1alpha1.FederatedHPAStatus) error {
			if err := clusterUtilization(st, map[string]int32{"member1": 40, "member3": 40}); err != nil {
				return err
			}
			return clusterPods(st, map[string]int32{"member1": 1, "member3": 1})
		})
		pull := getWork(t, env.Hub, workOf("member3"))
		s := pull.Status.PodMetrics
		if pull.Labels[workv1alpha1.LabelPodMetrics] != name || s == nil || len(s.Pods) != 1 || s.Error != "" || s.Selector != "app="+name {
			t.Fatalf("the Pull member's Work: labels %v, sample %+v; want it asked for and reported", pull.Labels, s)
		}
		if c := s.Pods[0].Containers; len(c) != 1 || c[0].CPUUsage == nil || c[0].CPUUsage.MilliValue() != 40 || c[0].CPURequest.MilliValue() != 100 {
			t.Fatalf("the sample's containers %+v, want 40m used of 100m", c)
		}
		push := getWork(t, env.Hub, workOf("member1"))
		if _, asked := push.Labels[workv1alpha1.LabelPodMetrics]; asked || push.Status.PodMetrics != nil {
			t.Fatalf("the Push member's Work: labels %v, sample %+v; want neither (the hub reads it itself)", push.Labels, push.Status.PodMetrics)
		}
	})

	t.Run("a load rise in the Pull member alone scales the template", func(t *testing.T) {
		// member1 at 40%, member3 at 150%: an average of 95% against 50%.
		fleetenv.SetSimulatedCPU(t, env.Members["member3"], ns, name, 150)
		waitStatus(t, env.Hub, key, func(st autoscalingv1alpha1.FederatedHPAStatus) error {
			if err := clusterUtilization(st, map[string]int32{"member1": 40, "member3": 150}); err != nil {
				return err
			}
			if c := condition(st, autoscalingv2.AbleToScale); st.LastScaleTime == nil || c.Reason != "SucceededRescale" {
				return fmt.Errorf("not scaled yet: %+v", c)
			}
			return nil
		})
		waitReplicas(t, env.Hub, ns, name, 8)
	})

	t.Run("a Pods metric of the Pull member comes from its agent", func(t *testing.T) {
		for _, m := range []string{"member1", "member3"} {
			fleetenv.SetSimulatedPodsMetric(t, env.Members[m], ns, name, "rps", "5")
		}
		fhpa := &autoscalingv1alpha1.FederatedHPA{}
		if err := env.Hub.Get(ctx, key, fhpa); err != nil {
			t.Fatal(err)
		}
		v := resource.MustParse("10")
		fhpa.Spec.Metrics = append(fhpa.Spec.Metrics, autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
			Metric: autoscalingv2.MetricIdentifier{Name: "rps"}, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: &v}}})
		if err := env.Hub.Update(ctx, fhpa); err != nil {
			t.Fatal(err)
		}
		waitStatus(t, env.Hub, key, func(st autoscalingv1alpha1.FederatedHPAStatus) error {
			for _, m := range st.CurrentMetrics {
				if m.Pods != nil && m.Pods.Current.AverageValue != nil && m.Pods.Current.AverageValue.Value() == 5 {
					if c := condition(st, autoscalingv2.ScalingActive); strings.Contains(c.Message, "left out") {
						return fmt.Errorf("ScalingActive %q", c.Message)
					}
					return nil
				}
			}
			return fmt.Errorf("currentMetrics %+v, want rps at 5 a pod", st.CurrentMetrics)
		})
		pull := getWork(t, env.Hub, workOf("member3"))
		s := pull.Status.PodMetrics
		if pull.Annotations[workv1alpha1.AnnotationCustomMetrics] != `[{"name":"rps"}]` || s == nil || len(s.CustomMetrics) != 1 ||
			s.CustomMetrics[0].Name != "rps" || s.CustomMetrics[0].Error != "" || len(s.CustomMetrics[0].Pods) == 0 {
			t.Fatalf("the Pull member's Work: annotations %v, sample %+v; want rps asked for and reported", pull.Annotations, s)
		}
		for _, v := range s.CustomMetrics[0].Pods {
			if v.Value.Value() != 5 {
				t.Errorf("the sample's rps of %s: %s, want 5", v.Pod, v.Value.String())
			}
		}
	})

	t.Run("an agent that stops reporting leaves its member out as stale", func(t *testing.T) {
		if err := env.Fleet.StopAgent("member3"); err != nil {
			t.Fatal(err)
		}
		waitStatus(t, env.Hub, key, func(st autoscalingv1alpha1.FederatedHPAStatus) error {
			for _, c := range st.Clusters {
				if c.Name == "member3" && strings.Contains(c.Excluded, "metrics stale: the agent's newest sample was first read") {
					if m := condition(st, autoscalingv2.ScalingActive).Message; !strings.Contains(m, "member3 (metrics stale") {
						return fmt.Errorf("ScalingActive %q does not name member3", m)
					}
					return nil
				}
			}
			return fmt.Errorf("member3 not left out as stale: %+v", st.Clusters)
		})
		if err := env.Fleet.StartAgent("member3", pullAgentOptions()); err != nil {
			t.Fatal(err)
		}
		waitStatus(t, env.Hub, key, func(st autoscalingv1alpha1.FederatedHPAStatus) error {
			for _, c := range st.Clusters {
				if c.Excluded != "" {
					return fmt.Errorf("%s still left out: %s", c.Name, c.Excluded)
				}
			}
			return nil
		})
	})

	t.Run("without the FederatedHPA the agent reports nothing", func(t *testing.T) {
		if err := env.Hub.Delete(ctx, &autoscalingv1alpha1.FederatedHPA{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, liveWait, "the Pull member's Work no longer asking", func() error {
			w := &workv1alpha1.Work{}
			if err := env.Hub.Get(ctx, workOf("member3"), w); err != nil {
				return err
			}
			if _, asked := w.Labels[workv1alpha1.LabelPodMetrics]; asked || w.Annotations[workv1alpha1.AnnotationCustomMetrics] != "" || w.Status.PodMetrics != nil {
				return fmt.Errorf("labels %v, annotations %v, sample reported at %v", w.Labels, w.Annotations, w.Status.PodMetrics)
			}
			return nil
		})
	})
}

func getWork(t *testing.T, hub client.Client, key client.ObjectKey) *workv1alpha1.Work {
	t.Helper()
	w := &workv1alpha1.Work{}
	if err := hub.Get(context.Background(), key, w); err != nil {
		t.Fatalf("reading Work %s: %v", key, err)
	}
	return w
}
