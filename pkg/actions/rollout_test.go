package actions_test

import (
	"context"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/actions"
	"github.com/shepherd-io/shepherd/pkg/scheme"
)

func rolloutBinding(typ policyv1alpha1.RolloutType, st *workv1alpha1.RolloutStatus, ctl *workv1alpha1.RolloutControl) *workv1alpha1.ResourceBinding {
	b := binding()
	b.Spec.Rollout = &policyv1alpha1.RolloutStrategy{Type: typ}
	if typ == policyv1alpha1.RolloutStaged {
		b.Spec.Rollout.Stages = []policyv1alpha1.RolloutStage{
			{Name: "canary", Approval: policyv1alpha1.ApprovalBefore},
			{Name: "prod", Approval: policyv1alpha1.ApprovalAfter},
			{Name: "rest"},
		}
	}
	b.Spec.RolloutControl = ctl
	b.Status.Rollout = st
	return b
}

var (
	waiting = &workv1alpha1.RolloutStatus{Revision: "r2", LastGoodRevision: "r1", Phase: workv1alpha1.RolloutPhaseWaiting}
	started = &workv1alpha1.RolloutStatus{Revision: "r2", LastGoodRevision: "r1", Stages: []workv1alpha1.RolloutStageStatus{
		{Name: "canary", StartedAt: &metav1.Time{}, CompletedAt: &metav1.Time{}}, {Name: "prod", StartedAt: &metav1.Time{}, CompletedAt: &metav1.Time{}}, {Name: "rest"}}}
	key = actions.BindingKey{Namespace: "shop", Name: "web-deployment"}
)

// asAlice answers a SelfSubjectReview as the hub would for user alice.
var asAlice = interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
	if r, ok := obj.(*authenticationv1.SelfSubjectReview); ok {
		r.Status.UserInfo.Username = "alice"
		return nil
	}
	return c.Create(ctx, obj, opts...)
}}

func stored(t *testing.T, c client.Client) *workv1alpha1.ResourceBinding {
	t.Helper()
	got := &workv1alpha1.ResourceBinding{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: key.Namespace, Name: key.Name}, got); err != nil {
		t.Fatal(err)
	}
	return got
}

func TestRolloutActions(t *testing.T) {
	old := &workv1alpha1.RolloutControl{Approvals: []workv1alpha1.RolloutApproval{{Revision: "r1", Stage: "canary", When: policyv1alpha1.ApprovalBefore}}}
	cases := []struct {
		name    string
		b       *workv1alpha1.ResourceBinding
		act     func(client.Client) error
		wantErr string
		want    func(*workv1alpha1.RolloutControl) bool
	}{
		{"pause", rolloutBinding(policyv1alpha1.RolloutProgressive, waiting, nil),
			func(c client.Client) error { return actions.PauseRollout(context.Background(), c, key, true, "t") }, "",
			func(ctl *workv1alpha1.RolloutControl) bool { return ctl != nil && ctl.Paused }},
		{"resume", rolloutBinding(policyv1alpha1.RolloutProgressive, waiting, &workv1alpha1.RolloutControl{Paused: true}),
			func(c client.Client) error { return actions.PauseRollout(context.Background(), c, key, false, "t") }, "",
			func(ctl *workv1alpha1.RolloutControl) bool { return !ctl.Paused }},
		{"pause without a gated rollout", rolloutBinding(policyv1alpha1.RolloutAll, nil, nil),
			func(c client.Client) error { return actions.PauseRollout(context.Background(), c, key, true, "t") }, "no Progressive or Staged rollout", nil},
		{"approve the stage waiting, dropping another revision's approvals", rolloutBinding(policyv1alpha1.RolloutStaged, waiting, old),
			func(c client.Client) error {
				_, _, err := actions.ApproveRollout(context.Background(), c, key, "", "t")
				return err
			}, "",
			func(ctl *workv1alpha1.RolloutControl) bool {
				return len(ctl.Approvals) == 1 && ctl.Approved("r2", "canary", policyv1alpha1.ApprovalBefore) && ctl.Approvals[0].ApprovedBy == "alice"
			}},
		{"approve After once the stage before is done", rolloutBinding(policyv1alpha1.RolloutStaged, started, nil),
			func(c client.Client) error {
				_, _, err := actions.ApproveRollout(context.Background(), c, key, "prod", "t")
				return err
			}, "",
			func(ctl *workv1alpha1.RolloutControl) bool {
				return ctl.Approved("r2", "prod", policyv1alpha1.ApprovalAfter)
			}},
		{"approve a stage that needs none", rolloutBinding(policyv1alpha1.RolloutStaged, waiting, nil),
			func(c client.Client) error {
				_, _, err := actions.ApproveRollout(context.Background(), c, key, "rest", "t")
				return err
			}, "stage rest needs no approval", nil},
		{"approve an unknown stage", rolloutBinding(policyv1alpha1.RolloutStaged, waiting, nil),
			func(c client.Client) error {
				_, _, err := actions.ApproveRollout(context.Background(), c, key, "nope", "t")
				return err
			}, `no stage "nope"`, nil},
		{"undo", rolloutBinding(policyv1alpha1.RolloutProgressive, waiting, nil),
			func(c client.Client) error {
				_, err := actions.UndoRollout(context.Background(), c, key, "t")
				return err
			}, "",
			func(ctl *workv1alpha1.RolloutControl) bool { return ctl.UndoRevision == "r2" }},
		{"undo of the last good revision", rolloutBinding(policyv1alpha1.RolloutProgressive, &workv1alpha1.RolloutStatus{Revision: "r1", LastGoodRevision: "r1"}, nil),
			func(c client.Client) error {
				_, err := actions.UndoRollout(context.Background(), c, key, "t")
				return err
			}, "nothing to undo", nil},
		{"undo without a good revision", rolloutBinding(policyv1alpha1.RolloutProgressive, &workv1alpha1.RolloutStatus{Revision: "r2"}, nil),
			func(c client.Client) error {
				_, err := actions.UndoRollout(context.Background(), c, key, "t")
				return err
			}, "no previous good revision", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(tc.b).WithInterceptorFuncs(asAlice).Build()
			err := tc.act(c)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				if got := stored(t, c); got.Spec.RolloutControl.DeepCopy() != nil && tc.b.Spec.RolloutControl == nil {
					t.Fatalf("a refused action changed rolloutControl: %+v", got.Spec.RolloutControl)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := stored(t, c).Spec.RolloutControl; !tc.want(got) {
				t.Fatalf("rolloutControl %+v", got)
			}
		})
	}
}
