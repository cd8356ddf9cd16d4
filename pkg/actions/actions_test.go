package actions_test

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	taskv1alpha1 "github.com/shepherd-io/shepherd/api/task/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/actions"
	"github.com/shepherd-io/shepherd/pkg/scheme"
)

func binding(tasks ...workv1alpha1.GracefulEvictionTask) *workv1alpha1.ResourceBinding {
	return &workv1alpha1.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-deployment"},
		Spec:       workv1alpha1.BindingSpec{GracefulEvictionTasks: tasks},
	}
}

func TestConfirmEviction(t *testing.T) {
	never := workv1alpha1.GracefulEvictionTask{FromCluster: "m1", PurgeMode: policyv1alpha1.PurgeNever}
	graceful := workv1alpha1.GracefulEvictionTask{FromCluster: "m2", PurgeMode: policyv1alpha1.PurgeGracefully}
	done := never
	done.Confirmed = true
	key := actions.BindingKey{Namespace: "shop", Name: "web-deployment"}
	for _, tc := range []struct {
		name    string
		b       *workv1alpha1.ResourceBinding
		key     actions.BindingKey
		cluster string
		wantErr string
	}{
		{"confirms a Never task", binding(graceful, never), key, "m1", ""},
		{"already confirmed is fine", binding(done), key, "m1", ""},
		{"a Gracefully task needs none", binding(graceful), key, "m2", "purge mode Gracefully: it needs no confirmation"},
		{"no task for the cluster", binding(never), key, "m9", "no pending eviction from cluster m9"},
		{"no such binding", binding(never), actions.BindingKey{Namespace: "shop", Name: "nope"}, "m1", "not found"},
		{"a cluster-scoped key looks for a ClusterResourceBinding", binding(never), actions.BindingKey{Cluster: true, Name: "web-deployment"}, "m1", "not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(tc.b).Build()
			err := actions.ConfirmEviction(context.Background(), c, tc.key, tc.cluster, "test")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := &workv1alpha1.ResourceBinding{}
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(tc.b), got); err != nil {
				t.Fatal(err)
			}
			for _, task := range got.Spec.GracefulEvictionTasks {
				if want := task.FromCluster == tc.cluster; task.Confirmed != want {
					t.Errorf("task from %s confirmed %t, want %t", task.FromCluster, task.Confirmed, want)
				}
			}
		})
	}
}

func TestReschedule(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).Build()
	if _, err := actions.Reschedule(context.Background(), c, taskv1alpha1.RescheduleTaskSpec{}, "test"); err == nil || !strings.Contains(err.Error(), "nothing to reschedule") {
		t.Fatalf("an empty task: %v", err)
	}
	spec := taskv1alpha1.RescheduleTaskSpec{TargetRefPolicy: []taskv1alpha1.PolicySelector{{Namespace: "shop", Name: "web"}}}
	task, err := actions.Reschedule(context.Background(), c, spec, "test")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(task.Name, "reschedule-") {
		t.Errorf("name %q", task.Name)
	}
	var list taskv1alpha1.RescheduleTaskList
	if err := c.List(context.Background(), &list); err != nil || len(list.Items) != 1 || list.Items[0].Spec.TargetRefPolicy[0].Name != "web" {
		t.Fatalf("tasks %+v (%v)", list.Items, err)
	}
}

// TestConfirmEvictionAfterAConflict: a controller writes the binding
// between the action's read and its write (its status, say); the action
// is decided again on the binding as it is now, not failed for it, and
// refused when that binding no longer calls for it.
func TestConfirmEvictionAfterAConflict(t *testing.T) {
	never := workv1alpha1.GracefulEvictionTask{FromCluster: "m1", PurgeMode: policyv1alpha1.PurgeNever}
	for _, tc := range []struct {
		name string
		// meanwhile changes the stored binding after the first read.
		meanwhile func(b *workv1alpha1.ResourceBinding)
		wantErr   string
	}{
		{"its status written meanwhile", func(b *workv1alpha1.ResourceBinding) { b.Labels = map[string]string{"touched": "yes"} }, ""},
		{"the task dropped meanwhile", func(b *workv1alpha1.ResourceBinding) { b.Spec.GracefulEvictionTasks = nil }, "no pending eviction from cluster m1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(binding(never)).Build()
			reads := 0
			c := interceptor.NewClient(base, interceptor.Funcs{Get: func(ctx context.Context, cl client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				if err := cl.Get(ctx, key, obj, opts...); err != nil {
					return err
				}
				if reads++; reads == 1 {
					stored := obj.DeepCopyObject().(*workv1alpha1.ResourceBinding)
					tc.meanwhile(stored)
					return cl.Update(ctx, stored)
				}
				return nil
			}})
			err := actions.ConfirmEviction(context.Background(), c, actions.BindingKey{Namespace: "shop", Name: "web-deployment"}, "m1", "test")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("the action failed on a binding changed meanwhile: %v", err)
			}
			got := &workv1alpha1.ResourceBinding{}
			if err := base.Get(context.Background(), client.ObjectKey{Namespace: "shop", Name: "web-deployment"}, got); err != nil {
				t.Fatal(err)
			}
			if len(got.Spec.GracefulEvictionTasks) != 1 || !got.Spec.GracefulEvictionTasks[0].Confirmed || got.Labels["touched"] != "yes" {
				t.Errorf("binding %+v: want the task confirmed and the change made meanwhile kept", got)
			}
		})
	}
}
