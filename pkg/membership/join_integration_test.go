package membership_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/clusterclient"
	"github.com/shepherd-io/shepherd/pkg/membership"
	"github.com/shepherd-io/shepherd/pkg/membership/membershiptest"
)

// TestJoinAndUnjoin runs join and unjoin against a real hub and a real
// member API server.
func TestJoinAndUnjoin(t *testing.T) {
	ctx := context.Background()
	hub := membershiptest.HubClient(t, membershiptest.StartHub(t))
	member := membershiptest.StartMember(t, "member1")
	kubeconfig := member.Kubeconfig(t)

	t.Run("refuses an unreachable member and writes nothing", func(t *testing.T) {
		cfg, err := clientcmd.Load(kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		closed := fmt.Sprintf("https://127.0.0.1:%d", membershiptest.FreePort(t))
		for _, c := range cfg.Clusters {
			c.Server = closed
		}
		bad, _ := clientcmd.Write(*cfg)
		begin := time.Now()
		_, err = membership.Join(ctx, hub, membership.JoinOptions{Name: "gone", Kubeconfig: bad})
		want := fmt.Sprintf(`cannot reach member "gone" at %s: dial tcp`, closed)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasSuffix(err.Error(), "check --kubeconfig/--context") {
			t.Fatalf("err = %v, want %q ... check --kubeconfig/--context", err, want)
		}
		t.Logf("refused in %s: %v", time.Since(begin).Round(time.Millisecond), err)
		assertAbsent(t, hub, "gone")
	})

	t.Run("refuses credentials the member rejects", func(t *testing.T) {
		cfg, _ := clientcmd.Load(kubeconfig)
		for _, u := range cfg.AuthInfos {
			u.ClientCertificateData, u.ClientKeyData, u.Token = nil, nil, "bogus"
		}
		bad, _ := clientcmd.Write(*cfg)
		_, err := membership.Join(ctx, hub, membership.JoinOptions{Name: "badcreds", Kubeconfig: bad})
		if err == nil || !strings.Contains(err.Error(), `member "badcreds" at `+member.URL()+` refused the credentials`) {
			t.Fatalf("err = %v", err)
		}
		assertAbsent(t, hub, "badcreds")
	})

	opts := membership.JoinOptions{
		Name: "member1", Kubeconfig: kubeconfig, Provider: "onprem", Region: "eu", Zone: "eu-1",
		Labels: map[string]string{"env": "test"},
	}
	var first *membership.JoinResult
	t.Run("joins a real member", func(t *testing.T) {
		res, err := membership.Join(ctx, hub, opts)
		if err != nil {
			t.Fatal(err)
		}
		first = res
		if res.Endpoint != member.URL() || res.Version == "" {
			t.Errorf("result: %+v", res)
		}
		c := &clusterv1alpha1.Cluster{}
		if err := hub.Get(ctx, types.NamespacedName{Name: "member1"}, c); err != nil {
			t.Fatal(err)
		}
		s := c.Spec
		if s.APIEndpoint != member.URL() || s.SecretRef == nil || *s.SecretRef != (clusterv1alpha1.LocalSecretReference{Namespace: "shepherd-system", Name: "member1"}) ||
			s.Provider != "onprem" || s.Region != "eu" || s.Zone != "eu-1" || c.Labels["env"] != "test" || s.SyncMode != clusterv1alpha1.Push {
			t.Errorf("cluster spec: %+v labels %v", s, c.Labels)
		}
		sec := &corev1.Secret{}
		if err := hub.Get(ctx, types.NamespacedName{Namespace: "shepherd-system", Name: "member1"}, sec); err != nil {
			t.Fatal(err)
		}
		kc, err := clientcmd.Load(sec.Data["kubeconfig"])
		if err != nil {
			t.Fatal(err)
		}
		if len(kc.Contexts) != 1 || len(kc.Clusters[kc.Contexts[kc.CurrentContext].Cluster].CertificateAuthorityData) == 0 {
			t.Errorf("stored kubeconfig not minimized with embedded CA: %+v", kc)
		}
		// Not the joining user's credentials: a token of the hub's
		// ServiceAccount, short-lived, whose expiry the Secret records.
		user := kc.AuthInfos[kc.Contexts[kc.CurrentContext].AuthInfo]
		if user.Token == "" || len(user.ClientCertificateData) != 0 || len(user.ClientKeyData) != 0 {
			t.Errorf("stored credentials are not a ServiceAccount token: %+v", user)
		}
		exp, ok := clusterclient.TokenExpiry(user.Token)
		if !ok || time.Until(exp) > 25*time.Hour || time.Until(exp) < time.Hour {
			t.Errorf("token expiry %v", exp)
		}
		if sec.Annotations[clusterv1alpha1.AnnotationTokenExpiry] != exp.UTC().Format(time.RFC3339) {
			t.Errorf("expiry annotation %q, token expires %v", sec.Annotations[clusterv1alpha1.AnnotationTokenExpiry], exp)
		}
		review := &authenticationv1.SelfSubjectReview{}
		kcs := storedClient(t, hub, "member1")
		if review, err = kcs.AuthenticationV1().SelfSubjectReviews().Create(ctx, review, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if got := review.Status.UserInfo.Username; got != "system:serviceaccount:shepherd-system:shepherd-hub" {
			t.Errorf("the stored credentials authenticate as %q", got)
		}
		if slices.Contains(review.Status.UserInfo.Groups, "system:masters") {
			t.Errorf("the stored credentials are in system:masters")
		}
	})

	t.Run("joining again changes nothing and keeps taints", func(t *testing.T) {
		c := &clusterv1alpha1.Cluster{}
		if err := hub.Get(ctx, types.NamespacedName{Name: "member1"}, c); err != nil {
			t.Fatal(err)
		}
		c.Spec.Taints = []corev1.Taint{{Key: "user", Effect: corev1.TaintEffectNoSchedule}}
		if err := hub.Update(ctx, c); err != nil {
			t.Fatal(err)
		}
		res, err := membership.Join(ctx, hub, opts)
		if err != nil {
			t.Fatal(err)
		}
		if res.Cluster.ResourceVersion != c.ResourceVersion {
			t.Errorf("re-join wrote the Cluster: rv %s -> %s", c.ResourceVersion, res.Cluster.ResourceVersion)
		}
		if len(res.Cluster.Spec.Taints) != 1 || first == nil {
			t.Errorf("taints after re-join: %v", res.Cluster.Spec.Taints)
		}
		opts.Region = "us"
		res, err = membership.Join(ctx, hub, opts)
		if err != nil || res.Cluster.Spec.Region != "us" || len(res.Cluster.Spec.Taints) != 1 {
			t.Errorf("re-join with a new region: %v %+v", err, res)
		}
	})

	t.Run("records the member's identity", func(t *testing.T) {
		c := &clusterv1alpha1.Cluster{}
		if err := hub.Get(ctx, types.NamespacedName{Name: "member1"}, c); err != nil {
			t.Fatal(err)
		}
		ns, err := member.Kube(t).CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if c.Spec.ID == "" || c.Spec.ID != string(ns.UID) {
			t.Fatalf("spec.id %q, want the member's kube-system UID %s", c.Spec.ID, ns.UID)
		}
	})

	t.Run("refuses a second name for a joined member", func(t *testing.T) {
		_, err := membership.Join(ctx, hub, membership.JoinOptions{Name: "alias", Kubeconfig: kubeconfig})
		if err == nil || !strings.Contains(err.Error(), `is already joined as cluster "member1"`) {
			t.Fatalf("err = %v", err)
		}
		assertAbsent(t, hub, "alias")
	})

	t.Run("refuses re-pointing a name at another member unless forced", func(t *testing.T) {
		other := membershiptest.StartMember(t, "member3")
		before := &clusterv1alpha1.Cluster{}
		if err := hub.Get(ctx, types.NamespacedName{Name: "member1"}, before); err != nil {
			t.Fatal(err)
		}
		repoint := opts
		repoint.Kubeconfig = other.Kubeconfig(t)
		_, err := membership.Join(ctx, hub, repoint)
		if err == nil || !strings.Contains(err.Error(), `cluster "member1" is joined to another cluster`) || !strings.Contains(err.Error(), "--force") {
			t.Fatalf("err = %v", err)
		}
		after := &clusterv1alpha1.Cluster{}
		if err := hub.Get(ctx, types.NamespacedName{Name: "member1"}, after); err != nil {
			t.Fatal(err)
		}
		if after.ResourceVersion != before.ResourceVersion {
			t.Fatalf("a refused re-point wrote the Cluster")
		}
		repoint.Force = true
		res, err := membership.Join(ctx, hub, repoint)
		if err != nil || res.RepointedFrom != before.Spec.ID || res.Cluster.Spec.ID == before.Spec.ID || res.Endpoint != other.URL() {
			t.Fatalf("forced re-point: %+v %v", res, err)
		}
		// And back, for the tests below.
		opts.Force = true
		if _, err := membership.Join(ctx, hub, opts); err != nil {
			t.Fatal(err)
		}
		opts.Force = false
	})

	t.Run("unjoin waits for finalizers and keeps the Secret meanwhile", func(t *testing.T) {
		c := &clusterv1alpha1.Cluster{}
		if err := hub.Get(ctx, types.NamespacedName{Name: "member1"}, c); err != nil {
			t.Fatal(err)
		}
		c.Finalizers = []string{"test.shepherd.io/hold"}
		if err := hub.Update(ctx, c); err != nil {
			t.Fatal(err)
		}
		res, err := membership.Unjoin(ctx, hub, "member1", membership.UnjoinOptions{Timeout: time.Second})
		if err == nil || !strings.Contains(err.Error(), "test.shepherd.io/hold") || !res.ClusterDeleted {
			t.Fatalf("unjoin with a finalizer: %+v %v", res, err)
		}
		sec := &corev1.Secret{}
		if err := hub.Get(ctx, types.NamespacedName{Namespace: "shepherd-system", Name: "member1"}, sec); err != nil {
			t.Fatalf("Secret gone while the Cluster is terminating: %v", err)
		}
		if err := hub.Get(ctx, types.NamespacedName{Name: "member1"}, c); err != nil {
			t.Fatal(err)
		}
		c.Finalizers = nil
		if err := hub.Update(ctx, c); err != nil {
			t.Fatal(err)
		}
		res, err = membership.Unjoin(ctx, hub, "member1", membership.UnjoinOptions{})
		if err != nil || res.SecretDeleted != "shepherd-system/member1" {
			t.Fatalf("second unjoin: %+v %v", res, err)
		}
		assertAbsent(t, hub, "member1")
		if _, err := membership.Unjoin(ctx, hub, "member1", membership.UnjoinOptions{}); !errors.Is(err, membership.ErrNotJoined) {
			t.Errorf("unjoin of an unknown cluster: %v, want ErrNotJoined", err)
		}
	})

	t.Run("a forced unjoin gives up on the member and records what may remain", func(t *testing.T) {
		if _, err := membership.Join(ctx, hub, opts); err != nil {
			t.Fatal(err)
		}
		c := &clusterv1alpha1.Cluster{}
		if err := hub.Get(ctx, types.NamespacedName{Name: "member1"}, c); err != nil {
			t.Fatal(err)
		}
		c.Finalizers = []string{clusterv1alpha1.FinalizerCleanup}
		if err := hub.Update(ctx, c); err != nil {
			t.Fatal(err)
		}
		// A Work whose objects nobody can remove (no controller runs here).
		w := membershiptest.Work(t, "member1", "stuck", nil, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "left", "namespace": "apps"}})
		w.Finalizers = []string{"work.shepherd.io/execution"}
		membershiptest.CreateWork(t, hub, w)
		w.Status.ManifestStatuses = []workv1alpha1.ManifestStatus{{Identifier: workv1alpha1.ResourceIdentifier{Version: "v1", Kind: "ConfigMap", Namespace: "apps", Name: "left"}}}
		if err := hub.Status().Update(ctx, w); err != nil {
			t.Fatal(err)
		}
		var progress []string
		res, err := membership.Unjoin(ctx, hub, "member1", membership.UnjoinOptions{Timeout: time.Second, Force: true,
			Progress: func(m string) { progress = append(progress, m) }})
		if err != nil {
			t.Fatal(err)
		}
		if res.Record != "shepherd-system/shepherd-unjoined-member1" || len(res.Remaining) != 1 || !strings.HasPrefix(res.Remaining[0], "v1 ConfigMap apps/left") {
			t.Fatalf("result %+v", res)
		}
		if len(progress) == 0 || !strings.Contains(progress[0], "1 Works left") {
			t.Errorf("progress %v", progress)
		}
		cm := &corev1.ConfigMap{}
		if err := hub.Get(ctx, types.NamespacedName{Namespace: "shepherd-system", Name: "shepherd-unjoined-member1"}, cm); err != nil || !strings.Contains(cm.Data["remaining"], "apps/left") {
			t.Fatalf("record: %v %v", err, cm.Data)
		}
		assertAbsent(t, hub, "member1")
		if err := hub.Get(ctx, client.ObjectKeyFromObject(w), &workv1alpha1.Work{}); !apierrors.IsNotFound(err) {
			t.Errorf("Work left: %v", err)
		}
	})

	t.Run("unjoin keeps a Secret join did not create", func(t *testing.T) {
		sec := &corev1.Secret{}
		sec.Namespace, sec.Name = "shepherd-system", "byo"
		sec.StringData = map[string]string{"token": "t"}
		if err := hub.Create(ctx, sec); err != nil {
			t.Fatal(err)
		}
		res, err := membership.Unjoin(ctx, hub, "byo", membership.UnjoinOptions{})
		if err != nil || res.SecretKept == "" || res.SecretDeleted != "" {
			t.Fatalf("unjoin: %+v %v", res, err)
		}
	})
}

func assertAbsent(t *testing.T, hub client.Client, name string) {
	t.Helper()
	if err := hub.Get(context.Background(), types.NamespacedName{Name: name}, &clusterv1alpha1.Cluster{}); !apierrors.IsNotFound(err) {
		t.Errorf("Cluster %s: %v, want NotFound", name, err)
	}
	if err := hub.Get(context.Background(), types.NamespacedName{Namespace: "shepherd-system", Name: name}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Errorf("Secret %s: %v, want NotFound", name, err)
	}
}
