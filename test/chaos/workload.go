package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shepherd-io/shepherd/test/testenv"
)

// The workload's labels and annotations.
const (
	labelStrategy = "chaos.shepherd.io/strategy"
	// labelOverridden is added by the namespace's OverridePolicy to every
	// copy; annotationCluster by its per-cluster rules.
	labelOverridden   = "chaos.shepherd.io/overridden"
	annotationCluster = "chaos.shepherd.io/cluster"
	// annotationEdit on a Deployment's pod template counts its edits.
	annotationEdit = "chaos.shepherd.io/edit"
	// collidingName is a ConfigMap template whose name a member object
	// Shepherd does not own already has, in every member.
	collidingName = "cm-collide"
)

// A strategy is how a policy of the workload places its templates.
type strategy struct {
	name, kind string
	placement  string
}

// strategies cover every way Shepherd places: Duplicated everywhere,
// Duplicated on a spread-limited subset, Divided by static and by dynamic
// weights, and Aggregated.
var strategies = []strategy{
	{"dup", "ConfigMap", "replicaScheduling: {replicaSchedulingType: Duplicated}"},
	{"pick2", "ConfigMap", "spreadConstraints: [{spreadByField: cluster, minGroups: 1, maxGroups: 2}]\n    replicaScheduling: {replicaSchedulingType: Duplicated}"},
	{"static", "Deployment", "replicaScheduling:\n      replicaSchedulingType: Divided\n      replicaDivisionPreference: Weighted\n      weightPreference:\n        staticWeightList:\n        - {targetCluster: {clusterNames: [member1]}, weight: 2}\n        - {targetCluster: {clusterNames: [member2, pull1]}, weight: 1}"},
	{"dynamic", "Deployment", "replicaScheduling:\n      replicaSchedulingType: Divided\n      replicaDivisionPreference: Weighted\n      weightPreference: {dynamicWeight: AvailableReplicas}"},
	{"agg", "Deployment", "replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Aggregated}"},
	{"custom", "Widget", "replicaScheduling: {replicaSchedulingType: Duplicated}"},
}

// The workload's custom kind, Widget (in a group of its own: Shepherd never
// propagates its own *.shepherd.io kinds): its CRD is a template of the hub too,
// propagated to every member by a ClusterPropagationPolicy, so the
// remove-crd fault takes from a member a CRD Shepherd applied, and every
// Widget with it.
const (
	widgetGroup   = "chaos.example.com"
	widgetCRDName = "widgets." + widgetGroup
	widgetCRDYAML = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: ` + widgetCRDName + `}
spec:
  group: ` + widgetGroup + `
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              edit: {type: string}
---
apiVersion: policy.shepherd.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: chaos-widget-crd}
spec:
  resourceSelectors:
  - {apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, name: ` + widgetCRDName + `}
  placement:
    replicaScheduling: {replicaSchedulingType: Duplicated}
  # As for the namespaces' policies (see policiesYAML): a member out long
  # enough evicts the CRD too, and it comes back 30 s later, not 600.
  failover:
    application:
      decisionConditions: {tolerationSeconds: 3600}
      blockPredecessorSeconds: 30
`
)

var namespaces = []string{"chaos-a", "chaos-b"}

// policiesYAML are each namespace's policies (one per strategy) and its
// OverridePolicy.
func policiesYAML(ns string, clusters []string, strats []strategy) string {
	var b strings.Builder
	for _, s := range strats {
		fmt.Fprintf(&b, `apiVersion: policy.shepherd.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  resourceSelectors:
  - apiVersion: %[3]s
    kind: %[4]s
    labelSelector: {matchLabels: {%[5]s: %[2]s}}
  placement:
    %[6]s
  # The fleet's grace periods are seconds, not minutes; the block on a
  # cluster a workload was evicted from is cut down likewise (30 s, not
  # 600). Two members out together evict a workload from every cluster,
  # and it waits out the block before it runs anywhere again. The long
  # toleration keeps application failover itself out of the run.
  failover:
    application:
      decisionConditions: {tolerationSeconds: 3600}
      blockPredecessorSeconds: 30
---
`, ns, s.name, apiVersions[s.kind], s.kind, labelStrategy, s.placement)
	}
	fmt.Fprintf(&b, `apiVersion: policy.shepherd.io/v1alpha1
kind: OverridePolicy
metadata: {name: chaos, namespace: %s}
spec:
  overrideRules:
  - overriders:
      labelsOverrider: [{operator: add, value: {%s: "true"}}]
`, ns, labelOverridden)
	for _, c := range clusters {
		fmt.Fprintf(&b, `  - targetCluster: {clusterNames: [%s]}
    overriders:
      annotationsOverrider: [{operator: add, value: {%s: %s}}]
`, c, annotationCluster, c)
	}
	return b.String()
}

// template is one resource template of the workload, as the driver last
// wrote it.
type template struct {
	ns, name string
	strategy strategy
	replicas int
	edits    int
	// busy: a step is changing it.
	busy bool
}

func (t *template) yaml() string {
	if t.strategy.kind == "Widget" {
		return fmt.Sprintf(`apiVersion: %s/v1
kind: Widget
metadata: {name: %s, namespace: %s, labels: {%s: %s}}
spec: {edit: "%d"}
`, widgetGroup, t.name, t.ns, labelStrategy, t.strategy.name, t.edits)
	}
	if t.strategy.kind == "ConfigMap" {
		return fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: %s, namespace: %s, labels: {%s: %s}}
data: {edit: "%d"}
`, t.name, t.ns, labelStrategy, t.strategy.name, t.edits)
	}
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s, namespace: %[2]s, labels: {%[3]s: %[4]s}}
spec:
  replicas: %[5]d
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata:
      labels: {app: %[1]s}
      annotations: {%[6]s: "%[7]d"}
    spec:
      containers:
      - name: app
        image: nginx:1.27
        resources: {requests: {cpu: 10m, memory: 16Mi}}
`, t.name, t.ns, labelStrategy, t.strategy.name, t.replicas, annotationEdit, t.edits)
}

// driver changes the workload on the hub, drawing every choice from its
// seeded source: create up to max templates, then scale, edit, delete,
// create again and ask for reschedules.
type driver struct {
	hub        client.Client
	r          *rand.Rand
	max        int
	strategies []strategy

	mu      sync.Mutex
	live    []*template
	next    int
	ops     map[string]int
	tasks   int
	lastErr error
}

func newDriver(hub client.Client, seed uint64, max int, strats []strategy) *driver {
	return &driver{hub: hub, r: rand.New(rand.NewPCG(seed, seed^0xd1e)), max: max, strategies: strats, ops: map[string]int{}}
}

// step makes one change. Several steps run at once, never two on one
// template. Errors are kept (the hub stays up for the driver: only the
// controllers' path to it is cut) and reported.
func (d *driver) step(ctx context.Context) {
	op, t, task := d.choose()
	if op == "" {
		return
	}
	var err error
	switch op {
	case "create", "scale", "edit":
		err = d.apply(ctx, t)
	case "delete":
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(apiVersions[t.strategy.kind])
		u.SetKind(t.strategy.kind)
		u.SetNamespace(t.ns)
		u.SetName(t.name)
		err = client.IgnoreNotFound(d.hub.Delete(ctx, u))
	case "reschedule":
		err = applyYAML(ctx, d.hub, fmt.Sprintf(`apiVersion: task.shepherd.io/v1alpha1
kind: RescheduleTask
metadata: {name: chaos-%03d}
spec:
  targetRefResource:
  - {apiVersion: %s, kind: %s, namespace: %s, name: %s}
`, task, apiVersions[t.strategy.kind], t.strategy.kind, t.ns, t.name))
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	t.busy = false
	d.ops[op]++
	switch {
	case err != nil && ctx.Err() == nil:
		d.lastErr = fmt.Errorf("%s %s/%s: %w", op, t.ns, t.name, err)
	case err == nil && op == "create":
		d.live = append(d.live, t)
	case err == nil && op == "delete":
		d.live = slices.DeleteFunc(d.live, func(x *template) bool { return x == t })
	}
}

// choose draws the next change and marks its template busy ("" when the
// drawn template is busy: the step is skipped).
func (d *driver) choose() (op string, t *template, task int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	op = "create"
	if len(d.live) > 0 && (d.next >= d.max || d.r.IntN(3) == 0) {
		op = []string{"scale", "scale", "edit", "edit", "edit", "delete", "reschedule"}[d.r.IntN(7)]
	}
	if op == "create" {
		s := d.strategies[d.r.IntN(len(d.strategies))]
		t = &template{ns: namespaces[d.r.IntN(len(namespaces))], strategy: s, replicas: 1 + d.r.IntN(4)}
		t.name = fmt.Sprintf("%s-%03d", strings.ToLower(s.kind[:3]), d.next)
		d.next++
	} else {
		t = d.live[d.r.IntN(len(d.live))]
		if t.busy {
			return "", nil, 0
		}
		switch {
		case op == "scale" && t.strategy.kind == "Deployment":
			t.replicas = 1 + d.r.IntN(5)
		case op == "scale" || op == "edit":
			t.edits++
		case op == "reschedule":
			d.tasks++
			task = d.tasks
		}
	}
	t.busy = true
	return op, t, task
}

var apiVersions = map[string]string{"ConfigMap": "v1", "Deployment": "apps/v1", "Widget": widgetGroup + "/v1"}

func (d *driver) apply(ctx context.Context, t *template) error {
	return applyYAML(ctx, d.hub, t.yaml())
}

func (d *driver) summary() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return fmt.Sprintf("%d templates live, ops %v, reschedule tasks %d", len(d.live), d.ops, d.tasks)
}

// applyYAML server-side applies a YAML stream as the workload's owner.
func applyYAML(ctx context.Context, c client.Client, yaml string) error {
	objs, err := testenv.DecodeYAML([]byte(yaml))
	if err != nil {
		return err
	}
	for _, obj := range objs {
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner("chaos-workload"), client.ForceOwnership); err != nil {
			return fmt.Errorf("applying %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	return nil
}
