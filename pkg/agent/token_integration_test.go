package agent

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/clusterclient"
	"github.com/shepherd-io/shepherd/pkg/names"
	"github.com/shepherd-io/shepherd/test/testenv"
)

// TestAgentRenewsItsToken registers a Pull cluster on a real hub and
// renews its agent's token: the new token is the agent's, every client
// built before uses it, it is stored in the kubeconfig file and in a
// Secret, the agent may request no other ServiceAccount's token, and a
// registration whose Role predates renewal gets a message saying what to
// run.
func TestAgentRenewsItsToken(t *testing.T) {
	testenv.Heavy(t)
	ctx := context.Background()
	const cluster = "edge-1"
	hub, admin, reg := registeredHub(t, cluster)
	path := filepath.Join(t.TempDir(), "hub.kubeconfig")
	if err := os.WriteFile(path, reg.Kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(reg.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	oldToken := cfg.BearerToken
	wrapped, token := withRenewableToken(cfg)
	if token == nil {
		t.Fatal("the token shepherd register issues is not renewable")
	}
	agentHub := kubernetes.NewForConfigOrDie(wrapped)
	r := &tokenRenewer{hub: agentHub, token: token, cluster: cluster, store: FileTokenStore{Path: path}, log: testr.New(t), now: time.Now}

	next, err := r.renew(ctx)
	if err != nil {
		t.Fatal(err)
	}
	newToken := token.get()
	if newToken == oldToken {
		t.Fatal("the token did not change")
	}
	issued, expires, ok := clusterclient.TokenTimes(newToken)
	if !ok || expires.Sub(issued) != time.Hour {
		t.Errorf("the new token lasts %s (ok %v), want the old one's hour", expires.Sub(issued), ok)
	}
	if want := renewAt(issued, expires); !next.Equal(want) {
		t.Errorf("next renewal at %s, want %s", next, want)
	}

	// The clients built before the renewal authenticate with the new token
	// (a garbage token in the holder is refused, so it is the holder's).
	whoami := func() (string, error) {
		res, err := agentHub.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil {
			return "", err
		}
		return res.Status.UserInfo.Username, nil
	}
	want := "system:serviceaccount:" + names.ExecutionNamespace(cluster) + ":" + clusterv1alpha1.AgentServiceAccountName
	if got, err := whoami(); err != nil || got != want {
		t.Errorf("after the renewal the agent is %q (%v), want %q", got, err, want)
	}
	token.set("not-a-token")
	if _, err := whoami(); !apierrors.IsUnauthorized(err) {
		t.Errorf("with a garbage token in the holder: %v, want Unauthorized", err)
	}
	token.set(newToken)

	// Stored where it was read from.
	stored, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := stored.AuthInfos[stored.Contexts[stored.CurrentContext].AuthInfo].Token; got != newToken {
		t.Error("the kubeconfig file does not hold the renewed token")
	}
	// ... or in the Secret a pod mounts it from (this hub stands in for the
	// member).
	kc := kubernetes.NewForConfigOrDie(hub.Config)
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "shepherd-agent-hub"}, Data: map[string][]byte{"kubeconfig": reg.Kubeconfig}}
	if _, err := kc.CoreV1().Secrets("default").Create(ctx, sec, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := (SecretTokenStore{Member: kc, Namespace: "default", Name: "shepherd-agent-hub"}).Store(ctx, newToken); err != nil {
		t.Fatal(err)
	}
	got, err := kc.CoreV1().Secrets("default").Get(ctx, "shepherd-agent-hub", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg, err := clientcmd.RESTConfigFromKubeConfig(got.Data["kubeconfig"]); err != nil || cfg.BearerToken != newToken {
		t.Errorf("the Secret's kubeconfig does not hold the renewed token (%v)", err)
	}

	// The agent may request no other ServiceAccount's token.
	_, err = agentHub.CoreV1().ServiceAccounts(names.ExecutionNamespace(cluster)).CreateToken(ctx, "default", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("requesting the token of another ServiceAccount: %v, want Forbidden", err)
	}

	// A Role written before agents renewed their tokens: the error says
	// what to run.
	role := &rbacv1.Role{}
	if err := admin.Get(ctx, client.ObjectKey{Namespace: names.ExecutionNamespace(cluster), Name: clusterv1alpha1.AgentServiceAccountName}, role); err != nil {
		t.Fatal(err)
	}
	role.Rules = slices.DeleteFunc(role.Rules, func(r rbacv1.PolicyRule) bool { return slices.Contains(r.Resources, "serviceaccounts/token") })
	if err := admin.Update(ctx, role); err != nil {
		t.Fatal(err)
	}
	// The authorizer sees the Role's change a moment later.
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := r.renew(ctx)
		return err != nil, nil
	}); err != nil {
		t.Fatalf("the agent still renews without the right: %v", err)
	}
	if _, err := r.renew(ctx); err == nil || !strings.Contains(err.Error(), "run `shepherd register edge-1 --force`") {
		t.Errorf("renewing without the right: %v, want the fix named", err)
	}
}
