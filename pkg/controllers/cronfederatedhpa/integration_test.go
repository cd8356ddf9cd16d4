package cronfederatedhpa_test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/shepherd-io/shepherd/api/autoscaling/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/controllers/cronfederatedhpa"
	"github.com/shepherd-io/shepherd/pkg/scheme"
	"github.com/shepherd-io/shepherd/test/testenv"
)

var (
	cli client.Client
	// ahead moves the controller's clock forward (nanoseconds).
	ahead atomic.Int64
)

func TestMain(m *testing.M) { os.Exit(suite.Main(m)) }

var suite = testenv.Shared{
	Prefix: "shepherd-cronfhpa-",
	Before: func(h *testenv.Hub) (func(), error) {
		var err error
		if cli, err = client.New(h.Config, client.Options{Scheme: scheme.Scheme}); err != nil {
			return nil, err
		}
		m, err := h.StartManager(func(mgr ctrl.Manager) error {
			return cronfederatedhpa.Setup(controllerdeps.Deps{Manager: mgr}, cronfederatedhpa.Options{
				Location: time.UTC, Now: func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }})
		})
		if err != nil {
			return nil, err
		}
		return func() { _ = m.Stop() }, nil
	},
}

// TestRulesScaleWorkloadsAndFederatedHPAs: with the controller's clock two
// minutes ahead, an every-minute rule sets a Deployment's replicas and
// another sets a FederatedHPA's bounds, each once for its scheduled time,
// recorded in the status; a rule that cannot apply is recorded as failed.
func TestRulesScaleWorkloadsAndFederatedHPAs(t *testing.T) {
	suite.Hub(t)
	ctx := context.Background()
	ns := "cron-scale"
	if err := cli.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}, Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}}}}}
	fhpa := &autoscalingv1alpha1.FederatedHPA{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}, Spec: autoscalingv1alpha1.FederatedHPASpec{
		ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}, MinReplicas: ptr.To[int32](1), MaxReplicas: 4}}
	every := func(name string, ref autoscalingv2.CrossVersionObjectReference, rules ...autoscalingv1alpha1.CronFederatedHPARule) *autoscalingv1alpha1.CronFederatedHPA {
		return &autoscalingv1alpha1.CronFederatedHPA{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: autoscalingv1alpha1.CronFederatedHPASpec{ScaleTargetRef: ref, Rules: rules}}
	}
	toDep := every("to-deployment", autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
		autoscalingv1alpha1.CronFederatedHPARule{Name: "up", Schedule: "* * * * *", TargetReplicas: ptr.To[int32](5)},
		autoscalingv1alpha1.CronFederatedHPARule{Name: "wrong", Schedule: "* * * * *", TargetMaxReplicas: ptr.To[int32](5)})
	toFHPA := every("to-fhpa", autoscalingv2.CrossVersionObjectReference{APIVersion: "autoscaling.karmada.io/v1alpha1", Kind: "FederatedHPA", Name: "web"},
		autoscalingv1alpha1.CronFederatedHPARule{Name: "peak", Schedule: "* * * * *", TargetMinReplicas: ptr.To[int32](3), TargetMaxReplicas: ptr.To[int32](9)})
	for _, o := range []client.Object{dep, fhpa, toDep, toFHPA} {
		if err := cli.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	ahead.Store(int64(2 * time.Minute))
	// A spec change brings the objects back with the clock moved.
	for _, o := range []*autoscalingv1alpha1.CronFederatedHPA{toDep, toFHPA} {
		patch := client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"labels":{"tick":"1"}},"spec":{"rules":`+rulesJSON(o)+`}}`))
		if err := cli.Patch(ctx, o, patch); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Eventually(t, 30*time.Second, "the Deployment at 5 and the FederatedHPA at 3..9", func() error {
		d, f := &appsv1.Deployment{}, &autoscalingv1alpha1.FederatedHPA{}
		if err := cli.Get(ctx, client.ObjectKeyFromObject(dep), d); err != nil {
			return err
		}
		if err := cli.Get(ctx, client.ObjectKeyFromObject(fhpa), f); err != nil {
			return err
		}
		if *d.Spec.Replicas != 5 || *f.Spec.MinReplicas != 3 || f.Spec.MaxReplicas != 9 {
			return fmt.Errorf("replicas %d, bounds %d..%d", *d.Spec.Replicas, *f.Spec.MinReplicas, f.Spec.MaxReplicas)
		}
		return nil
	})
	testenv.Eventually(t, 30*time.Second, "the histories", func() error {
		got := &autoscalingv1alpha1.CronFederatedHPA{}
		if err := cli.Get(ctx, client.ObjectKeyFromObject(toDep), got); err != nil {
			return err
		}
		hs := got.Status.ExecutionHistories
		if len(hs) != 2 || hs[0].RuleName != "up" || len(hs[0].SuccessfulExecutions) != 1 || *hs[0].SuccessfulExecutions[0].AppliedReplicas != 5 || hs[0].NextExecutionTime == nil {
			return fmt.Errorf("up: %+v", hs)
		}
		if len(hs[1].FailedExecutions) != 1 || hs[1].FailedExecutions[0].Message == "" {
			return fmt.Errorf("wrong: %+v", hs[1])
		}
		return nil
	})
}

// rulesJSON is o's rules with successfulHistoryLimit 4, as JSON: a spec
// change, so the controller looks again with its clock moved.
func rulesJSON(o *autoscalingv1alpha1.CronFederatedHPA) string {
	out := "["
	for i, r := range o.Spec.Rules {
		if i > 0 {
			out += ","
		}
		out += fmt.Sprintf(`{"name":%q,"schedule":%q,"successfulHistoryLimit":4`, r.Name, r.Schedule)
		if r.TargetReplicas != nil {
			out += fmt.Sprintf(`,"targetReplicas":%d`, *r.TargetReplicas)
		}
		if r.TargetMinReplicas != nil {
			out += fmt.Sprintf(`,"targetMinReplicas":%d`, *r.TargetMinReplicas)
		}
		if r.TargetMaxReplicas != nil {
			out += fmt.Sprintf(`,"targetMaxReplicas":%d`, *r.TargetMaxReplicas)
		}
		out += "}"
	}
	return out + "]"
}
