package admission

import (
	"strings"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	autoscalingv1alpha1 "github.com/shepherd-io/shepherd/api/autoscaling/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheme"
)

func fhpaOn(ns, name, apiVersion, kind, target string) *autoscalingv1alpha1.FederatedHPA {
	return &autoscalingv1alpha1.FederatedHPA{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: autoscalingv1alpha1.FederatedHPASpec{
		ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: apiVersion, Kind: kind, Name: target}, MaxReplicas: 3}}
}

// TestFederatedHPAValidation: one FederatedHPA per target, the refusal
// naming the one already there; another namespace's, another kind's or
// the same object's own do not count.
func TestFederatedHPAValidation(t *testing.T) {
	hub := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(fhpaOn("team-a", "web", "apps/v1", "Deployment", "web")).Build()
	for _, tc := range []struct {
		name string
		obj  *autoscalingv1alpha1.FederatedHPA
		want string
	}{
		{"a second one on the same Deployment", fhpaOn("team-a", "web-2", "apps/v1", "Deployment", "web"), "spec.scaleTargetRef: Duplicate value: \"Deployment team-a/web is already scaled by FederatedHPA web"},
		{"another version of the same group", fhpaOn("team-a", "web-2", "apps/v1beta2", "Deployment", "web"), "FederatedHPA web"},
		{"the object itself, updated", fhpaOn("team-a", "web", "apps/v1", "Deployment", "web"), ""},
		{"the same name in another namespace", fhpaOn("team-b", "web", "apps/v1", "Deployment", "web"), ""},
		{"another kind of the same name", fhpaOn("team-a", "web-sts", "apps/v1", "StatefulSet", "web"), ""},
		{"a FederatedHPA is not a target", fhpaOn("team-a", "x", "autoscaling.shepherd.io/v1alpha1", "FederatedHPA", "web"), "spec.scaleTargetRef.kind"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := validateFederatedHPA(hub, tc.obj)
			if got := errs.ToAggregate(); (tc.want == "") != (got == nil) || (got != nil && !strings.Contains(got.Error(), tc.want)) {
				t.Fatalf("errors %v, want %q", got, tc.want)
			}
		})
	}
}

func TestCronFederatedHPAValidation(t *testing.T) {
	rule := func(schedule string, tz *string) *autoscalingv1alpha1.CronFederatedHPA {
		return &autoscalingv1alpha1.CronFederatedHPA{Spec: autoscalingv1alpha1.CronFederatedHPASpec{Rules: []autoscalingv1alpha1.CronFederatedHPARule{
			{Name: "ok", Schedule: "@hourly", TargetReplicas: ptr.To[int32](1)},
			{Name: "r", Schedule: schedule, TimeZone: tz, TargetReplicas: ptr.To[int32](1)}}}}
	}
	for _, tc := range []struct {
		name     string
		schedule string
		tz       *string
		want     string
	}{
		{"five fields and a zone", "30 8 * * 1-5", ptr.To("Europe/Paris"), ""},
		{"a descriptor", "@daily", nil, ""},
		{"not cron", "every morning", nil, "spec.rules[1].schedule: Invalid value: \"every morning\": not a cron expression"},
		{"six fields", "0 30 8 * * *", nil, "spec.rules[1].schedule"},
		{"an unknown zone", "0 8 * * *", ptr.To("Mars/Olympus"), "spec.rules[1].timeZone: Invalid value: \"Mars/Olympus\": not a name of the IANA time zone database"},
		{"a zone in the schedule", "CRON_TZ=UTC 0 8 * * *", nil, "give the time zone in timeZone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := validateCronFederatedHPA(rule(tc.schedule, tc.tz))
			if got := errs.ToAggregate(); (tc.want == "") != (got == nil) || (got != nil && !strings.Contains(got.Error(), tc.want)) {
				t.Fatalf("errors %v, want %q", got, tc.want)
			}
		})
	}
}
