package install

import (
	"context"
	"strings"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/shepherd-io/shepherd/api/autoscaling/v1alpha1"
)

// testAutoscalerWebhooks: a second FederatedHPA on one target and a
// CronFederatedHPA rule in a zone that does not exist are refused by the
// installed webhooks (the API's own validation checks neither).
func testAutoscalerWebhooks(t *testing.T) {
	ctx := context.Background()
	ref := autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "webhook-probe"}
	first := &autoscalingv1alpha1.FederatedHPA{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: "webhook-probe-a"},
		Spec: autoscalingv1alpha1.FederatedHPASpec{ScaleTargetRef: ref, MaxReplicas: 2}}
	if err := hub.Create(ctx, first); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = hub.Delete(ctx, first) }()
	second := first.DeepCopy()
	second.ObjectMeta = metav1.ObjectMeta{Namespace: first.Namespace, Name: "webhook-probe-b"}
	if err := hub.Create(ctx, second, client.DryRunAll); err == nil || !strings.Contains(err.Error(), "already scaled by FederatedHPA webhook-probe-a") {
		t.Errorf("a second FederatedHPA on one target: err = %v, want the webhook's refusal", err)
	}
	cron := &autoscalingv1alpha1.CronFederatedHPA{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: "webhook-probe"},
		Spec: autoscalingv1alpha1.CronFederatedHPASpec{ScaleTargetRef: ref, Rules: []autoscalingv1alpha1.CronFederatedHPARule{
			{Name: "r", Schedule: "0 8 * * *", TimeZone: ptr.To("Mars/Olympus_Mons"), TargetReplicas: ptr.To[int32](1)}}}}
	if err := hub.Create(ctx, cron, client.DryRunAll); err == nil || !strings.Contains(err.Error(), "spec.rules[0].timeZone") {
		t.Errorf("a CronFederatedHPA rule in no time zone: err = %v, want the webhook's refusal", err)
	}
}
