// Package capacity runs `shepherd up`'s fleet from a fleet file with finite
// room (testdata/fleet.yaml) and checks that what the hub says Scheduled
// runs in the members: a burst of workloads fills the members and no more,
// nothing sits Pending, a controller manager killed in the middle of a
// burst does not overcommit once restarted, a member whose summed room
// would hold more than its nodes do gets only what fits, and a RayCluster
// (a gang of several pod templates) runs whole where its nodes hold it:
// the members run a simulated Ray operator that makes its pods.
//
// The controller manager runs as its own process (`shepherd
// controller-manager`), so a test can kill it with SIGKILL.
package capacity

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/internal/dev/localfleet"
	"github.com/shepherd-io/shepherd/internal/dev/simmember"
	"github.com/shepherd-io/shepherd/pkg/names"
	"github.com/shepherd-io/shepherd/test/fleetenv"
)

var (
	hub      client.Client
	memberCl map[string]client.Client
	// kubeconfig is the hub's admin kubeconfig; binary the shepherd
	// binary the controller manager runs from; controllers the running one.
	kubeconfig, binary string
	controllers        *exec.Cmd
)

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if testing.Short() {
		fmt.Println("skipping the capacity suite in -short mode")
		return 0
	}
	spec, err := simmember.LoadFleet("testdata/fleet.yaml")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dir, err := os.MkdirTemp("", "shepherd-capacity-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "shepherd")
	if out, err := exec.Command("go", "build", "-o", binary, "../../cmd/shepherd").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building shepherd: %v\n%s", err, out)
		return 1
	}
	env, err := fleetenv.StartFleet("capacity", localfleet.Options{Fleet: spec, NoControllers: true, RayOperator: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer env.Stop()
	hub, memberCl, kubeconfig = env.Hub, env.Members, env.Fleet.Hub.KubeconfigPath()
	first := filepath.Join(dir, "controllers-1.log")
	if err := startControllers(first); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer killControllers()
	if err := awaitSchedulableNodes(spec); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	if code != 0 {
		printDecisions(first)
	}
	return code
}

// awaitSchedulableNodes waits until every member runs the nodes its fleet
// file gives it, each Ready, schedulable and untainted, and the hub's
// Cluster counts them all Ready: the tests count on every node's room,
// and a node just registered is tainted not-ready by the member's node
// lifecycle controller for a while after it reports Ready. A burst placed
// then would find the member's scheduler refusing that node.
func awaitSchedulableNodes(spec simmember.FleetSpec) error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, m := range spec.Members {
		for {
			err := schedulableNodes(ctx, m.Name, m.Nodes)
			if err == nil {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("waiting for the members' nodes: %w", err)
			case <-time.After(500 * time.Millisecond):
			}
		}
	}
	return nil
}

func schedulableNodes(ctx context.Context, member string, want int) error {
	var nodes corev1.NodeList
	if err := memberCl[member].List(ctx, &nodes); err != nil {
		return err
	}
	ready := 0
	for _, n := range nodes.Items {
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue && len(n.Spec.Taints) == 0 && !n.Spec.Unschedulable {
				ready++
			}
		}
	}
	if ready != want {
		return fmt.Errorf("%s: %d of %d nodes Ready, schedulable and untainted", member, ready, want)
	}
	var c clusterv1alpha1.Cluster
	if err := hub.Get(ctx, client.ObjectKey{Name: member}, &c); err != nil {
		return err
	}
	if ns := c.Status.NodeSummary; ns == nil || int(ns.ReadyNum) != want {
		return fmt.Errorf("%s: the hub does not count its %d nodes Ready yet", member, want)
	}
	return nil
}

// printDecisions prints the scheduler's decisions from a controller
// manager's log, for a failed run: where each workload went, and why the
// others went nowhere.
func printDecisions(logPath string) {
	data, err := os.ReadFile(logPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	fmt.Println("the scheduler's decisions (" + filepath.Base(logPath) + "):")
	for _, line := range strings.Split(string(data), "\n") {
		if strings.Contains(line, `"binding scheduled"`) || strings.Contains(line, `"binding is unschedulable"`) ||
			strings.Contains(line, "descheduler") || strings.Contains(line, "failover") {
			fmt.Println(line)
		}
	}
}

// startControllers runs `shepherd controller-manager` against the hub,
// with the probe intervals of the end-to-end suites, logging to logPath.
func startControllers(logPath string) error {
	f, err := os.Create(logPath)
	if err != nil {
		return err
	}
	cmd := exec.Command(binary, "controller-manager", "--hub-kubeconfig", kubeconfig,
		"--leader-elect=false", "--metrics-bind-address", "0", "--health-probe-bind-address", "0",
		"--cluster-probe-interval", "1s", "--cluster-taint-grace-period", "10s")
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("starting the controller manager: %w", err)
	}
	controllers = cmd
	go func() { _ = cmd.Wait(); f.Close() }()
	return nil
}

// killControllers kills the controller manager with SIGKILL: no cleanup,
// no lease released, whatever it held in memory lost.
func killControllers() {
	if controllers != nil {
		_ = controllers.Process.Kill()
		controllers = nil
	}
}

// deployment is a Deployment of replicas pods of one CPU each.
func deployment(ns, name string, replicas int) string {
	return strings.Replace(fleetenv.DeploymentYAML(ns, name, replicas), "requests: {cpu: 100m, memory: 64Mi}", "requests: {cpu: '1', memory: 64Mi}", 1)
}

func policy(ns, name, clusters, division string) string {
	return fmt.Sprintf(`apiVersion: policy.shepherd.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement:
    clusterAffinity: {clusterNames: [%[3]s]}
    replicaScheduling:
      replicaSchedulingType: Divided
%[4]s
`, ns, name, clusters, division)
}

// scheduled counts the bindings of ns by their Scheduled condition.
func scheduled(ctx context.Context, ns string) (placed, unschedulable int, _ error) {
	list := &workv1alpha1.ResourceBindingList{}
	if err := hub.List(ctx, list, client.InNamespace(ns)); err != nil {
		return 0, 0, err
	}
	for _, b := range list.Items {
		switch c := meta.FindStatusCondition(b.Status.Conditions, workv1alpha1.ConditionScheduled); {
		case c == nil:
		case c.Status == metav1.ConditionTrue:
			placed++
		default:
			unschedulable++
		}
	}
	return placed, unschedulable, nil
}

// pods counts the pods of ns in a member: running, and Pending without a
// node (what the member's scheduler could not place).
func pods(ctx context.Context, cluster, ns string) (running, pending int, _ error) {
	var list corev1.PodList
	if err := memberCl[cluster].List(ctx, &list, client.InNamespace(ns)); err != nil {
		return 0, 0, err
	}
	for _, p := range list.Items {
		switch {
		case p.Spec.NodeName == "":
			pending++
		case p.Status.Phase == corev1.PodRunning:
			running++
		}
	}
	return running, pending, nil
}

// TestBurstFillsTheMembers: 20 Deployments of 4 one-CPU replicas, divided
// by dynamic weights over a1..a3 (48 CPUs), applied at once. 12 are placed
// and run, filling the members, none Pending; 8 are Unschedulable on the
// hub with a reason naming the clusters' room, and reach no member.
func TestBurstFillsTheMembers(t *testing.T) {
	const ns = "burst"
	ctx := context.Background()
	fleetenv.CreateNamespace(t, hub, ns)
	giveRoomBack(t, ns)
	docs := []string{policy(ns, "spread", "a1, a2, a3", "      replicaDivisionPreference: Weighted\n      weightPreference: {dynamicWeight: AvailableReplicas}")}
	for i := range 20 {
		docs = append(docs, deployment(ns, fmt.Sprintf("w%02d", i), 4))
	}
	fleetenv.ApplyYAML(t, hub, "capacity", strings.Join(docs, "---\n"))

	fleetenv.Eventually(t, "12 placed, 8 Unschedulable", func() error {
		placed, unschedulable, err := scheduled(ctx, ns)
		if err != nil {
			return err
		}
		if placed > 12 {
			t.Fatalf("%d workloads placed: the members hold 12", placed)
		}
		if placed != 12 || unschedulable != 8 {
			return fmt.Errorf("%d placed, %d unschedulable", placed, unschedulable)
		}
		return nil
	})
	fleetenv.Eventually(t, "48 pods run, none Pending", func() error {
		total := 0
		for _, c := range []string{"a1", "a2", "a3"} {
			running, pending, err := pods(ctx, c, ns)
			if err != nil {
				return err
			}
			if pending > 0 {
				return fmt.Errorf("%s: %d pods Pending", c, pending)
			}
			total += running
		}
		if total != 48 {
			return fmt.Errorf("%d of 48 pods running", total)
		}
		return nil
	})
	list := &workv1alpha1.ResourceBindingList{}
	if err := hub.List(ctx, list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, b := range list.Items {
		c := meta.FindStatusCondition(b.Status.Conditions, workv1alpha1.ConditionScheduled)
		if c.Status == metav1.ConditionTrue {
			continue
		}
		if !strings.Contains(c.Message, "room: ") {
			t.Errorf("%s: the reason does not name the clusters' room: %s", b.Name, c.Message)
		}
		works := &workv1alpha1.WorkList{}
		if err := hub.List(ctx, works, client.MatchingLabels(names.BindingLabels(names.BindingRef{Kind: workv1alpha1.KindResourceBinding, Namespace: ns, Name: b.Name}))); err != nil {
			t.Fatal(err)
		}
		if len(works.Items) != 0 {
			t.Errorf("%s is Unschedulable but has %d Works", b.Name, len(works.Items))
		}
	}
}

// TestBurstSurvivesAControllerManagerKill: the burst again, with the
// controller manager killed (SIGKILL) once the first workloads are placed
// and the rest applied while none runs. The new controller manager knows
// the replicas in flight only from the bindings and the Clusters' status:
// it must not place onto the members what the first one placed and the
// members do not report yet. 12 placed, 48 pods run, none Pending.
func TestBurstSurvivesAControllerManagerKill(t *testing.T) {
	const ns = "restart"
	ctx := context.Background()
	fleetenv.CreateNamespace(t, hub, ns)
	giveRoomBack(t, ns)
	docs := []string{policy(ns, "spread", "a1, a2, a3", "      replicaDivisionPreference: Weighted\n      weightPreference: {dynamicWeight: AvailableReplicas}")}
	for i := range 10 {
		docs = append(docs, deployment(ns, fmt.Sprintf("w%02d", i), 4))
	}
	fleetenv.ApplyYAML(t, hub, "capacity", strings.Join(docs, "---\n"))
	fleetenv.Eventually(t, "the first workloads placed", func() error {
		placed, _, err := scheduled(ctx, ns)
		if err != nil || placed < 3 {
			return fmt.Errorf("%d placed (%v)", placed, err)
		}
		return nil
	})
	killControllers()
	docs = docs[:0]
	for i := 10; i < 20; i++ {
		docs = append(docs, deployment(ns, fmt.Sprintf("w%02d", i), 4))
	}
	fleetenv.ApplyYAML(t, hub, "capacity", strings.Join(docs, "---\n"))
	second := filepath.Join(t.TempDir(), "controllers.log")
	t.Cleanup(func() {
		if t.Failed() {
			printDecisions(second)
		}
	})
	if err := startControllers(second); err != nil {
		t.Fatal(err)
	}
	fleetenv.Eventually(t, "12 placed, 8 Unschedulable", func() error {
		placed, unschedulable, err := scheduled(ctx, ns)
		if err != nil {
			return err
		}
		if placed > 12 {
			t.Fatalf("%d workloads placed: the members hold 12", placed)
		}
		if placed != 12 || unschedulable != 8 {
			return fmt.Errorf("%d placed, %d unschedulable", placed, unschedulable)
		}
		return nil
	})
	fleetenv.Eventually(t, "48 pods run, none Pending", func() error {
		total := 0
		for _, c := range []string{"a1", "a2", "a3"} {
			running, pending, err := pods(ctx, c, ns)
			if err != nil {
				return err
			}
			if pending > 0 {
				return fmt.Errorf("%s: %d pods Pending", c, pending)
			}
			total += running
		}
		if total != 48 {
			return fmt.Errorf("%d of 48 pods running", total)
		}
		return nil
	})
}

// giveRoomBack deletes the Deployments of ns on the hub when the test ends
// and waits until the members run none of its pods, so the next test finds
// the members empty.
func giveRoomBack(t *testing.T, ns string) {
	t.Cleanup(func() {
		ctx := context.Background()
		if err := hub.DeleteAllOf(ctx, &appsv1.Deployment{}, client.InNamespace(ns)); err != nil {
			t.Errorf("deleting the Deployments of %s: %v", ns, err)
			return
		}
		fleetenv.Eventually(t, "the members run nothing of "+ns, func() error {
			for name, c := range memberCl {
				var list corev1.PodList
				if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
					return err
				}
				if len(list.Items) > 0 {
					return fmt.Errorf("%s runs %d pods of %s", name, len(list.Items), ns)
				}
			}
			return nil
		})
	})
}

// TestFragmentedMemberGetsWhatFits: frag's six 1.5-CPU nodes sum to 9
// CPUs but hold six one-CPU pods. Nine replicas are refused on the hub,
// naming the room on any one node; six are placed and all run.
func TestFragmentedMemberGetsWhatFits(t *testing.T) {
	const ns = "frag"
	ctx := context.Background()
	fleetenv.CreateNamespace(t, hub, ns)
	giveRoomBack(t, ns)
	agg := "      replicaDivisionPreference: Aggregated"
	fleetenv.ApplyYAML(t, hub, "capacity", policy(ns, "frag", "frag", agg)+"---\n"+deployment(ns, "nine", 9))
	fleetenv.Eventually(t, "nine: Unschedulable for room on any one node", func() error {
		_, unschedulable, err := scheduled(ctx, ns)
		if err != nil || unschedulable != 1 {
			return fmt.Errorf("%d unschedulable (%v)", unschedulable, err)
		}
		b := &workv1alpha1.ResourceBinding{}
		if err := hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.BindingName("Deployment", "nine")}, b); err != nil {
			return err
		}
		c := meta.FindStatusCondition(b.Status.Conditions, workv1alpha1.ConditionScheduled)
		if !strings.Contains(c.Message, "feasible clusters fit 6; room: frag fits 6 (room on any one node: 6 × 1500m CPU") {
			return fmt.Errorf("reason: %s", c.Message)
		}
		return nil
	})
	fleetenv.ApplyYAML(t, hub, "capacity", deployment(ns, "six", 6))
	fleetenv.Eventually(t, "six: placed, six pods run, none Pending", func() error {
		running, pending, err := pods(ctx, "frag", ns)
		if err != nil {
			return err
		}
		if pending > 0 || running != 6 {
			return fmt.Errorf("%d running, %d Pending", running, pending)
		}
		return nil
	})
}
