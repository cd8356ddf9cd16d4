package membership_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shepherd-io/shepherd/pkg/clusterclient"
	"github.com/shepherd-io/shepherd/pkg/membership"
	"github.com/shepherd-io/shepherd/pkg/membership/membershiptest"
)

// TestJoinRBACPropagation: with join's default credentials the member's
// API server refuses an operator-like ClusterRole and a binding to
// cluster-admin (rights the hub's ServiceAccount lacks); joined with
// AllowRBACPropagation the same credentials may write both; joined again
// without it they may not.
func TestJoinRBACPropagation(t *testing.T) {
	ctx := context.Background()
	hub := membershiptest.HubClient(t, membershiptest.StartHub(t))
	member := membershiptest.StartMember(t, "member1")
	admin := member.Kube(t)
	opts := membership.JoinOptions{Name: "member1", Kubeconfig: member.Kubeconfig(t)}

	// grant writes, with the stored credentials, what an operator's
	// install manifest holds: a ClusterRole with every right and a binding
	// of cluster-admin. It returns the refusal, if any, and removes what
	// it wrote.
	grant := func(t *testing.T) error {
		t.Helper()
		stored := storedClient(t, hub, "member1")
		role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "operator-wide"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}}
		if _, err := stored.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
			return err
		}
		defer func() { _ = admin.RbacV1().ClusterRoles().Delete(ctx, role.Name, metav1.DeleteOptions{}) }()
		binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "operator-admin"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: "operator"}}}
		if _, err := stored.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
			return err
		}
		return admin.RbacV1().ClusterRoleBindings().Delete(ctx, binding.Name, metav1.DeleteOptions{})
	}
	refused := func(t *testing.T, err error) {
		t.Helper()
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "attempting to grant RBAC permissions not currently held") {
			t.Fatalf("err = %v, want the API server's refusal to grant rights not held", err)
		}
	}

	t.Run("default credentials cannot grant", func(t *testing.T) {
		if _, err := membership.Join(ctx, hub, opts); err != nil {
			t.Fatal(err)
		}
		refused(t, grant(t))
		if _, err := admin.RbacV1().ClusterRoles().Get(ctx, clusterclient.MemberRBACPropagationRole, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("ClusterRole %s exists without the opt-in: %v", clusterclient.MemberRBACPropagationRole, err)
		}
	})
	t.Run("opted-in credentials can grant", func(t *testing.T) {
		o := opts
		o.AllowRBACPropagation = true
		if _, err := membership.Join(ctx, hub, o); err != nil {
			t.Fatal(err)
		}
		// Join waited until the member's authorizer allowed escalate and
		// bind (SelfSubjectAccessReviews), so no retry is needed here.
		if err := grant(t); err != nil {
			t.Fatalf("opted-in credentials were refused: %v", err)
		}
	})
	t.Run("joining without the opt-in withdraws it", func(t *testing.T) {
		if _, err := membership.Join(ctx, hub, opts); err != nil {
			t.Fatal(err)
		}
		for _, get := range []func() error{
			func() error {
				_, err := admin.RbacV1().ClusterRoles().Get(ctx, clusterclient.MemberRBACPropagationRole, metav1.GetOptions{})
				return err
			},
			func() error {
				_, err := admin.RbacV1().ClusterRoleBindings().Get(ctx, clusterclient.MemberRBACPropagationRole, metav1.GetOptions{})
				return err
			},
		} {
			if err := get(); !apierrors.IsNotFound(err) {
				t.Errorf("the opt-in's RBAC is still there: %v", err)
			}
		}
		// The authorizer learns of the deletion through a watch.
		var err error
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			if err = grant(t); apierrors.IsForbidden(err) {
				break
			}
		}
		refused(t, err)
	})
}

// storedClient is a client of the member with the credentials the hub
// stored for cluster name.
func storedClient(t *testing.T, hub client.Client, name string) kubernetes.Interface {
	t.Helper()
	sec := &corev1.Secret{}
	if err := hub.Get(context.Background(), types.NamespacedName{Namespace: membership.DefaultNamespace, Name: name}, sec); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(sec.Data[clusterclient.SecretKeyKubeconfig])
	if err != nil {
		t.Fatal(err)
	}
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return kc
}
