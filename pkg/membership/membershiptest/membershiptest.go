// Package membershiptest runs real member API servers next to a real hub
// for integration tests, joins them the way `shepherd join` does, and runs a
// controller-runtime manager against the hub. Members are plain
// kube-apiservers (package controlplane) without controllers or kubelets:
// tests write the status a member's controllers would write.
package membershiptest

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	"github.com/shepherd-io/shepherd/internal/dev/controlplane"
	"github.com/shepherd-io/shepherd/pkg/membership"
	"github.com/shepherd-io/shepherd/pkg/scheme"
	"github.com/shepherd-io/shepherd/test/testenv"
)

// Logger writes to stderr rather than through testing.T: controllers and
// informers may log after a test returned. SHEPHERD_TEST_V sets verbosity.
func Logger() logr.Logger {
	v, _ := strconv.Atoi(os.Getenv("SHEPHERD_TEST_V"))
	return funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{Verbosity: v})
}

// StartHub starts a hub with Shepherd's CRDs, stopped when t ends. The
// test is skipped under -short (testenv.Heavy).
func StartHub(t testing.TB) *testenv.Hub {
	t.Helper()
	testenv.Heavy(t)
	ctrllog.SetLogger(Logger())
	hub, err := testenv.Start(t.TempDir())
	if err != nil {
		t.Fatalf("starting the hub: %v", err)
	}
	t.Cleanup(func() {
		if err := hub.Stop(); err != nil {
			t.Errorf("stopping the hub: %v", err)
		}
	})
	return hub
}

// HubClient is an uncached client of the hub with Shepherd's scheme.
func HubClient(t testing.TB, hub *testenv.Hub) client.Client {
	t.Helper()
	c, err := client.New(hub.Config, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Member is a plain kube-apiserver standing in for a member cluster. Its
// port is fixed at first start so that Stop and Start keep its endpoint, as
// a real member coming back would. The first start lets the API server's
// listener take any free port itself: a port picked before the start (a
// listener opened and closed) could be taken in between by another test
// process, or by this one's etcd, and the start then failed with "address
// already in use".
type Member struct {
	Name    string
	DataDir string
	port    int
	cp      *controlplane.ControlPlane
	cancel  context.CancelFunc
}

// StartMember starts a member named name, stopped when t ends (skipped
// under -short, as Start).
func StartMember(t testing.TB, name string) *Member {
	t.Helper()
	m := &Member{Name: name, DataDir: filepath.Join(t.TempDir(), name)}
	m.Start(t)
	t.Cleanup(func() { m.Stop(t) })
	return m
}

// Start (re)starts the member on its data dir and port. The test is
// skipped under -short (testenv.Heavy).
func (m *Member) Start(t testing.TB) {
	t.Helper()
	testenv.Heavy(t)
	ctx, cancel := context.WithCancel(context.Background())
	begin := time.Now()
	cp, err := controlplane.Start(ctx, controlplane.Options{DataDir: m.DataDir, APIServerPort: m.port, Logger: Logger().WithName(m.Name)})
	if err != nil {
		cancel()
		t.Fatalf("starting member %s: %v", m.Name, err)
	}
	if m.port == 0 {
		u, err := url.Parse(cp.URL())
		if err == nil {
			m.port, err = strconv.Atoi(u.Port())
		}
		if err != nil {
			_ = cp.Stop()
			cancel()
			t.Fatalf("member %s: the port of %s: %v", m.Name, cp.URL(), err)
		}
	}
	t.Logf("member %s up at %s in %s", m.Name, cp.URL(), time.Since(begin).Round(time.Millisecond))
	m.cp, m.cancel = cp, cancel
}

// Stop stops the member and waits for it; a stopped member is a no-op.
func (m *Member) Stop(t testing.TB) {
	t.Helper()
	if m.cp == nil {
		return
	}
	m.cancel()
	if err := m.cp.Wait(); err != nil {
		t.Errorf("stopping member %s: %v", m.Name, err)
	}
	m.cp = nil
}

// URL is the member's API server URL.
func (m *Member) URL() string {
	return "https://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(m.port))
}

// Config is the member's admin client config.
func (m *Member) Config() *rest.Config { return m.cp.RestConfig() }

// KubeconfigPath is the member's admin kubeconfig file.
func (m *Member) KubeconfigPath() string { return m.cp.KubeconfigPath() }

// Kubeconfig returns the member's admin kubeconfig file contents.
func (m *Member) Kubeconfig(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(m.KubeconfigPath())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Kube is a typed client of the member.
func (m *Member) Kube(t testing.TB) kubernetes.Interface {
	t.Helper()
	c, err := kubernetes.NewForConfig(m.Config())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Join joins the member to the hub with membership.Join, as `shepherd join`.
func (m *Member) Join(t testing.TB, hub client.Client) *membership.JoinResult {
	t.Helper()
	res, err := membership.Join(context.Background(), hub, membership.JoinOptions{Name: m.Name, Kubeconfig: m.Kubeconfig(t)})
	if err != nil {
		t.Fatalf("joining %s: %v", m.Name, err)
	}
	return res
}

// BlackHole returns the URL of a loopback endpoint that accepts TCP
// connections and never answers, like a member behind a dead link: requests
// to it end only by timing out. It closes when t ends.
func BlackHole(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "https://" + ln.Addr().String()
}

// AddCluster writes a Cluster and its credentials Secret the way join
// does, but without checking the member answers (join would refuse an
// unreachable one). server replaces the kubeconfig's server URL.
func AddCluster(t testing.TB, hub client.Client, name string, kubeconfig []byte, server string) {
	t.Helper()
	ctx := context.Background()
	cfg, err := clientcmd.Load(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cfg.Clusters {
		c.Server = server
	}
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: membership.DefaultNamespace}}
	if err := hub.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: membership.DefaultNamespace, Name: name}, Data: map[string][]byte{"kubeconfig": data}}
	if err := hub.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	cluster := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: clusterv1alpha1.ClusterSpec{
		APIEndpoint: server,
		SecretRef:   &clusterv1alpha1.LocalSecretReference{Namespace: membership.DefaultNamespace, Name: name},
	}}
	if err := hub.Create(ctx, cluster); err != nil {
		t.Fatal(err)
	}
}

// FreePort returns a loopback port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// RunManager starts a manager on the hub with the controllers setups
// register (testenv's test settings), stopped when t ends.
func RunManager(t testing.TB, hub *testenv.Hub, setups ...func(manager.Manager) error) {
	t.Helper()
	mgr, err := hub.StartManager(func(mgr manager.Manager) error {
		for _, setup := range setups {
			if err := setup(mgr); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := mgr.Stop(); err != nil {
			t.Errorf("manager: %v", err)
		}
	})
}
