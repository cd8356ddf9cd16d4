package membership_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
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
