package install

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shepherd-io/shepherd/pkg/admission"
	"github.com/shepherd-io/shepherd/pkg/controllermanager"
	"github.com/shepherd-io/shepherd/pkg/controllers/clusterstatus"
	"github.com/shepherd-io/shepherd/pkg/install"
	"github.com/shepherd-io/shepherd/test/fleetenv"
)

// identity is the replica's name, as the Deployment's pod name would be.
const identity = "shepherd-controller-manager-7d9c5-x2x4q"

// TestControllerManagerUnderItsOwnRBAC installs config/default, runs the
// controller manager with nothing but its ServiceAccount's token, and
// checks the fleet's main paths with real objects: propagation with
// dependencies and status, the webhooks, a RescheduleTask, a cluster
// failover, a policy's deletion, an unjoin. Any 403 the controller manager received fails the test; so
// do rights it must not have. Then uninstall refuses while bindings exist,
// and with --force removes all but the CRDs and the namespace.
func TestControllerManagerUnderItsOwnRBAC(t *testing.T) {
	ctx := context.Background()
	objs, err := install.Manifests("")
	if err != nil {
		t.Fatal(err)
	}
	// What `shepherd install --wait=false` does, then the CRDs' wait (the
	// embedded hub runs no pods: the Deployment never becomes Available).
	if err := install.Apply(ctx, hub, objs, io.Discard); err != nil {
		t.Fatal(err)
	}
	waitCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := install.WaitEstablished(waitCtx, hub, objs); err != nil {
		t.Fatal(err)
	}

	port := freePort(t)
	pointWebhooksAt(t, port)
	cfg := serviceAccountConfig(t)
	forbids := &forbidden{}
	cfg.WrapTransport = forbids.wrap
	stop := startControllerManager(t, cfg, port)

	steps := []struct {
		name string
		run  func(*testing.T)
	}{
		{"leader elected and webhook CA published", waitLeaderAndWebhook},
		{"members ready", waitMembersReady},
		{"propagation", testPropagation},
		{"bindings are Shepherd's", testBindingsAreShepherds},
		{"RBAC overrides held to the hub's escalation rules", testRBACOverrides},
		{"override paths refused in any letter case", testOverridePathsInAnyCase},
		{"override operations bounded", testOverrideOperationsBound},
		{"the dashboard's example roles grant what they say", testDashboardRoles},
		{"webhooks", testWebhooks},
		{"reschedule task", testRescheduleTask},
		{"cluster failover", testClusterFailover},
		{"policy deleted: what it propagated stays until its template goes", testPolicyDeleted},
		{"unjoin", testUnjoin},
		{"a workload left for uninstall", testLeftover},
		{"rights it must not have", testDenials},
	}
	passed := true
	for _, s := range steps {
		if passed = t.Run(s.name, s.run); !passed {
			break // the next steps build on this one
		}
	}
	// Whatever failed, the refusals it met say why.
	if err := stop(); err != nil {
		t.Errorf("the controller manager stopped with %v", err)
	}
	if got := forbids.list(); len(got) > 0 {
		t.Errorf("the controller manager was refused these requests; its RBAC (the kubebuilder:rbac markers, `make generate`) lacks:\n%s",
			strings.Join(got, "\n"))
	}
	if !passed {
		t.FailNow()
	}
	t.Run("uninstall", func(t *testing.T) { testUninstall(t, objs) })
}

// freePort returns a loopback port nothing listens on.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// pointWebhooksAt stands in for the Service of
// config/controllermanager/webhook.yaml, which the embedded hub cannot
// route to (it has no kube-proxy, and Endpoints refuse loopback
// addresses): as the admin, each webhook of the installed configuration
// gets a url: on the loopback port instead, with its path. The controller
// manager then does what it does in a pod: it adds its CA to this
// configuration, under its own rights.
func pointWebhooksAt(t *testing.T, port int) {
	t.Helper()
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := hub.Get(context.Background(), client.ObjectKey{Name: admission.DefaultWebhookConfigurationName}, vwc); err != nil {
		t.Fatal(err)
	}
	for i := range vwc.Webhooks {
		cc := &vwc.Webhooks[i].ClientConfig
		if cc.Service == nil || cc.Service.Path == nil {
			t.Fatalf("webhook %s has no service path", vwc.Webhooks[i].Name)
		}
		cc.URL = ptr.To(fmt.Sprintf("https://127.0.0.1:%d%s", port, *cc.Service.Path))
		cc.Service = nil
	}
	if err := hub.Update(context.Background(), vwc); err != nil {
		t.Fatal(err)
	}
}

// serviceAccountConfig is a client configuration holding only a token of
// the controller manager's ServiceAccount (TokenRequest) and the hub's CA:
// no client certificate.
func serviceAccountConfig(t *testing.T) *rest.Config {
	t.Helper()
	cfg, err := install.ServiceAccountConfig(context.Background(), fleet.Hub.RestConfig(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	sa, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	review, err := sa.AuthenticationV1().SelfSubjectReviews().Create(context.Background(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := install.ServiceAccountUser; review.Status.UserInfo.Username != want {
		t.Fatalf("the token authenticates as %s, want %s", review.Status.UserInfo.Username, want)
	}
	return cfg
}

// startControllerManager runs the controller manager as the Deployment of
// config/manager does (leader election under the pod's name, the webhook
// on 9443 behind the Service), with the webhook on a loopback port and the
// e2e tests' short cluster probe periods. stop stops it and returns its
// error.
func startControllerManager(t *testing.T, cfg *rest.Config, port int) (stop func() error) {
	t.Helper()
	log := funcr.New(func(prefix, args string) { fmt.Println(prefix, args) }, funcr.Options{})
	ctrl.SetLogger(log)
	mgr, err := controllermanager.New(cfg, controllermanager.Options{
		LeaderElection:          true,
		LeaderElectionIdentity:  identity,
		Namespace:               install.Namespace,
		GracefulShutdownTimeout: 5 * time.Second,
		Webhook: &admission.WebhookOptions{BindAddress: "127.0.0.1", Port: port,
			DNSNames: []string{"shepherd-webhook." + install.Namespace + ".svc"}},
		Config: controllermanager.Config{ClusterStatus: clusterstatus.Options{ProbeInterval: time.Second, NotReadyGracePeriod: 10 * time.Second,
			NoExecuteGracePeriod: 20 * time.Second, ProbeTimeout: 5 * time.Second}},
		// The chart's test restarts the controller manager in this
		// process, as an upgrade's rollout replaces the pod.
		SkipNameValidation: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- mgr.Start(logr.NewContext(ctx, log.WithName("controllers"))) }()
	// Stopping twice returns the first answer rather than waiting for a
	// second one that never comes.
	return sync.OnceValue(func() error {
		cancel()
		if err := <-errc; err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
		return nil
	})
}

func waitLeaderAndWebhook(t *testing.T) {
	eventually(t, "the controller manager holds the leader Lease", func() error {
		l := &coordinationv1.Lease{}
		if err := hub.Get(context.Background(), client.ObjectKey{Namespace: install.Namespace, Name: controllermanager.DefaultLeaderElectionID}, l); err != nil {
			return err
		}
		if h := ptr.Deref(l.Spec.HolderIdentity, ""); h != identity {
			return fmt.Errorf("held by %q", h)
		}
		return nil
	})
	eventually(t, "the webhook's CA in the installed configuration", func() error {
		vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := hub.Get(context.Background(), client.ObjectKey{Name: admission.DefaultWebhookConfigurationName}, vwc); err != nil {
			return err
		}
		for _, w := range vwc.Webhooks {
			if len(w.ClientConfig.CABundle) == 0 {
				return fmt.Errorf("webhook %s has no caBundle yet", w.Name)
			}
		}
		return nil
	})
}

// apply server-side applies a YAML stream as the admin.
func apply(t *testing.T, yaml string) {
	t.Helper()
	for _, doc := range strings.Split(yaml, "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yamlToObject(doc, u); err != nil {
			t.Fatal(err)
		}
		if err := hub.Apply(context.Background(), client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("install-test"), client.ForceOwnership); err != nil {
			t.Fatalf("applying %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
}

func createNamespace(t *testing.T, name string) { t.Helper(); fleetenv.CreateNamespace(t, hub, name) }
