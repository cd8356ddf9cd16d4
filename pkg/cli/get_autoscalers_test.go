package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	autoscalingv1alpha1 "github.com/shepherd-io/shepherd/api/autoscaling/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheme"
)

// TestGetAutoscalers: both kinds in one table, sorted, with each cluster's
// utilization or why it was left out, and each rule's next run and last
// outcome.
func TestGetAutoscalers(t *testing.T) {
	next := metav1.NewTime(time.Date(2026, 3, 9, 8, 0, 0, 0, time.UTC))
	ran := metav1.NewTime(time.Date(2026, 3, 8, 8, 0, 0, 0, time.UTC))
	fhpa := &autoscalingv1alpha1.FederatedHPA{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Spec: autoscalingv1alpha1.FederatedHPASpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas: ptr.To[int32](2), MaxReplicas: 10},
		Status: autoscalingv1alpha1.FederatedHPAStatus{CurrentReplicas: 4, DesiredReplicas: 6, Clusters: []autoscalingv1alpha1.ClusterUtilization{
			{Name: "member1", Pods: 2, Resources: []autoscalingv1alpha1.ResourceUtilization{{Name: corev1.ResourceCPU, AverageUtilization: ptr.To[int32](90)}}},
			{Name: "member2", Pods: 2, Excluded: "metrics stale"}}}}
	cron := &autoscalingv1alpha1.CronFederatedHPA{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "office-hours"},
		Spec: autoscalingv1alpha1.CronFederatedHPASpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "autoscaling.shepherd.io/v1alpha1", Kind: "FederatedHPA", Name: "web"},
			Rules: []autoscalingv1alpha1.CronFederatedHPARule{{Name: "morning", Schedule: "0 8 * * *"}, {Name: "night", Schedule: "0 20 * * *", Suspend: ptr.To(true)}}},
		Status: autoscalingv1alpha1.CronFederatedHPAStatus{ExecutionHistories: []autoscalingv1alpha1.ExecutionHistory{{RuleName: "morning", NextExecutionTime: &next,
			SuccessfulExecutions: []autoscalingv1alpha1.SuccessfulExecution{{ScheduleTime: &ran, ExecutionTime: &ran}}}}}}
	other := fhpa.DeepCopy()
	other.Namespace = "billing"
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(fhpa, cron, other).Build()
	var out bytes.Buffer
	if err := printAutoscalers(context.Background(), c, &out, "shop"); err != nil {
		t.Fatal(err)
	}
	want := autoscalersHeader + "\n" +
		"shop\toffice-hours\tCronFederatedHPA\tFederatedHPA/web\t-\t-\tmorning: next 2026-03-09T08:00:00Z, last ran 2026-03-08T08:00:00Z; night: suspended\n" +
		"shop\tweb\tFederatedHPA\tDeployment/web\t2..10\t4/6\tmember1=2 pods cpu 90%, member2=[left out: metrics stale]\n"
	if out.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out.String(), want)
	}
	out.Reset()
	if err := printAutoscalers(context.Background(), c, &out, ""); err != nil || !strings.HasPrefix(strings.Split(out.String(), "\n")[1], "billing\tweb") {
		t.Fatalf("all namespaces: %v\n%s", err, out.String())
	}
}
