package scenario

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/shepherd-io/shepherd/api/config/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
)

// poolFleet is examples/plan/divided-components.yaml's fleet: member-a
// of two 4-core nodes, member-b of one 8-core node, member-c of three
// 4-core nodes, all serving WorkerPools.
func poolFleet(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", "plan", "divided-components.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var clusters []string
	for _, doc := range strings.Split(string(data), "\n---\n") {
		if strings.Contains(doc, "kind: Cluster\n") {
			clusters = append(clusters, doc)
		}
	}
	return strings.Join(clusters, "\n---\n")
}

// workerPoolTemplate is a WorkerPool of a 2-core coordinator and workers
// 2-core workers, with the policy that divides it.
func workerPoolTemplate(name string, workers int) string {
	return strings.NewReplacer("NAME", name, "WORKERS", strconv.Itoa(workers)).Replace(`
apiVersion: policy.shepherd.io/v1alpha1
kind: PropagationPolicy
metadata: {name: NAME, namespace: pools}
spec:
  resourceSelectors: [{apiVersion: pools.example.com/v1, kind: WorkerPool, name: NAME}]
  placement:
    components: {division: DivideIndependent}
---
apiVersion: pools.example.com/v1
kind: WorkerPool
metadata: {name: NAME, namespace: pools}
spec:
  coordinator:
    replicas: 1
    template: {spec: {containers: [{name: c, resources: {requests: {cpu: "2", memory: 2Gi}}}]}}
  workerGroups:
  - name: render
    replicas: WORKERS
    template: {spec: {containers: [{name: w, resources: {requests: {cpu: "2", memory: 4Gi}}}]}}
`)
}

// A plan divides a workload's components as the scheduler does: read from
// its binding as stored, or from its template by what the interpreter
// knows of the kind (a hub's customizations, for the dashboard's
// what-if); placed in order, the second workload sees the room the
// first's head and shares took.
func TestPlanDividesComponents(t *testing.T) {
	// The bindings of the example, each as the hub would store it.
	s := parse(t, string(mustRead(t, filepath.Join("..", "..", "examples", "plan", "divided-components.yaml"))))
	got, _ := scheduleAll(t, s, false)
	on := func(cluster string, cs ...workv1alpha1.TargetComponent) workv1alpha1.TargetCluster {
		return workv1alpha1.TargetCluster{Name: cluster, Components: cs}
	}
	tc := func(name string, n int32) workv1alpha1.TargetComponent {
		return workv1alpha1.TargetComponent{Name: name, Replicas: n}
	}
	whole := []workv1alpha1.TargetComponent{tc("coordinator", 1), tc("workers", 3)}
	want := [][]workv1alpha1.TargetCluster{
		{on("member-a", tc("coordinator", 1)), on("member-b", tc("workers", 4)), on("member-c", tc("workers", 6))},
		{on("member-a", whole...), on("member-b", whole...), on("member-c", whole...)},
		nil,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("targets\n %+v\nwant\n %+v", got, want)
	}
	if !s.Workloads[0].DivideComponents || s.Workloads[1].DivideComponents || !strings.Contains(s.Workloads[1].NotDivided, `component "coordinator" has no replicasPath`) {
		t.Errorf("division read from the bindings: %v, %v %q", s.Workloads[0].DivideComponents, s.Workloads[1].DivideComponents, s.Workloads[1].NotDivided)
	}

	// Templates, read by an interpreter taught the WorkerPool: the first
	// pool as above; placed in order, the second finds member-a's room
	// beside the first head and member-b's and member-c's taken, so its
	// head goes to member-a too and its two workers beside.
	ric := &configv1alpha1.ResourceInterpreterCustomization{}
	if err := yaml.UnmarshalStrict(mustRead(t, filepath.Join("..", "..", "examples", "interpreter", "workerpool-customization.yaml")), ric); err != nil {
		t.Fatal(err)
	}
	c, errs := interpreter.CompileCustomization(ric)
	if len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
	in := interpreter.New()
	in.SetCustom(c.GVK, c.Custom)
	doc := poolFleet(t) + "\n---\n" + workerPoolTemplate("first", 10) + "\n---\n" + workerPoolTemplate("second", 1)
	s, err := Parse(strings.NewReader(doc), now, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Workloads) != 2 || !s.Workloads[0].DivideComponents {
		t.Fatalf("workloads %+v: the templates' components do not divide", s.Workloads)
	}
	for _, tt := range []struct {
		inOrder bool
		second  []workv1alpha1.TargetCluster
	}{
		{false, []workv1alpha1.TargetCluster{on("member-a", tc("coordinator", 1)), on("member-c", tc("render", 1))}},
		{true, []workv1alpha1.TargetCluster{on("member-a", tc("coordinator", 1), tc("render", 1))}},
	} {
		got, _ := scheduleAll(t, s, tt.inOrder)
		first := []workv1alpha1.TargetCluster{on("member-a", tc("coordinator", 1)), on("member-b", tc("render", 4)), on("member-c", tc("render", 6))}
		if !reflect.DeepEqual(got, [][]workv1alpha1.TargetCluster{first, tt.second}) {
			t.Errorf("in order %v:\n %+v\nwant\n %+v", tt.inOrder, got, [][]workv1alpha1.TargetCluster{first, tt.second})
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
