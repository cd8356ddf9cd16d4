package pull

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	mcv1alpha1 "github.com/shepherd-io/shepherd/api/multicluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/agent"
	"github.com/shepherd-io/shepherd/pkg/membership"
	"github.com/shepherd-io/shepherd/pkg/names"
	"github.com/shepherd-io/shepherd/test/fleetenv"
)

// otherCluster is registered by TestAgentCredentialsAreIsolated and never
// served: the Pull member's agent must not reach any of it.
const otherCluster = "other-edge"

// An agent's credentials reach its own cluster's Works, Cluster and Lease,
// and nothing else: each denial is a real request against the hub, and
// the same question asked with a SelfSubjectAccessReview.
func TestAgentCredentialsAreIsolated(t *testing.T) {
	ctx := context.Background()
	if _, err := membership.Register(ctx, fleet.Hub.RestConfig(), hub, membership.RegisterOptions{Name: otherCluster}); err != nil {
		t.Fatal(err)
	}
	otherNS := names.ExecutionNamespace(otherCluster)
	// A Work of the other cluster, as the binding controller would write it.
	other := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: otherNS, Name: "secret-plans"},
		Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{
			Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"plans","namespace":"default"}}`)}}}}}}
	if err := hub.Create(ctx, other); err != nil {
		t.Fatal(err)
	}
	as, err := newClient(agentCfg)
	if err != nil {
		t.Fatal(err)
	}
	ownNS := names.ExecutionNamespace(pullMember)
	denied := []struct {
		name string
		do   func() error
		attr authorizationv1.ResourceAttributes
	}{
		{"list another cluster's Works", func() error { return as.List(ctx, &workv1alpha1.WorkList{}, client.InNamespace(otherNS)) },
			authorizationv1.ResourceAttributes{Namespace: otherNS, Verb: "list", Group: workv1alpha1.SchemeGroupVersion.Group, Resource: "works"}},
		{"read another cluster's Work", func() error { return as.Get(ctx, client.ObjectKeyFromObject(other), &workv1alpha1.Work{}) },
			authorizationv1.ResourceAttributes{Namespace: otherNS, Verb: "get", Group: workv1alpha1.SchemeGroupVersion.Group, Resource: "works", Name: other.Name}},
		{"list Works of every namespace", func() error { return as.List(ctx, &workv1alpha1.WorkList{}) },
			authorizationv1.ResourceAttributes{Verb: "list", Group: workv1alpha1.SchemeGroupVersion.Group, Resource: "works"}},
		{"create a Work in its own namespace", func() error {
			return as.Create(ctx, &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: ownNS, Name: "smuggled"}})
		}, authorizationv1.ResourceAttributes{Namespace: ownNS, Verb: "create", Group: workv1alpha1.SchemeGroupVersion.Group, Resource: "works"}},
		{"delete a Work of its own", func() error {
			return as.DeleteAllOf(ctx, &workv1alpha1.Work{}, client.InNamespace(ownNS))
		}, authorizationv1.ResourceAttributes{Namespace: ownNS, Verb: "delete", Group: workv1alpha1.SchemeGroupVersion.Group, Resource: "works"}},
		{"read the members' credentials Secrets", func() error { return as.List(ctx, &corev1.SecretList{}, client.InNamespace("shepherd-system")) },
			authorizationv1.ResourceAttributes{Namespace: "shepherd-system", Verb: "list", Resource: "secrets"}},
		{"read Secrets of its own namespace", func() error { return as.List(ctx, &corev1.SecretList{}, client.InNamespace(ownNS)) },
			authorizationv1.ResourceAttributes{Namespace: ownNS, Verb: "list", Resource: "secrets"}},
		{"write another Cluster's status", func() error {
			c := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: otherCluster}}
			return as.Status().Patch(ctx, c, client.RawPatch("application/merge-patch+json", []byte(`{"status":{"kubernetesVersion":"v0.0.0-forged"}}`)))
		}, authorizationv1.ResourceAttributes{Verb: "patch", Group: clusterv1alpha1.SchemeGroupVersion.Group, Resource: "clusters", Subresource: "status", Name: otherCluster}},
		{"change its own Cluster's spec (taints, endpoint)", func() error {
			c := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: pullMember}}
			return as.Patch(ctx, c, client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"taints":[]}}`)))
		}, authorizationv1.ResourceAttributes{Verb: "patch", Group: clusterv1alpha1.SchemeGroupVersion.Group, Resource: "clusters", Name: pullMember}},
		{"list every Cluster", func() error { return as.List(ctx, &clusterv1alpha1.ClusterList{}) },
			authorizationv1.ResourceAttributes{Verb: "list", Group: clusterv1alpha1.SchemeGroupVersion.Group, Resource: "clusters"}},
		{"take another cluster's agent Lease", func() error {
			return as.Get(ctx, client.ObjectKey{Namespace: otherNS, Name: clusterv1alpha1.AgentLeaseName}, &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"}})
		}, authorizationv1.ResourceAttributes{Namespace: otherNS, Verb: "update", Group: "coordination.k8s.io", Resource: "leases", Name: clusterv1alpha1.AgentLeaseName}},
		{"list hub namespaces", func() error { return as.List(ctx, &corev1.NamespaceList{}) },
			authorizationv1.ResourceAttributes{Verb: "list", Resource: "namespaces"}},
		{"read a hub namespace (its Works carry the Pod Security labels it needs)", func() error {
			return as.Get(ctx, client.ObjectKey{Name: "default"}, &corev1.Namespace{})
		}, authorizationv1.ResourceAttributes{Verb: "get", Resource: "namespaces", Name: "default"}},
		{"request another ServiceAccount's token", func() error {
			sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ownNS, Name: "default"}}
			return as.SubResource("token").Create(ctx, sa, &authenticationv1.TokenRequest{})
		}, authorizationv1.ResourceAttributes{Namespace: ownNS, Verb: "create", Resource: "serviceaccounts", Subresource: "token", Name: "default"}},
		{"report an export as another cluster", func() error {
			return as.Create(ctx, &mcv1alpha1.ExportedService{ObjectMeta: metav1.ObjectMeta{Namespace: otherNS, Name: "shop.checkout"},
				Spec: mcv1alpha1.ExportedServiceSpec{Cluster: otherCluster, Namespace: "shop", Name: "checkout", Type: "ClusterSetIP"}})
		}, authorizationv1.ResourceAttributes{Namespace: otherNS, Verb: "create", Group: mcv1alpha1.GroupName, Resource: "exportedservices"}},
		{"write the hub's verdict on its own exports", func() error {
			es := &mcv1alpha1.ExportedService{ObjectMeta: metav1.ObjectMeta{Namespace: ownNS, Name: "shop.checkout"}}
			return as.Status().Patch(ctx, es, client.RawPatch("application/merge-patch+json", []byte(`{"status":{"observedGeneration":1}}`)))
		}, authorizationv1.ResourceAttributes{Namespace: ownNS, Verb: "patch", Group: mcv1alpha1.GroupName, Resource: "exportedservices", Subresource: "status"}},
		{"read templates on the hub", func() error { return as.List(ctx, &corev1.ConfigMapList{}, client.InNamespace("default")) },
			authorizationv1.ResourceAttributes{Namespace: "default", Verb: "list", Resource: "configmaps"}},
	}
	kc := kubernetes.NewForConfigOrDie(agentCfg)
	for _, d := range denied {
		t.Run(d.name, func(t *testing.T) {
			if err := d.do(); !apierrors.IsForbidden(err) {
				t.Errorf("request: got %v, want Forbidden", err)
			}
			if allowed(t, kc, d.attr) {
				t.Errorf("SelfSubjectAccessReview %+v: allowed", d.attr)
			}
		})
	}
	// What the agent needs stays allowed.
	for _, a := range []authorizationv1.ResourceAttributes{
		{Namespace: ownNS, Verb: "list", Group: workv1alpha1.SchemeGroupVersion.Group, Resource: "works"},
		{Namespace: ownNS, Verb: "patch", Group: workv1alpha1.SchemeGroupVersion.Group, Resource: "works", Subresource: "status"},
		{Verb: "patch", Group: clusterv1alpha1.SchemeGroupVersion.Group, Resource: "clusters", Subresource: "status", Name: pullMember},
		{Namespace: ownNS, Verb: "update", Group: "coordination.k8s.io", Resource: "leases", Name: clusterv1alpha1.AgentLeaseName},
		{Namespace: ownNS, Verb: "create", Resource: "serviceaccounts", Subresource: "token", Name: clusterv1alpha1.AgentServiceAccountName},
		{Namespace: ownNS, Verb: "create", Group: mcv1alpha1.GroupName, Resource: "exportedservices"},
		{Namespace: ownNS, Verb: "delete", Group: mcv1alpha1.GroupName, Resource: "exportedservices"},
	} {
		if !allowed(t, kc, a) {
			t.Errorf("the agent may not %+v, which it needs", a)
		}
	}
}

func allowed(t *testing.T, kc kubernetes.Interface, attr authorizationv1.ResourceAttributes) bool {
	t.Helper()
	r, err := kc.AuthorizationV1().SelfSubjectAccessReviews().Create(context.Background(),
		&authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &attr}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r.Status.Allowed
}

// register and the agent refuse what they cannot do, saying what to do.
func TestRegisterAndAgentBadInput(t *testing.T) {
	ctx := context.Background()
	unreachable := rest.CopyConfig(fleet.Hub.RestConfig())
	unreachable.Host = "https://127.0.0.1:1"
	wrongToken := &rest.Config{Host: fleet.Hub.RestConfig().Host, BearerToken: "not-a-token", TLSClientConfig: rest.TLSClientConfig{CAData: fleet.Hub.RestConfig().CAData}}
	clientFor := func(cfg *rest.Config) client.Client {
		c, err := newClient(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, tt := range []struct {
		name string
		cfg  *rest.Config
		opts membership.RegisterOptions
		want string
	}{
		{"a push cluster's name", fleet.Hub.RestConfig(), membership.RegisterOptions{Name: pushMember}, "already joined in Push mode"},
		{"a registered name", fleet.Hub.RestConfig(), membership.RegisterOptions{Name: pullMember}, "already registered"},
		{"an invalid name", fleet.Hub.RestConfig(), membership.RegisterOptions{Name: "Edge_1"}, "invalid cluster NAME"},
		{"an unreachable hub", unreachable, membership.RegisterOptions{Name: "edge-x"}, "reaching the hub"},
		{"a wrong token", wrongToken, membership.RegisterOptions{Name: "edge-x"}, "rejects these credentials"},
		{"a token TTL below the minimum", fleet.Hub.RestConfig(), membership.RegisterOptions{Name: "edge-x", TokenTTL: 1}, "--token-ttl"},
	} {
		t.Run("register "+tt.name, func(t *testing.T) {
			_, err := membership.Register(ctx, tt.cfg, clientFor(tt.cfg), tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
	if err := hub.Get(ctx, client.ObjectKey{Name: "edge-x"}, &clusterv1alpha1.Cluster{}); !apierrors.IsNotFound(err) {
		t.Errorf("a refused registration left Cluster edge-x behind: %v", err)
	}

	agentWrongToken := rest.CopyConfig(agentCfg)
	agentWrongToken.BearerToken = "not-a-token"
	for _, tt := range []struct {
		name    string
		cfg     *rest.Config
		cluster string
		want    string
	}{
		{"another cluster's name", agentCfg, otherCluster, "issued for another cluster"},
		{"a push cluster's name", agentCfg, pushMember, "issued for another cluster"},
		{"a wrong token", agentWrongToken, pullMember, "rejects the agent's credentials"},
	} {
		t.Run("agent with "+tt.name, func(t *testing.T) {
			err := agent.Check(ctx, tt.cfg, tt.cluster)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
	// A push cluster refuses an agent even with credentials that may read it.
	if err := agent.Check(ctx, fleet.Hub.RestConfig(), pushMember); err == nil || !strings.Contains(err.Error(), "Push mode") {
		t.Errorf("agent for a push cluster: got %v", err)
	}
}

// The agent's Role lets it update its own Works for their finalizer; the
// admission policy `shepherd register` applies keeps it to that: a stolen
// agent token cannot rewrite what the hub sends its cluster.
func TestAgentMayOnlyChangeFinalizersOfItsWorks(t *testing.T) {
	ctx := context.Background()
	own := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: names.ExecutionNamespace(pullMember), Name: "guarded", Finalizers: []string{"example.com/hub"}},
		Spec: workv1alpha1.WorkSpec{SuspendDispatching: true, Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{
			Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"guarded","namespace":"default"}}`)}}}}}}
	if err := hub.Create(ctx, own); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = hub.Patch(ctx, own, client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`)))
		_ = hub.Delete(ctx, own)
	})
	as, err := newClient(agentCfg)
	if err != nil {
		t.Fatal(err)
	}
	patch := func(p string) error {
		return as.Patch(ctx, &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: own.Namespace, Name: own.Name}}, client.RawPatch("application/merge-patch+json", []byte(p)))
	}
	// The API server loads admission policies asynchronously: wait until
	// this one is in force (run alone, this test can be first).
	// (A dry run: admission runs, nothing is stored.)
	fleetenv.Eventually(t, "the admission policy refuses the agent", func() error {
		err := as.Patch(ctx, &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: own.Namespace, Name: own.Name}},
			client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"suspendDispatching":false}}`)), client.DryRunAll)
		if !apierrors.IsForbidden(err) {
			return fmt.Errorf("got %v", err)
		}
		return nil
	})
	for _, tt := range []struct {
		name, patch, want string
	}{
		{"its manifests", `{"spec":{"workload":{"manifests":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"evil","namespace":"default"}}]}}}`, "spec.workload is the hub's"},
		{"its dispatching", `{"spec":{"suspendDispatching":false}}`, "spec.workload is the hub's"},
		{"its labels", `{"metadata":{"labels":{"work.shepherd.io/cluster":"elsewhere"}}}`, "labels and annotations are the hub's"},
		{"its owner references", `{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"owner","uid":"2b0d7d2e-0c3a-4b8e-9a57-3c7b1f0e7a11"}]}}`,
			"ownerReferences are the hub's"},
		{"a finalizer of its choosing", `{"metadata":{"finalizers":["example.com/hold"]}}`, "only its own finalizer (work.shepherd.io/execution)"},
		{"a hub's finalizer removed", `{"metadata":{"finalizers":null}}`, "only its own finalizer"},
	} {
		t.Run("refused: "+tt.name, func(t *testing.T) {
			err := patch(tt.patch)
			if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want Forbidden naming %q", err, tt.want)
			}
		})
	}
	if err := patch(`{"metadata":{"finalizers":["example.com/hub","work.shepherd.io/execution"]}}`); err != nil {
		t.Fatalf("adding its finalizer, as the agent does: %v", err)
	}
	if err := patch(`{"metadata":{"finalizers":["example.com/hub"]}}`); err != nil {
		t.Fatalf("removing its finalizer: %v", err)
	}
	got := &workv1alpha1.Work{}
	if err := hub.Get(ctx, client.ObjectKeyFromObject(own), got); err != nil {
		t.Fatal(err)
	}
	if !got.Spec.SuspendDispatching || len(got.Labels) != 0 || len(got.OwnerReferences) != 0 || !slices.Equal(got.Finalizers, []string{"example.com/hub"}) {
		t.Errorf("the Work changed: %+v %+v", got.ObjectMeta, got.Spec)
	}
}
