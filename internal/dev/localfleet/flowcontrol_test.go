package localfleet_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/internal/dev/localfleet"
	"github.com/shepherd-io/shepherd/pkg/install"
	"github.com/shepherd-io/shepherd/pkg/membership"
	"github.com/shepherd-io/shepherd/pkg/names"
	"github.com/shepherd-io/shepherd/test/fleetenv"
	"github.com/shepherd-io/shepherd/test/testenv"
)

// TestFlowControl starts a hub with the controller manager, as `shepherd
// up` does, and checks with the API server's own answer (the response
// headers naming the FlowSchema and priority level a request was
// classified into) that config/flowcontrol is accepted and sends the
// controller manager's scheduling writes and the status writes of it and
// of a Pull cluster's agent where they belong, and nothing else there.
func TestFlowControl(t *testing.T) {
	testenv.Heavy(t)
	env, err := fleetenv.StartFleet("flowcontrol", localfleet.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Stop()
	ctx, hub, admin := context.Background(), env.Hub, env.Fleet.Hub.RestConfig()

	objs, err := install.IdentityManifests()
	if err != nil {
		t.Fatal(err)
	}
	schemas := 0
	for _, o := range objs {
		if o.GetKind() != "FlowSchema" {
			continue
		}
		schemas++
		fleetenv.Eventually(t, "FlowSchema "+o.GetName()+" accepted, its priority level found", func() error {
			fs := &flowcontrolv1.FlowSchema{}
			if err := hub.Get(ctx, client.ObjectKey{Name: o.GetName()}, fs); err != nil {
				return err
			}
			for _, c := range fs.Status.Conditions {
				if c.Type == flowcontrolv1.FlowSchemaConditionDangling {
					if c.Status != flowcontrolv1.ConditionFalse {
						return fmt.Errorf("dangling: %s", c.Message)
					}
					return nil
				}
			}
			return fmt.Errorf("no %s condition yet", flowcontrolv1.FlowSchemaConditionDangling)
		})
	}
	if schemas < 2 {
		t.Fatalf("config/flowcontrol has %d FlowSchemas, want one for scheduling and one for status", schemas)
	}

	// The fixtures: a Pull cluster (its agent's token), a Work of it, a
	// binding, and a ServiceAccount with no part in Shepherd.
	reg, err := membership.Register(ctx, admin, hub, membership.RegisterOptions{Name: "edge"})
	if err != nil {
		t.Fatal(err)
	}
	agent, err := clientcmd.RESTConfigFromKubeConfig(reg.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	es := names.ExecutionNamespace("edge")
	work := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: es, Name: "web"},
		Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{
			Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"apf","name":"web"}}`)}}}}}}
	fleetenv.CreateNamespace(t, hub, "apf")
	binding := &workv1alpha1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "apf", Name: "web-configmap"},
		Spec: workv1alpha1.BindingSpec{Resource: workv1alpha1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: "apf", Name: "web", UID: "uid-web"}}}
	for _, o := range []client.Object{work, binding, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "apf", Name: "bystander"}}} {
		if err := hub.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	bystander := tokenConfig(t, admin, "apf", "bystander")
	manager := env.Fleet.ControllersConfig()
	if manager == nil {
		t.Fatal("the fleet's controller manager has no configuration of its own")
	}

	statusPatch := func(obj client.Object) func(client.Client) error {
		return func(c client.Client) error {
			return c.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(`{"status":{"conditions":[]}}`)))
		}
	}
	annotate := func(obj client.Object) func(client.Client) error {
		return func(c client.Client) error {
			return c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"apf-test":"x"}}}`)))
		}
	}
	for _, tc := range []struct {
		name string
		cfg  *rest.Config
		do   func(client.Client) error
		// wantLevel is the priority level; the built-in ones for what
		// must not be Shepherd's: exempt (system:masters), workload-low
		// (every other ServiceAccount).
		wantLevel string
		// forbidden: the request is refused (403) after it is classified.
		forbidden bool
	}{
		{name: "controller manager writes a Work's status", cfg: manager, do: statusPatch(work), wantLevel: "shepherd-status"},
		{name: "agent writes its Work's status", cfg: agent, do: statusPatch(work), wantLevel: "shepherd-status"},
		{name: "agent writes its Cluster's status", cfg: agent, do: func(c client.Client) error {
			return statusPatch(&clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "edge"}})(c)
		}, wantLevel: "shepherd-status"},
		{name: "controller manager writes a binding (scheduler, detector)", cfg: manager, do: annotate(binding), wantLevel: "shepherd-scheduling"},
		{name: "controller manager writes a binding's status (Scheduled condition)", cfg: manager, do: statusPatch(binding), wantLevel: "shepherd-scheduling"},
		{name: "controller manager writes a Work (binding controller)", cfg: manager, do: annotate(work), wantLevel: "shepherd-scheduling"},
		// What must not be classified as Shepherd's pipeline.
		{name: "agent renews its Lease: not queued behind status", cfg: agent, do: func(c client.Client) error {
			now := metav1.NewMicroTime(time.Now())
			return c.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: es, Name: clusterv1alpha1.AgentLeaseName},
				Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("edge-test"), LeaseDurationSeconds: ptr.To[int32](40), RenewTime: &now}})
		}, wantLevel: "workload-low"},
		{name: "controller manager reads a ConfigMap", cfg: manager, do: func(c client.Client) error {
			return client.IgnoreNotFound(c.Get(ctx, client.ObjectKey{Namespace: "apf", Name: "web"}, &corev1.ConfigMap{}))
		}, wantLevel: "workload-low"},
		{name: "another ServiceAccount writes a binding", cfg: bystander, do: annotate(binding), wantLevel: "workload-low", forbidden: true},
		{name: "admin writes a Work's status: exempt", cfg: admin, do: statusPatch(work), wantLevel: "exempt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := &classified{}
			cfg := rest.CopyConfig(tc.cfg)
			cfg.WrapTransport = got.wrap
			c, err := fleetenv.NewClient(cfg)
			if err != nil {
				t.Fatal(err)
			}
			err = tc.do(c)
			switch {
			case tc.forbidden && !apierrors.IsForbidden(err):
				t.Fatalf("want the request refused, got %v", err)
			case !tc.forbidden && err != nil:
				t.Fatal(err)
			}
			level, schema := got.names(t, hub)
			if level != tc.wantLevel {
				t.Errorf("classified into priority level %q (FlowSchema %q), want %q", level, schema, tc.wantLevel)
			}
		})
	}
}

// tokenConfig is a configuration holding a token of ServiceAccount
// ns/name.
func tokenConfig(t *testing.T, admin *rest.Config, ns, name string) *rest.Config {
	t.Helper()
	kc, err := kubernetes.NewForConfig(admin)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := kc.CoreV1().ServiceAccounts(ns).CreateToken(context.Background(), name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return &rest.Config{Host: admin.Host, BearerToken: tr.Status.Token, TLSClientConfig: rest.TLSClientConfig{CAData: admin.CAData, CAFile: admin.CAFile}}
}

// classified records the FlowSchema and priority level UIDs of the last
// response, from the headers API Priority and Fairness sets.
type classified struct {
	mu             sync.Mutex
	schema, level  string
	method, target string
}

func (c *classified) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err == nil {
			c.mu.Lock()
			c.schema = resp.Header.Get(flowcontrolv1.ResponseHeaderMatchedFlowSchemaUID)
			c.level = resp.Header.Get(flowcontrolv1.ResponseHeaderMatchedPriorityLevelConfigurationUID)
			c.method, c.target = req.Method, req.URL.Path
			c.mu.Unlock()
		}
		return resp, err
	})
}

// names resolves the recorded UIDs to the objects' names.
func (c *classified) names(t *testing.T, hub client.Client) (level, schema string) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.level == "" || c.schema == "" {
		t.Fatalf("%s %s: the response names no priority level or FlowSchema: is API Priority and Fairness on?", c.method, c.target)
	}
	var pls flowcontrolv1.PriorityLevelConfigurationList
	var fss flowcontrolv1.FlowSchemaList
	if err := hub.List(context.Background(), &pls); err != nil {
		t.Fatal(err)
	}
	if err := hub.List(context.Background(), &fss); err != nil {
		t.Fatal(err)
	}
	for _, pl := range pls.Items {
		if string(pl.UID) == c.level {
			level = pl.Name
		}
	}
	for _, fs := range fss.Items {
		if string(fs.UID) == c.schema {
			schema = fs.Name
		}
	}
	return level, schema
}

type roundTripper func(*http.Request) (*http.Response, error)

func (r roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return r(req) }
