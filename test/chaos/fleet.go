package chaos

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shepherd-io/shepherd/internal/dev/localfleet"
	"github.com/shepherd-io/shepherd/internal/dev/simmember"
	"github.com/shepherd-io/shepherd/pkg/agent"
	"github.com/shepherd-io/shepherd/pkg/controllermanager"
	"github.com/shepherd-io/shepherd/test/fleetenv"
)

// The fleet's timing: short, so faults on either side of each grace
// period fit in a run of a few minutes.
const (
	noScheduleGrace = 4 * time.Second
	noExecuteGrace  = 10 * time.Second
	leaseDuration   = 6 * time.Second
	renewDeadline   = 4 * time.Second
	// orphanSweepPeriod: the sweep removes an orphan on its second
	// sighting, two periods at most, well within convergeBound.
	orphanSweepPeriod = 20 * time.Second
)

var (
	pushMembers = []string{"member1", "member2"}
	pullMembers = []string{"pull1"}
	// agentOpts time the Pull agents: a stopped agent shows within seconds.
	agentOpts = func() agent.Options {
		o := fleetenv.FastAgent()
		o.Orphans.Period = orphanSweepPeriod
		return o
	}()
)

// chaosFleet is a local fleet whose every fault point is reachable: the
// controller manager runs as two leader-elected processes that reach the
// hub through a proxy, the hub reaches each Push member through a proxy,
// and each Pull member's agent can be stopped.
type chaosFleet struct {
	env      *fleetenv.FleetEnv
	hubProxy *fleetenv.Proxy
	members  map[string]*fleetenv.Proxy
	binary   string
	// kubeconfig is the hub's admin kubeconfig, rewritten to dial the
	// hub's proxy: what the controller managers use.
	kubeconfig string
	logDir     string

	mu       sync.Mutex
	replicas map[string]*exec.Cmd
	// agentsMu guards agentsStopped, and is held while an agent stops or
	// starts: never mu, which a hub restart needs (routeEtcd). Stopping
	// an agent whose caches have not synced waits until they do (a
	// controller-runtime manager cancelled before its caches synced does
	// not return until they sync), which takes the hub back: under mu,
	// a restart-hub meanwhile waited for the agent, and the agent for
	// the hub, for good.
	agentsMu      sync.Mutex
	agentsStopped map[string]bool
	// restarts counts the replicas' exits on their own, by replica.
	restarts map[string]int
	// stopped: the test is over; nothing starts again.
	stopped bool
	// etcdProxy is between the hub's API server and its etcd (routeEtcd):
	// the slow-hub-etcd fault slows it.
	etcdProxy *fleetenv.Proxy
	// hubRestart serializes restart-hub faults: the schedule may draw a
	// second while the first still restarts the hub (the fleet refuses
	// that), so the second restarts it once the first is done.
	hubRestart sync.Mutex
	// memberRestart does the same for restart-member faults on one member
	// (by name): a restart under load outlasts the down time the schedule
	// gave it, so a later one on the same member waits for it.
	memberRestart sync.Map
}

var replicaNames = []string{"cm-a", "cm-b"}

func startChaosFleet(t *testing.T) *chaosFleet {
	t.Helper()
	// Kept when the test fails: the controller managers' logs are there.
	dir, err := os.MkdirTemp("", "shepherd-chaos-logs-")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("chaos: the controller managers log to %s\n", dir)
	t.Cleanup(func() {
		if !t.Failed() {
			os.RemoveAll(dir)
		}
	})
	cf := &chaosFleet{members: map[string]*fleetenv.Proxy{}, replicas: map[string]*exec.Cmd{}, agentsStopped: map[string]bool{}, restarts: map[string]int{}, logDir: dir}
	cf.binary = filepath.Join(dir, "shepherd")
	if out, err := exec.Command("go", "build", "-o", cf.binary, "../../cmd/shepherd").CombinedOutput(); err != nil {
		t.Fatalf("building shepherd: %v\n%s", err, out)
	}
	spec := simmember.FleetSpec{}
	for _, n := range append(append([]string{}, pushMembers...), pullMembers...) {
		m := simmember.DefaultMemberSpec(n)
		// Room for the whole workload on any two members: after a
		// failover the other two hold what the third ran.
		m.Nodes = 4
		m.Pull = contains(pullMembers, n)
		spec.Members = append(spec.Members, m)
	}
	env, err := fleetenv.StartFleet("chaos", localfleet.Options{Fleet: spec, NoControllers: true, Agent: agentOpts, HubEtcdVia: cf.routeEtcd})
	if err != nil {
		t.Fatal(err)
	}
	cf.env = env
	t.Cleanup(cf.stop)
	ctx := context.Background()

	// Every Push member is reached through a proxy, set before any
	// controller runs so that none ever dials the member directly.
	for _, name := range pushMembers {
		p, err := fleetenv.RouteThroughProxy(ctx, env.Hub, name)
		if err != nil {
			t.Fatal(err)
		}
		cf.members[name] = p
	}
	u, err := url.Parse(env.Fleet.Hub.URL())
	if err != nil {
		t.Fatal(err)
	}
	if cf.hubProxy, err = fleetenv.StartProxy(u.Host); err != nil {
		t.Fatal(err)
	}
	kc, err := clientcmd.LoadFromFile(env.Fleet.Hub.KubeconfigPath())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range kc.Clusters {
		c.Server = "https://" + cf.hubProxy.Addr()
	}
	cf.kubeconfig = filepath.Join(dir, "hub-through-proxy.kubeconfig")
	if err := clientcmd.WriteToFile(*kc, cf.kubeconfig); err != nil {
		t.Fatal(err)
	}
	for _, r := range replicaNames {
		cf.startReplica(t, r)
	}
	return cf
}

// routeEtcd puts a proxy between the hub's API server and etcd, a new one
// on every start of the hub (etcd's port changes).
func (cf *chaosFleet) routeEtcd(addr string) (string, error) {
	p, err := fleetenv.StartProxy(addr)
	if err != nil {
		return "", err
	}
	cf.mu.Lock()
	old := cf.etcdProxy
	cf.etcdProxy = p
	cf.mu.Unlock()
	if old != nil {
		old.Close()
	}
	return p.Addr(), nil
}

// hubEtcd is the proxy in front of the hub's etcd now.
func (cf *chaosFleet) hubEtcd() *fleetenv.Proxy {
	cf.mu.Lock()
	defer cf.mu.Unlock()
	return cf.etcdProxy
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// startReplica starts controller-manager replica name (a no-op when it
// runs), appending to its log. Like a kubelet, the fleet starts a replica
// again a second after it exits on its own (a replica that loses its
// lease exits, as every controller-runtime manager does), until
// killReplica stops it.
func (cf *chaosFleet) startReplica(t testing.TB, name string) {
	cf.mu.Lock()
	defer cf.mu.Unlock()
	cf.startLocked(t, name)
}

func (cf *chaosFleet) startLocked(t testing.TB, name string) {
	if cf.replicas[name] != nil || cf.stopped {
		return
	}
	f, err := os.OpenFile(filepath.Join(cf.logDir, name+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Errorf("replica %s: %v", name, err)
		return
	}
	cmd := exec.Command(cf.binary, "controller-manager", "--hub-kubeconfig", cf.kubeconfig,
		"--leader-elect", "--leader-elect-identity", name, "--namespace", controllermanager.DefaultNamespace,
		"--leader-elect-lease-duration", leaseDuration.String(), "--leader-elect-renew-deadline", renewDeadline.String(), "--leader-elect-retry-period", "1s",
		"--metrics-bind-address", "0", "--health-probe-bind-address", "0",
		"--cluster-probe-interval", "1s", "--cluster-taint-grace-period", noScheduleGrace.String(),
		"--cluster-no-execute-grace-period", noExecuteGrace.String(), "--unschedulable-threshold", "30s",
		"--orphan-sweep-period", orphanSweepPeriod.String())
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		t.Errorf("starting replica %s: %v", name, err)
		return
	}
	cf.replicas[name] = cmd
	go func() {
		_ = cmd.Wait()
		f.Close()
		cf.mu.Lock()
		defer cf.mu.Unlock()
		if cf.replicas[name] != cmd {
			return // killed: killReplica decides when it comes back
		}
		delete(cf.replicas, name)
		cf.restarts[name]++
		time.AfterFunc(time.Second, func() {
			cf.mu.Lock()
			defer cf.mu.Unlock()
			cf.startLocked(t, name)
		})
	}()
}

// killReplica SIGKILLs replica name: no cleanup, its lease left to expire.
func (cf *chaosFleet) killReplica(name string) {
	cf.mu.Lock()
	defer cf.mu.Unlock()
	if cmd := cf.replicas[name]; cmd != nil {
		delete(cf.replicas, name)
		_ = cmd.Process.Signal(syscall.SIGKILL)
	}
}

// signalReplica sends sig to replica name when it runs: SIGSTOP freezes
// it, SIGCONT lets it run again.
func (cf *chaosFleet) signalReplica(name string, sig syscall.Signal) {
	cf.mu.Lock()
	defer cf.mu.Unlock()
	if cmd := cf.replicas[name]; cmd != nil {
		_ = cmd.Process.Signal(sig)
	}
}

// leader is the replica holding the controller manager's lease ("" when
// none does).
func (cf *chaosFleet) leader(ctx context.Context) string {
	l := &coordinationv1.Lease{}
	if err := cf.env.Hub.Get(ctx, client.ObjectKey{Namespace: controllermanager.DefaultNamespace, Name: controllermanager.DefaultLeaderElectionID}, l); err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

func (cf *chaosFleet) stop() {
	cf.mu.Lock()
	cf.stopped = true
	cf.mu.Unlock()
	for _, r := range replicaNames {
		cf.killReplica(r)
	}
	for _, p := range cf.members {
		p.Close()
	}
	if cf.hubProxy != nil {
		cf.hubProxy.Close()
	}
	cf.env.Stop()
}

// heal undoes every fault: all links up, every replica and agent running.
func (cf *chaosFleet) heal(t testing.TB) {
	for _, p := range cf.members {
		p.Set(fleetenv.LinkUp)
	}
	cf.hubProxy.Set(fleetenv.LinkUp)
	for _, r := range replicaNames {
		cf.signalReplica(r, syscall.SIGCONT)
		cf.startReplica(t, r)
	}
	for _, a := range pullMembers {
		cf.startAgent(t, a)
	}
}

// stopAgent stops Pull member name's agent; startAgent starts it again
// (a no-op when it runs).
func (cf *chaosFleet) stopAgent(t testing.TB, name string) {
	cf.agentsMu.Lock()
	defer cf.agentsMu.Unlock()
	if cf.agentsStopped[name] {
		return
	}
	if err := cf.env.Fleet.StopAgent(name); err != nil {
		t.Errorf("stopping the agent of %s: %v", name, err)
		return
	}
	cf.agentsStopped[name] = true
}

func (cf *chaosFleet) startAgent(t testing.TB, name string) {
	cf.agentsMu.Lock()
	defer cf.agentsMu.Unlock()
	if !cf.agentsStopped[name] {
		return
	}
	if err := cf.env.Fleet.StartAgent(name, agentOpts); err != nil {
		t.Errorf("starting the agent of %s: %v", name, err)
		return
	}
	delete(cf.agentsStopped, name)
}
