// Package leader runs two `shepherd controller-manager` processes against
// a real hub and freezes the leader with SIGSTOP, to show that a leader
// that lost its lease while frozen writes nothing once it runs again.
package leader

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheme"
	"github.com/shepherd-io/shepherd/test/testenv"
)

var (
	hub    *testenv.Hub
	binary string
)

// Lease timing: the current leader is frozen for less than the renew
// deadline (it keeps leading), the former one for more than the lease
// duration (it lost the lease).
const (
	leaseDuration = 12 * time.Second
	renewDeadline = 9 * time.Second
)

func TestMain(m *testing.M) { os.Exit(suite.Main(m)) }

// suite starts the hub and builds the binary for the first test
// (suite.Hub(t)); none runs under -short.
var suite = testenv.Shared{
	Prefix: "shepherd-leader-",
	Before: func(h *testenv.Hub) (func(), error) {
		hub = h
		dir, err := os.MkdirTemp("", "shepherd-bin-")
		if err != nil {
			return nil, err
		}
		binary = filepath.Join(dir, "shepherd")
		build := exec.Command("go", "build", "-o", binary, "../../cmd/shepherd")
		if out, err := build.CombinedOutput(); err != nil {
			return func() { os.RemoveAll(dir) }, fmt.Errorf("building shepherd: %v\n%s", err, out)
		}
		return func() { os.RemoveAll(dir) }, nil
	},
}

// replica is one controller-manager process.
type replica struct {
	name string
	cmd  *exec.Cmd
	log  string
}

func startReplica(t *testing.T, name string) *replica {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "controller-manager",
		"--hub-kubeconfig", hub.ControlPlane.KubeconfigPath(),
		"--leader-elect", "--leader-elect-identity", name,
		"--leader-elect-lease-duration", leaseDuration.String(), "--leader-elect-renew-deadline", renewDeadline.String(), "--leader-elect-retry-period", "1s",
		"--metrics-bind-address", "0", "--health-probe-bind-address", "0", "-v", "1")
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &replica{name: name, cmd: cmd, log: logPath}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		f.Close()
		if t.Failed() {
			data, _ := os.ReadFile(logPath)
			t.Logf("log of %s (last 3000 bytes):\n%s", name, tail(string(data), 3000))
		}
	})
	return r
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

func (r *replica) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := r.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signalling %s: %v", r.name, err)
	}
}

func holder(ctx context.Context, c client.Client) (string, error) {
	lease := &coordinationv1.Lease{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "shepherd-system", Name: "shepherd-controller-manager"}, lease); err != nil {
		return "", err
	}
	if lease.Spec.HolderIdentity == nil {
		return "", nil
	}
	return *lease.Spec.HolderIdentity, nil
}

func createCluster(t *testing.T, c client.Client, name string) {
	t.Helper()
	cl := &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: clusterv1alpha1.ClusterSpec{
			APIEndpoint: "https://127.0.0.1:1",
			SecretRef:   &clusterv1alpha1.LocalSecretReference{Namespace: "shepherd-system", Name: name},
		},
	}
	if err := c.Create(context.Background(), cl); err != nil {
		t.Fatal(err)
	}
}

func finalizers(ctx context.Context, c client.Client, name string) ([]string, error) {
	cl := &clusterv1alpha1.Cluster{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, cl); err != nil {
		return nil, err
	}
	return cl.Finalizers, nil
}

// TestFrozenLeaderWritesNothing: the leader is frozen (SIGSTOP) until the
// other replica takes over, then that one is frozen too and a Cluster is
// created; the former leader resumes (SIGCONT) with the Cluster in its
// queue. Its cleanup controller would add its finalizer at once, but the
// write is fenced: the Cluster stays without it until the current leader
// resumes and adds it.
func TestFrozenLeaderWritesNothing(t *testing.T) {
	suite.Hub(t)
	ctx := context.Background()
	c, err := client.New(hub.Config, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	replicas := map[string]*replica{"replica-a": startReplica(t, "replica-a"), "replica-b": startReplica(t, "replica-b")}

	var leader string
	testenv.Eventually(t, 60*time.Second, "a leader", func() error {
		var err error
		if leader, err = holder(ctx, c); err != nil || leader == "" {
			return fmt.Errorf("holder %q: %v", leader, err)
		}
		return nil
	})
	createCluster(t, c, "before")
	testenv.Eventually(t, 30*time.Second, "the leader adds the cleanup finalizer", func() error {
		f, err := finalizers(ctx, c, "before")
		if err != nil || len(f) == 0 {
			return fmt.Errorf("finalizers %v: %v", f, err)
		}
		return nil
	})

	old := replicas[leader]
	other := replicas["replica-a"]
	if other == old {
		other = replicas["replica-b"]
	}
	old.signal(t, syscall.SIGSTOP)
	frozen := time.Now()
	testenv.Eventually(t, 60*time.Second, "the other replica takes over", func() error {
		h, err := holder(ctx, c)
		if err != nil || h != other.name {
			return fmt.Errorf("holder %q: %v", h, err)
		}
		return nil
	})
	t.Logf("%s took over %s after %s was frozen", other.name, time.Since(frozen).Round(time.Millisecond), old.name)
	other.signal(t, syscall.SIGSTOP)
	createCluster(t, c, "during")
	time.Sleep(time.Second) // the event reaches the frozen replicas' watches
	old.signal(t, syscall.SIGCONT)

	// Most of what a resumed leader used to keep reconciling for (about
	// 12 s), while the current leader stays within its renew deadline.
	deadline := time.Now().Add(6 * time.Second)
	for time.Now().Before(deadline) {
		f, err := finalizers(ctx, c, "during")
		if err != nil {
			t.Fatal(err)
		}
		if len(f) > 0 {
			t.Fatalf("the former leader %s wrote after losing its lease: finalizers %v", old.name, f)
		}
		time.Sleep(200 * time.Millisecond)
	}
	data, _ := os.ReadFile(old.log)
	log := string(data)
	if !strings.Contains(log, "write refused") && !strings.Contains(log, "leader election lost") {
		t.Errorf("the former leader's log shows neither a refused write nor the lost election")
	}

	other.signal(t, syscall.SIGCONT)
	testenv.Eventually(t, 30*time.Second, "the current leader adds the finalizer", func() error {
		f, err := finalizers(ctx, c, "during")
		if err != nil || len(f) == 0 {
			return fmt.Errorf("finalizers %v: %v", f, err)
		}
		return nil
	})
}
