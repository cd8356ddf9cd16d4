// Package chaos runs a local fleet (Push members behind TCP proxies, a
// Pull member with its agent, two leader-elected controller-manager
// processes reaching the hub through a proxy) under a seeded schedule of
// overlapping faults while a workload changes on the hub, then heals the
// fleet and checks that nothing was lost: every template is in exactly the
// clusters its binding names, with the content it should have (overrides
// included), nothing is left behind, nothing Shepherd does not own
// changed, and every RescheduleTask finished.
//
// SHEPHERD_CHAOS_SEED replays a run (the seed is printed at the start and
// on failure); SHEPHERD_CHAOS_DURATION (default 90s) and
// SHEPHERD_CHAOS_TEMPLATES (default 300) size it.
package chaos

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/shepherd-io/shepherd/test/fleetenv"
	"github.com/shepherd-io/shepherd/test/testenv"
)

// convergeBound is how long a healed fleet may take to be right again.
const convergeBound = 5 * time.Minute

func envOr[T any](name string, def T, parse func(string) (T, error)) (T, error) {
	v := os.Getenv(name)
	if v == "" {
		return def, nil
	}
	x, err := parse(v)
	if err != nil {
		return def, fmt.Errorf("%s=%q: %w", name, v, err)
	}
	return x, nil
}

func TestChaos(t *testing.T) {
	testenv.Heavy(t)
	seed, err := envOr("SHEPHERD_CHAOS_SEED", uint64(time.Now().UnixNano()), func(s string) (uint64, error) { return strconv.ParseUint(s, 10, 64) })
	if err != nil {
		t.Fatal(err)
	}
	duration, err := envOr("SHEPHERD_CHAOS_DURATION", 90*time.Second, time.ParseDuration)
	if err != nil {
		t.Fatal(err)
	}
	max, err := envOr("SHEPHERD_CHAOS_TEMPLATES", 300, strconv.Atoi)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("chaos: SHEPHERD_CHAOS_SEED=%d, %s of faults, up to %d templates\n", seed, duration, max)
	faults := schedule(seed, duration, targets{Push: pushMembers, Pull: pullMembers, NoScheduleGrace: noScheduleGrace, NoExecuteGrace: noExecuteGrace, LeaseDuration: leaseDuration,
		AgentProbeInterval: agentOpts.ClusterStatus.ProbeInterval, AgentLeaseDuration: agentOpts.LeaseDuration})

	cf := startChaosFleet(t)
	ctx := context.Background()
	clusters := append(append([]string{}, pushMembers...), pullMembers...)
	bystanders := setUp(t, cf, clusters, strategies)

	// The run: the workload changes while the faults come and go.
	h := &history{start: time.Now()}
	d := newDriver(cf.env.Hub, seed, max, strategies)
	runCtx, stopDriver := context.WithCancel(ctx)
	var wg sync.WaitGroup
	// Four writers, each about two changes a second: the templates are all
	// created in the first half of a default run.
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(500 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-runCtx.Done():
					return
				case <-tick.C:
					d.step(runCtx)
				}
			}
		}()
	}
	for _, f := range faults {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Until(h.start.Add(f.At)))
			cf.inject(t, f, h)
		}()
	}
	time.Sleep(time.Until(h.start.Add(duration)))
	stopDriver()
	wg.Wait()
	cf.heal(t)
	h.log("healed; %s", d.summary())
	if d.lastErr != nil {
		h.log("last workload error (the driver goes on after one): %v", d.lastErr)
	}

	// Converged: every invariant holds at once.
	healed, lastReport := time.Now(), time.Now()
	var last []string
	for {
		s, err := cf.read(ctx)
		if err == nil {
			if last = s.violations(clusters, bystanders); len(last) == 0 {
				break
			}
		} else {
			last = []string{err.Error()}
		}
		if len(last) > 0 && time.Since(lastReport) > 15*time.Second {
			lastReport = time.Now()
			h.log("converging: %d violations, first: %s", len(last), last[0])
		}
		if time.Since(healed) > convergeBound {
			cf.logRestarts(h)
			// A replica that leads but does nothing (a controller that
			// never started, a worker stuck) shows in its goroutines:
			// SIGQUIT makes the Go runtime write them to its log.
			for _, r := range replicaNames {
				cf.signalReplica(r, syscall.SIGQUIT)
			}
			time.Sleep(time.Second) // the dumps written before the cleanup kills them
			if len(last) > 30 {
				last = append(last[:30], fmt.Sprintf("... and %d more", len(last)-30))
			}
			t.Fatalf("SHEPHERD_CHAOS_SEED=%d: not converged %s after the faults stopped:\n  %s\nfaults:\n%s\nthe controller managers' logs (their goroutines at the end): %s",
				seed, convergeBound, strings.Join(last, "\n  "), h, cf.logDir)
		}
		time.Sleep(2 * time.Second)
	}
	cf.logRestarts(h)
	fmt.Printf("chaos: SHEPHERD_CHAOS_SEED=%d converged %s after the faults stopped (%d faults; %s)\n",
		seed, time.Since(healed).Round(time.Second), len(faults), d.summary())
	t.Logf("faults:\n%s", h)
}

// setUp creates the workload's namespaces and policies, and in every
// member a ConfigMap Shepherd has nothing to do with and one named as a
// template the hub will have: both bystanders.
func setUp(t *testing.T, cf *chaosFleet, clusters []string, strats []strategy) []bystander {
	ctx := context.Background()
	var out []bystander
	if err := applyYAML(ctx, cf.env.Hub, widgetCRDYAML); err != nil {
		t.Fatal(err)
	}
	fleetenv.Eventually(t, "the Widget CRD served by the hub", func() error {
		return cf.env.Hub.List(ctx, &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": apiVersions["Widget"], "kind": "WidgetList"}})
	})
	for _, ns := range namespaces {
		fleetenv.CreateNamespace(t, cf.env.Hub, ns)
		for _, c := range clusters {
			m := cf.env.Members[c]
			fleetenv.CreateNamespace(t, m, ns)
			for _, name := range []string{"bystander", collidingName} {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string]string{"owner": "someone else"}}
				if err := m.Create(ctx, cm); err != nil && !apierrors.IsAlreadyExists(err) {
					t.Fatal(err)
				}
				out = append(out, bystander{cluster: c, ns: ns, name: name, resourceVersion: cm.ResourceVersion})
			}
		}
		if err := applyYAML(ctx, cf.env.Hub, policiesYAML(ns, clusters, strats)); err != nil {
			t.Fatal(err)
		}
		collide := &template{ns: ns, name: collidingName, strategy: strategies[0]}
		if err := applyYAML(ctx, cf.env.Hub, collide.yaml()); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// history is the faults as they happened, for a failure report.
type history struct {
	start time.Time
	mu    sync.Mutex
	lines []string
}

func (h *history) log(format string, args ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lines = append(h.lines, fmt.Sprintf("%7.1fs ", time.Since(h.start).Seconds())+fmt.Sprintf(format, args...))
}

func (h *history) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return "  " + strings.Join(h.lines, "\n  ")
}

// inject applies fault f, waits its duration and undoes it.
func (cf *chaosFleet) inject(t *testing.T, f fault, h *history) {
	ctx := context.Background()
	undo := func() {}
	switch f.Kind {
	case killLeader:
		l := cf.leader(ctx)
		if l == "" {
			h.log("%s: no leader to kill", f.Kind)
			return
		}
		cf.killReplica(l)
		undo = func() {
			if now := cf.leader(ctx); now == l {
				h.log("%s: the lease is still held by %s: the other replica did not take over", f.Kind, l)
			} else {
				h.log("%s: %s took over", f.Kind, now)
			}
			cf.startReplica(t, l)
		}
		h.log("%s: killed %s", f.Kind, l)
	case freezeLeader:
		l := cf.leader(ctx)
		if l == "" {
			h.log("%s: no leader to freeze", f.Kind)
			return
		}
		cf.signalReplica(l, syscall.SIGSTOP)
		undo = func() {
			if now := cf.leader(ctx); now == l {
				h.log("%s: the lease is still held by %s: the other replica did not take over", f.Kind, l)
			} else {
				h.log("%s: %s took over", f.Kind, now)
			}
			cf.signalReplica(l, syscall.SIGCONT)
		}
		h.log("%s: froze %s", f.Kind, l)
	case killAll:
		for _, r := range replicaNames {
			cf.killReplica(r)
		}
		undo = func() {
			for _, r := range replicaNames {
				cf.startReplica(t, r)
			}
		}
		h.log("%s", f.Kind)
	case stopAgent:
		cf.stopAgent(t, f.Target)
		undo = func() { cf.startAgent(t, f.Target) }
		h.log("%s %s", f.Kind, f.Target)
	case cutMemberShort, cutMemberLong, slowMember, flakyMember:
		l := map[faultKind]fleetenv.Link{cutMemberShort: fleetenv.LinkCut, cutMemberLong: fleetenv.LinkCut, slowMember: fleetenv.LinkSlow, flakyMember: fleetenv.LinkFlaky}[f.Kind]
		p := cf.members[f.Target]
		p.Set(l)
		undo = func() { p.Set(fleetenv.LinkUp) }
		h.log("%s %s (link %s)", f.Kind, f.Target, l)
	case slowHubEtcd:
		p := cf.hubEtcd()
		p.Set(fleetenv.LinkSlow)
		undo = func() { p.Set(fleetenv.LinkUp) }
		// Real: a hub write is late while etcd is slow.
		h.log("%s: a hub write took %s with etcd slowed", f.Kind, cf.timeHubWrite(ctx))
	case restartMember:
		mu, _ := cf.memberRestart.LoadOrStore(f.Target, &sync.Mutex{})
		mu.(*sync.Mutex).Lock()
		defer mu.(*sync.Mutex).Unlock()
		h.log("%s %s: stopping its API server and etcd", f.Kind, f.Target)
		begin := time.Now()
		if err := cf.env.Fleet.Member(f.Target).RestartControlPlane(f.For); err != nil {
			t.Errorf("%s %s: %v", f.Kind, f.Target, err)
		}
		h.log("%s %s: serves again after %s (down %s)", f.Kind, f.Target, time.Since(begin).Round(100*time.Millisecond), f.For)
		return
	case restartAgent:
		cf.stopAgent(t, f.Target)
		cf.startAgent(t, f.Target)
		h.log("%s %s", f.Kind, f.Target)
	case skewAgentClock:
		// The workload's members have room for all of it on any two,
		// so a replica placed beyond a cluster's room cannot show here:
		// scheduling.TestInFlightUnderClockSkew proves the accounting
		// under skew. This proves the skew reaches the hub, within the
		// fault's time (a check that outlasted it would overlap the
		// next fault on the agent); the invariants, that the agent is
		// back on the hub's clock and the fleet converges.
		begin := time.Now()
		before, err := cf.readStamps(ctx, f.Target)
		cf.restartAgentWith(t, f.Target, withSkew(f.Skew))
		h.log("%s %s: restarted with its clock %+.3fs off%s", f.Kind, f.Target, f.Skew.Seconds(), cf.stampsOff(ctx, t, f, before, err, f.For/2))
		time.Sleep(time.Until(begin.Add(f.For)))
		cf.restartAgentWith(t, f.Target, agentOpts)
		h.log("%s %s: restarted with the right clock after %s", f.Kind, f.Target, time.Since(begin).Round(100*time.Millisecond))
		return
	case deleteWork, deleteBinding, deleteMemberObject, removeCRD:
		gone, err := cf.deleteByHand(ctx, f)
		if err != nil {
			h.log("%s %s: nothing deleted: %v", f.Kind, f.Target, err)
			return
		}
		undo = func() { h.log("%s: %s", f.Kind, cf.cameBack(ctx, f, gone)) }
		h.log("%s: deleted %s", f.Kind, gone)
		if f.Kind == removeCRD {
			// Real: the member's Widgets go with their CRD.
			h.log("%s: the member's Widgets right after: %s", f.Kind, cf.widgetsIn(ctx, f.Target))
		}
	case cutHub:
		cf.hubProxy.Set(fleetenv.LinkCut)
		undo = func() { cf.hubProxy.Set(fleetenv.LinkUp) }
		h.log("%s", f.Kind)
	case restartHub:
		cf.hubRestart.Lock()
		defer cf.hubRestart.Unlock()
		h.log("%s: stopping the hub", f.Kind)
		begin := time.Now()
		if err := cf.env.Fleet.RestartHub(f.For); err != nil {
			t.Errorf("%s: %v", f.Kind, err)
			h.log("%s: the hub did not come back: %v", f.Kind, err)
			return
		}
		h.log("%s: the hub serves again after %s (down %s)", f.Kind, time.Since(begin).Round(100*time.Millisecond), f.For)
		return
	}
	time.Sleep(f.For)
	undo()
	h.log("%s %s: undone after %s", f.Kind, f.Target, f.For)
}

// logRestarts records how often each replica exited on its own (lost its
// lease) and was started again.
func (cf *chaosFleet) logRestarts(h *history) {
	cf.mu.Lock()
	defer cf.mu.Unlock()
	h.log("controller-manager replicas that exited on their own and were started again: %v", cf.restarts)
	refused := map[string]int{}
	for _, r := range replicaNames {
		data, _ := os.ReadFile(filepath.Join(cf.logDir, r+".log"))
		refused[r] = strings.Count(string(data), "write refused")
	}
	// A fence refuses every write once its lease went unrenewed for the
	// renew deadline: a frozen leader's, and a leader's cut off the hub
	// or with the hub down, alike.
	h.log("log lines of writes each replica's fence refused (its lease unrenewed: frozen, or the hub out of reach): %v", refused)
}
