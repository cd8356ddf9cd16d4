package cli

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	taskv1alpha1 "github.com/shepherd-io/shepherd/api/task/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/controllers/binding"
	"github.com/shepherd-io/shepherd/pkg/controllers/detector"
	"github.com/shepherd-io/shepherd/pkg/controllers/reschedule"
	"github.com/shepherd-io/shepherd/pkg/controllers/scheduling"
	"github.com/shepherd-io/shepherd/pkg/scheme"
	"github.com/shepherd-io/shepherd/test/testenv"
)

// runReschedule executes `shepherd reschedule ARGS` and returns its output.
func runReschedule(args ...string) (string, error) {
	var out bytes.Buffer
	cmd := newRescheduleCommand()
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

func TestRescheduleSpec(t *testing.T) {
	deploy := func(ns, name string) taskv1alpha1.ResourceSelector {
		return taskv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: name}
	}
	tests := []struct {
		name  string
		o     rescheduleOptions
		args  []string
		want  taskv1alpha1.RescheduleTaskSpec
		error string
	}{
		{name: "deployment", o: rescheduleOptions{namespace: "default"}, args: []string{"deployment/nginx"},
			want: taskv1alpha1.RescheduleTaskSpec{TargetRefResource: []taskv1alpha1.ResourceSelector{deploy("default", "nginx")}}},
		{name: "short names and plurals", o: rescheduleOptions{namespace: "shop"}, args: []string{"deploy/a", "Deployments/b", "sts/c", "ds/d", "jobs/e", "cm/f", "svc/g", "secret/h"},
			want: taskv1alpha1.RescheduleTaskSpec{TargetRefResource: []taskv1alpha1.ResourceSelector{
				deploy("shop", "a"), deploy("shop", "b"),
				{APIVersion: "apps/v1", Kind: "StatefulSet", Namespace: "shop", Name: "c"},
				{APIVersion: "apps/v1", Kind: "DaemonSet", Namespace: "shop", Name: "d"},
				{APIVersion: "batch/v1", Kind: "Job", Namespace: "shop", Name: "e"},
				{APIVersion: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "f"},
				{APIVersion: "v1", Kind: "Service", Namespace: "shop", Name: "g"},
				{APIVersion: "v1", Kind: "Secret", Namespace: "shop", Name: "h"},
			}}},
		{name: "Kind.version.group", o: rescheduleOptions{namespace: "default"}, args: []string{"Rollout.v1alpha1.argoproj.io/web", "PodTemplate.v1/tpl"},
			want: taskv1alpha1.RescheduleTaskSpec{TargetRefResource: []taskv1alpha1.ResourceSelector{
				{APIVersion: "argoproj.io/v1alpha1", Kind: "Rollout", Namespace: "default", Name: "web"},
				{APIVersion: "v1", Kind: "PodTemplate", Namespace: "default", Name: "tpl"},
			}}},
		{name: "policies and ttl", o: rescheduleOptions{policies: []string{"shop/checkout"}, clusterPolicies: []string{"platform"}, ttl: 90 * time.Minute},
			want: taskv1alpha1.RescheduleTaskSpec{
				TargetRefPolicy:         []taskv1alpha1.PolicySelector{{Namespace: "shop", Name: "checkout"}, {Name: "platform"}},
				TTLSecondsAfterFinished: ptr.To[int32](5400),
			}},
		{name: "nothing", error: "nothing to reschedule"},
		{name: "no type", args: []string{"nginx"}, error: `"nginx": want TYPE/NAME`},
		{name: "empty name", args: []string{"deployment/"}, error: "want TYPE/NAME"},
		{name: "unknown type", args: []string{"widget/x"}, error: `unknown TYPE "widget"; use one of`},
		{name: "policy without namespace", o: rescheduleOptions{policies: []string{"checkout"}}, error: `--policy "checkout": want NAMESPACE/NAME`},
		{name: "cluster policy with namespace", o: rescheduleOptions{clusterPolicies: []string{"a/b"}}, error: `--cluster-policy "a/b"`},
		{name: "negative ttl", o: rescheduleOptions{clusterPolicies: []string{"p"}, ttl: -time.Second}, error: "--ttl -1s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.o.spec(tt.args)
			if tt.error != "" {
				if err == nil || !strings.Contains(err.Error(), tt.error) {
					t.Fatalf("err = %v, want %q", err, tt.error)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("spec = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

// TestRescheduleCommand runs the command against a real hub with the
// controllers in-process: a workload and a missing one, waiting for the
// outcome.
func TestRescheduleCommand(t *testing.T) {
	testenv.Heavy(t)
	// Parallel beside the restart test (see inProcess).
	t.Parallel()
	inProcess.Lock()
	t.Cleanup(inProcess.Unlock)
	hub, err := testenv.Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hub.Stop() })
	startControllers(t, hub)
	c, err := client.New(hub.Config, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	createReadyCluster(t, c, "m1")
	if _, err := hub.Apply(context.Background(), []byte(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: nginx, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: nginx}}
  template:
    metadata: {labels: {app: nginx}}
    spec: {containers: [{name: nginx, image: nginx}]}
---
apiVersion: policy.shepherd.io/v1alpha1
kind: PropagationPolicy
metadata: {name: nginx, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement: {clusterAffinity: {clusterNames: [m1]}}
`)); err != nil {
		t.Fatal(err)
	}
	kc := []string{"--hub-kubeconfig", hub.ControlPlane.KubeconfigPath(), "--timeout", "30s"}
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := runReschedule(append([]string{"deployment/nginx", "--wait"}, kc...)...)
		if err == nil {
			if !strings.Contains(out, "default/deployment/nginx  default/nginx-deployment  Successful") {
				t.Fatalf("output:\n%s", out)
			}
			break
		}
		// The detector may not have written the binding yet.
		if time.Now().After(deadline) || !strings.Contains(err.Error(), "1 of 1 targets failed") {
			t.Fatalf("reschedule: %v\n%s", err, out)
		}
		time.Sleep(200 * time.Millisecond)
	}

	out, err := runReschedule(append([]string{"deploy/nginx", "deploy/missing", "--wait", "--ttl", "1h"}, kc...)...)
	if err == nil || err.Error() != "1 of 2 targets failed" {
		t.Fatalf("err = %v, want 1 of 2 targets failed\n%s", err, out)
	}
	if !strings.Contains(out, "no binding for apps/v1 Deployment default/missing") {
		t.Fatalf("output does not say why:\n%s", out)
	}

	out, err = runReschedule(append([]string{"--cluster-policy", "platform", "--wait=false"}, kc...)...)
	if err != nil || !strings.HasPrefix(out, "rescheduletask/reschedule-") || !strings.Contains(out, "created") {
		t.Fatalf("no wait: %v\n%s", err, out)
	}
}

// startControllers runs the controllers a reschedule needs against hub
// until the test ends.
func startControllers(t *testing.T, hub *testenv.Hub) {
	t.Helper()
	mgr, err := ctrl.NewManager(hub.Config, ctrl.Options{
		Scheme:                 scheme.Scheme,
		Logger:                 logr.Discard(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, setup := range []func() error{
		func() error {
			return detector.Setup(controllerdeps.Deps{Manager: mgr}, detector.Options{UnknownKindRetry: time.Second})
		},
		func() error { return scheduling.Setup(controllerdeps.Deps{Manager: mgr}, scheduling.Options{}) },
		func() error { return binding.Setup(controllerdeps.Deps{Manager: mgr}, binding.Options{}) },
		func() error { return reschedule.Setup(controllerdeps.Deps{Manager: mgr}, reschedule.Options{}) },
	} {
		if err := setup(); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
}

// createReadyCluster registers a Ready cluster serving Deployments.
func createReadyCluster(t *testing.T, c client.Client, name string) {
	t.Helper()
	cl := &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push, APIEndpoint: "https://127.0.0.1:6443",
			SecretRef: &clusterv1alpha1.LocalSecretReference{Namespace: "default", Name: name}},
	}
	if err := c.Create(context.Background(), cl); err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	cl.Status = clusterv1alpha1.ClusterStatus{
		Conditions:      []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue, Reason: "Ready", LastTransitionTime: now}},
		APIEnablements:  []clusterv1alpha1.APIEnablement{{GroupVersion: "apps/v1", Resources: []clusterv1alpha1.APIResource{{Name: "deployments", Kind: "Deployment"}}}},
		ResourceSummary: &clusterv1alpha1.ResourceSummary{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100"), corev1.ResourcePods: resource.MustParse("100")}},
	}
	if err := c.Status().Update(context.Background(), cl); err != nil {
		t.Fatal(err)
	}
}
