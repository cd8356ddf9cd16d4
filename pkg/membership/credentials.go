package membership

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/clusterclient"
)

// Ways join can store a member's credentials.
const (
	// CredentialsServiceAccount (the default): join creates the hub's
	// ServiceAccount and ClusterRole in the member with the given
	// kubeconfig, and stores a short-lived token of that ServiceAccount,
	// which the controllers renew. The given credentials are not stored.
	CredentialsServiceAccount = "service-account"
	// CredentialsKubeconfig stores the given kubeconfig as it is (for a
	// member where the joining user cannot create RBAC objects).
	CredentialsKubeconfig = "kubeconfig"
)

// rbacPropagation bounds the wait for a new ClusterRoleBinding to take
// effect in the member's authorizer.
const rbacPropagation = 10 * time.Second

// memberClusterRole is what the hub may do in a member: read and write
// objects of any kind, since templates can be of any kind. It holds none of
// the verbs that grant more than that (escalate, bind, impersonate, or the
// wildcard), so the hub cannot mint a role broader than its own.
func memberClusterRole() *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: clusterclient.MemberClusterRole, Labels: map[string]string{workv1alpha1.LabelManagedBy: workv1alpha1.ManagedByShepherd}},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
			{NonResourceURLs: []string{"/readyz", "/healthz", "/livez", "/version", "/api", "/api/*", "/apis", "/apis/*"}, Verbs: []string{"get"}},
		},
	}
}

// provisionServiceAccount creates, where missing, the hub's ServiceAccount,
// ClusterRole and ClusterRoleBinding in the member, with the joining
// user's client, and grants or withdraws RBAC propagation (see
// grantRBACPropagation).
func provisionServiceAccount(ctx context.Context, kc kubernetes.Interface, allowRBAC bool) error {
	labels := map[string]string{workv1alpha1.LabelManagedBy: workv1alpha1.ManagedByShepherd}
	if _, err := kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: clusterclient.MemberNamespace, Labels: labels}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s in the member: %w", clusterclient.MemberNamespace, err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: clusterclient.MemberNamespace, Name: clusterclient.MemberServiceAccount, Labels: labels}}
	if _, err := kc.CoreV1().ServiceAccounts(clusterclient.MemberNamespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating ServiceAccount %s/%s in the member: %w", sa.Namespace, sa.Name, err)
	}
	// An existing ClusterRole is left as it is: its owner may have narrowed
	// it on purpose, and the rights check below says what is then missing.
	role := memberClusterRole()
	if _, err := kc.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating ClusterRole %s in the member: %w", role.Name, err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: clusterclient.MemberClusterRole, Labels: labels},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterclient.MemberClusterRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: clusterclient.MemberNamespace, Name: clusterclient.MemberServiceAccount}},
	}
	if _, err := kc.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating ClusterRoleBinding %s in the member: %w", binding.Name, err)
	}
	if allowRBAC {
		return grantRBACPropagation(ctx, kc)
	}
	return withdrawRBACPropagation(ctx, kc)
}

// rbacPropagationObjects are the ClusterRole and ClusterRoleBinding that
// let the hub's ServiceAccount escalate and bind roles and cluster roles:
// store a propagated role holding rights the ServiceAccount lacks, or a
// binding granting them. They are separate from the hub's ClusterRole so
// that the opt-in is one object to find, audit and remove.
func rbacPropagationObjects() (*rbacv1.ClusterRole, *rbacv1.ClusterRoleBinding) {
	labels := map[string]string{workv1alpha1.LabelManagedBy: workv1alpha1.ManagedByShepherd}
	name := clusterclient.MemberRBACPropagationRole
	return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Rules: clusterclient.RBACPropagationRules()},
		&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: clusterclient.MemberNamespace, Name: clusterclient.MemberServiceAccount}},
		}
}

// grantRBACPropagation creates, or rewrites to this version's rules, the
// opt-in's ClusterRole and binding.
func grantRBACPropagation(ctx context.Context, kc kubernetes.Interface) error {
	role, binding := rbacPropagationObjects()
	if _, err := kc.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
		cur, gerr := kc.RbacV1().ClusterRoles().Get(ctx, role.Name, metav1.GetOptions{})
		if gerr != nil {
			return fmt.Errorf("reading ClusterRole %s in the member: %w", role.Name, gerr)
		}
		cur.Rules, cur.Labels = role.Rules, role.Labels
		_, err = kc.RbacV1().ClusterRoles().Update(ctx, cur, metav1.UpdateOptions{})
		if err != nil {
			return fmt.Errorf("updating ClusterRole %s in the member: %w", role.Name, err)
		}
	} else if err != nil {
		return fmt.Errorf("creating ClusterRole %s in the member (--allow-rbac-propagation): %w", role.Name, err)
	}
	if _, err := kc.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating ClusterRoleBinding %s in the member (--allow-rbac-propagation): %w", binding.Name, err)
	}
	return nil
}

// withdrawRBACPropagation deletes the opt-in's ClusterRoleBinding and
// ClusterRole where an earlier join created them (a join without the flag
// means the hub may no longer grant RBAC rights). Objects of that name
// without Shepherd's label are someone else's and left alone.
func withdrawRBACPropagation(ctx context.Context, kc kubernetes.Interface) error {
	name := clusterclient.MemberRBACPropagationRole
	ours := func(labels map[string]string) bool {
		return labels[workv1alpha1.LabelManagedBy] == workv1alpha1.ManagedByShepherd
	}
	b, err := kc.RbacV1().ClusterRoleBindings().Get(ctx, name, metav1.GetOptions{})
	if err == nil && ours(b.Labels) {
		err = kc.RbacV1().ClusterRoleBindings().Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &b.UID}})
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("withdrawing ClusterRoleBinding %s in the member: %w", name, err)
	}
	r, err := kc.RbacV1().ClusterRoles().Get(ctx, name, metav1.GetOptions{})
	if err == nil && ours(r.Labels) {
		err = kc.RbacV1().ClusterRoles().Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &r.UID}})
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("withdrawing ClusterRole %s in the member: %w", name, err)
	}
	return nil
}

// serviceAccountKubeconfig is a kubeconfig for server, trusting what the
// joining user's cluster entry trusts, that authenticates with token.
func serviceAccountKubeconfig(k *memberKubeconfig, token string) ([]byte, error) {
	src := k.config.Clusters[k.config.Contexts[k.context].Cluster]
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["member"] = &clientcmdapi.Cluster{
		Server: src.Server, CertificateAuthorityData: src.CertificateAuthorityData,
		InsecureSkipTLSVerify: src.InsecureSkipTLSVerify, TLSServerName: src.TLSServerName,
	}
	cfg.AuthInfos["shepherd-hub"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["member"] = &clientcmdapi.Context{Cluster: "member", AuthInfo: "shepherd-hub"}
	cfg.CurrentContext = "member"
	return clientcmd.Write(*cfg)
}

// issueServiceAccountCredentials provisions the hub's ServiceAccount with
// admin (the joining user's client), gets a token, checks that the token
// holds the rights Works need, and returns the kubeconfig to store and the
// token's expiry.
func issueServiceAccountCredentials(ctx context.Context, admin kubernetes.Interface, k *memberKubeconfig, timeout time.Duration, allowRBAC bool) ([]byte, time.Time, error) {
	if err := provisionServiceAccount(ctx, admin, allowRBAC); err != nil {
		return nil, time.Time{}, err
	}
	token, expiry, err := clusterclient.RequestToken(ctx, admin, clusterclient.DefaultTokenLifetime)
	if err != nil {
		return nil, time.Time{}, err
	}
	data, err := serviceAccountKubeconfig(k, token)
	if err != nil {
		return nil, time.Time{}, err
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		return nil, time.Time{}, err
	}
	cfg.Timeout = timeout
	sa, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, time.Time{}, err
	}
	// The member's authorizer learns of the new binding through a watch:
	// give it a few seconds before taking a denial as final.
	rights := clusterclient.RequiredRights
	if allowRBAC {
		rights = append(slices.Clip(rights), clusterclient.RBACPropagationRights...)
	}
	var missing []clusterclient.RequiredRight
	deadline := time.Now().Add(rbacPropagation)
	for {
		missing, err = clusterclient.MissingRights(ctx, sa, rights)
		if err != nil || len(missing) == 0 || time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return nil, time.Time{}, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("checking the rights of ServiceAccount %s/%s in the member: %w", clusterclient.MemberNamespace, clusterclient.MemberServiceAccount, err)
	}
	if len(missing) > 0 {
		names := make([]string, len(missing))
		for i, m := range missing {
			names[i] = m.String()
		}
		return nil, time.Time{}, fmt.Errorf("ServiceAccount %s/%s lacks rights every Work needs: %s; check the member's authorizer (RBAC) or join with --credentials kubeconfig",
			clusterclient.MemberNamespace, clusterclient.MemberServiceAccount, strings.Join(names, ", "))
	}
	return data, expiry, nil
}
