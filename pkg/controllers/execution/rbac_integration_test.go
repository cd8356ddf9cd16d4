package execution_test

import (
	"context"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/clusterclient"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/controllers/execution"
	"github.com/shepherd-io/shepherd/pkg/membership"
	"github.com/shepherd-io/shepherd/pkg/membership/membershiptest"
)

// TestRBACRefusalNamesTheFix: a real member refuses an operator-like
// ClusterRole from join's default credentials; the Work says which cluster
// refused which object and how to fix it. Re-joined with the opt-in, the
// new credentials wake the Work and it applies.
func TestRBACRefusalNamesTheFix(t *testing.T) {
	ctx := context.Background()
	hubEnv := membershiptest.StartHub(t)
	hub := membershiptest.HubClient(t, hubEnv)
	member := membershiptest.StartMember(t, "m1")
	member.Join(t, hub)
	membershiptest.RunManager(t, hubEnv, func(mgr manager.Manager) error {
		d := controllerdeps.Deps{Manager: mgr, Clients: clusterclient.NewCache(mgr.GetClient(), clusterclient.Options{RequestTimeout: 3 * time.Second})}
		return execution.Setup(d, execution.Options{RetryBaseDelay: 200 * time.Millisecond})
	})

	role := &rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: "operator-wide"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}},
	}
	w := membershiptest.Work(t, "m1", "operator", nil, configMap("default", "operator-config"), role)
	membershiptest.CreateWork(t, hub, w)

	applied := func(want func(*metav1.Condition) bool) *metav1.Condition {
		t.Helper()
		var c *metav1.Condition
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			got := &workv1alpha1.Work{}
			if err := hub.Get(ctx, client.ObjectKeyFromObject(w), got); err != nil {
				t.Fatal(err)
			}
			if c = meta.FindStatusCondition(got.Status.Conditions, workv1alpha1.WorkConditionApplied); c != nil && want(c) {
				return c
			}
		}
		t.Fatalf("Applied condition %+v", c)
		return nil
	}
	c := applied(func(c *metav1.Condition) bool { return c.Reason == execution.ReasonRBACEscalationForbidden })
	for _, want := range []string{
		"cluster m1 refused 1 RBAC object (ClusterRole operator-wide)",
		"`shepherd join m1 --kubeconfig FILE --allow-rbac-propagation`",
		"attempting to grant RBAC permissions not currently held", // the API server's own words follow
	} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("message %q lacks %q", c.Message, want)
		}
	}
	if !strings.HasPrefix(c.Message, "cluster m1 refused") {
		t.Errorf("the explanation does not come first: %q", c.Message)
	}

	if _, err := membership.Join(ctx, hub, membership.JoinOptions{Name: "m1", Kubeconfig: member.Kubeconfig(t), AllowRBACPropagation: true}); err != nil {
		t.Fatal(err)
	}
	applied(func(c *metav1.Condition) bool { return c.Status == metav1.ConditionTrue })
	if _, err := member.Kube(t).RbacV1().ClusterRoles().Get(ctx, "operator-wide", metav1.GetOptions{}); err != nil {
		t.Errorf("the ClusterRole did not arrive: %v", err)
	}
}
