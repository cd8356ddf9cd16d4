package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/shepherd-io/shepherd/test/testenv"
)

// policy renders a PropagationPolicy whose spec is the given YAML fragment
// (indented by two spaces under spec:).
func policy(name, spec string) string {
	return fmt.Sprintf(`apiVersion: policy.shepherd.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: %s
  namespace: default
spec:
%s`, name, indent(spec, "  "))
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.Trim(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n") + "\n"
}

const selectNginx = `resourceSelectors:
- apiVersion: apps/v1
  kind: Deployment
  name: nginx
`

// TestInvalidObjectsAreRejected feeds objects that break each validation rule
// and checks the API server refuses them with a message naming the field.
func TestInvalidObjectsAreRejected(t *testing.T) {
	suite.Hub(t)
	cases := []struct {
		name string
		yaml string
		// want are substrings the error must contain: the field path and the rule.
		want []string
	}{
		{"min groups above max groups", policy("bad-minmax", selectNginx+`placement:
  spreadConstraints:
  - {spreadByField: cluster, minGroups: 3, maxGroups: 2}`),
			[]string{"spec.placement.spreadConstraints[0]", "minGroups must be less than or equal to maxGroups"}},
		{"two constraints on one field", policy("bad-dup-field", selectNginx+`placement:
  spreadConstraints:
  - {spreadByField: cluster, minGroups: 1}
  - {spreadByField: cluster, minGroups: 2}`),
			[]string{"spec.placement.spreadConstraints", "at most one constraint per spreadByField"}},
		{"region spread without cluster spread", policy("bad-no-cluster", selectNginx+`placement:
  spreadConstraints:
  - {spreadByField: region, minGroups: 2}`),
			[]string{"spec.placement.spreadConstraints", "needs a constraint with spreadByField: cluster"}},
		{"field and label in one constraint", policy("bad-field-label", selectNginx+`placement:
  spreadConstraints:
  - {spreadByField: cluster, spreadByLabel: rack, minGroups: 1}`),
			[]string{"spec.placement.spreadConstraints[0]", "exactly one of spreadByField and spreadByLabel"}},
		{"unknown spread field", policy("bad-spread-enum", selectNginx+`placement:
  spreadConstraints:
  - {spreadByField: rack, minGroups: 1}`),
			[]string{"spec.placement.spreadConstraints[0].spreadByField", `Unsupported value: "rack"`}},
		{"min groups zero", policy("bad-mingroups", selectNginx+`placement:
  spreadConstraints:
  - {spreadByField: cluster, minGroups: 0}`),
			[]string{"spec.placement.spreadConstraints[0].minGroups", "greater than or equal to 1"}},
		{"static weight zero", policy("bad-weight", selectNginx+`placement:
  replicaScheduling:
    replicaSchedulingType: Divided
    replicaDivisionPreference: Weighted
    weightPreference:
      staticWeightList:
      - targetCluster: {clusterNames: [member1]}
        weight: 0`),
			[]string{"spec.placement.replicaScheduling.weightPreference.staticWeightList[0].weight", "greater than or equal to 1"}},
		{"negative unschedulable threshold", policy("bad-unschedulable-threshold", selectNginx+`placement:
  replicaScheduling:
    replicaSchedulingType: Divided
    replicaDivisionPreference: Aggregated
    unschedulableThresholdSeconds: -5`),
			[]string{"spec.placement.replicaScheduling.unschedulableThresholdSeconds", "greater than or equal to 1"}},
		{"zero unschedulable threshold", policy("bad-unschedulable-threshold-zero", selectNginx+`placement:
  replicaScheduling:
    replicaSchedulingType: Divided
    replicaDivisionPreference: Aggregated
    unschedulableThresholdSeconds: 0`),
			[]string{"spec.placement.replicaScheduling.unschedulableThresholdSeconds", "greater than or equal to 1"}},
		{"static and dynamic weights together", policy("bad-both-weights", selectNginx+`placement:
  replicaScheduling:
    replicaSchedulingType: Divided
    replicaDivisionPreference: Weighted
    weightPreference:
      dynamicWeight: AvailableReplicas
      staticWeightList:
      - targetCluster: {clusterNames: [member1]}
        weight: 1`),
			[]string{"spec.placement.replicaScheduling.weightPreference", "exactly one of staticWeightList and dynamicWeight"}},
		{"division preference with Duplicated", policy("bad-dup-division", selectNginx+`placement:
  replicaScheduling:
    replicaSchedulingType: Duplicated
    replicaDivisionPreference: Aggregated`),
			[]string{"spec.placement.replicaScheduling", "only valid with replicaSchedulingType: Divided"}},
		{"weight preference with Aggregated", policy("bad-agg-weights", selectNginx+`placement:
  replicaScheduling:
    replicaSchedulingType: Divided
    replicaDivisionPreference: Aggregated
    weightPreference: {dynamicWeight: AvailableReplicas}`),
			[]string{"spec.placement.replicaScheduling", "only valid with replicaDivisionPreference: Weighted"}},
		{"unknown replica scheduling type", policy("bad-type", selectNginx+`placement:
  replicaScheduling:
    replicaSchedulingType: Spread`),
			[]string{"spec.placement.replicaScheduling.replicaSchedulingType", `Unsupported value: "Spread"`}},
		{"unknown purge mode", policy("bad-purge", selectNginx+`failover:
  application:
    purgeMode: Sometimes`),
			[]string{"spec.failover.application.purgeMode", `Unsupported value: "Sometimes"`}},
		{"grace period with Immediately", policy("bad-grace", selectNginx+`failover:
  application:
    purgeMode: Immediately
    gracePeriodSeconds: 30`),
			[]string{"spec.failover.application", "gracePeriodSeconds is only valid with purgeMode: Gracefully (or its former name Graciously)"}},
		{"grace period with Directly", policy("bad-grace-directly", selectNginx+`failover:
  application:
    purgeMode: Directly
    gracePeriodSeconds: 30`),
			[]string{"spec.failover.application", "gracePeriodSeconds is only valid with purgeMode: Gracefully"}},
		{"unknown cluster purge mode", policy("bad-cluster-purge-enum", selectNginx+`failover:
  cluster:
    purgeMode: Eventually`),
			[]string{"spec.failover.cluster.purgeMode", `Unsupported value: "Eventually"`, `"Directly"`, `"Gracefully"`}},
		{"negative block predecessor seconds", policy("bad-block", selectNginx+`failover:
  application:
    blockPredecessorSeconds: -5`),
			[]string{"spec.failover.application.blockPredecessorSeconds", "greater than or equal to 0"}},
		{"cluster failover purge Never", policy("bad-cluster-purge", selectNginx+`failover:
  cluster:
    purgeMode: Never`),
			[]string{"spec.failover.cluster.purgeMode", "must be Directly, Gracefully, Immediately or Graciously", "Never is for application failover only"}},
		{"state preservation label name with a space", policy("bad-alias", selectNginx+`failover:
  application:
    purgeMode: Directly
    statePreservation:
      rules:
      - {aliasLabelName: "check point", jsonPath: "{.checkpoint}"}`),
			[]string{"spec.failover.application.statePreservation.rules[0].aliasLabelName", "should match"}},
		{"state preservation path without braces", policy("bad-jsonpath", selectNginx+`failover:
  application:
    purgeMode: Directly
    statePreservation:
      rules:
      - {aliasLabelName: checkpoint, jsonPath: .status.checkpoint}`),
			[]string{"spec.failover.application.statePreservation.rules[0].jsonPath", "should match"}},
		{"state preservation label name twice", policy("bad-alias-twice", selectNginx+`failover:
  cluster:
    statePreservation:
      rules:
      - {aliasLabelName: checkpoint, jsonPath: "{.checkpoint}"}
      - {aliasLabelName: checkpoint, jsonPath: "{.epoch}"}`),
			[]string{"spec.failover.cluster.statePreservation.rules[1]", `Duplicate value: {"aliasLabelName":"checkpoint"}`}},
		{"state preservation without rules", policy("bad-no-rules", selectNginx+`failover:
  cluster:
    statePreservation:
      rules: []`),
			[]string{"spec.failover.cluster.statePreservation.rules", "should have at least 1 items"}},
		{"unknown conflict resolution", policy("bad-conflict", selectNginx+`conflictResolution: Replace`),
			[]string{"spec.conflictResolution", `Unsupported value: "Replace"`, `"Abort"`, `"Overwrite"`}},
		{"unknown activation preference", policy("bad-activation", selectNginx+`activationPreference: Eager`),
			[]string{"spec.activationPreference", `Unsupported value: "Eager"`, `"Lazy"`}},
		{"suspension of every cluster and of named clusters", policy("bad-suspension", selectNginx+`suspension:
  dispatching: true
  dispatchingOnClusters: {clusterNames: [member1]}`),
			[]string{"spec.suspension", "dispatching: true already holds every cluster; remove dispatchingOnClusters or set dispatching to false"}},
		// Karmada fields in the schema (so they are never pruned silently)
		// that Shepherd does not implement yet are refused, naming the
		// field; so are workload affinity terms that cannot group anything.
		{"Karmada association", policy("bad-association", selectNginx+`association: true`),
			[]string{"spec.association is not supported", "propagateDeps"}},
		{"unknown preemption", policy("bad-preemption-enum", selectNginx+`preemption: Sometimes`),
			[]string{"spec.preemption", `Unsupported value: "Sometimes"`}},
		{"schedule priority from an unsupported source", policy("bad-schedule-priority", selectNginx+`schedulePriority:
  priorityClassSource: PodPriorityClass
  priorityClassName: high-priority`),
			[]string{"spec.schedulePriority.priorityClassSource", `Unsupported value: "PodPriorityClass"`, `"KubePriorityClass"`}},
		{"schedule priority without a class name", policy("bad-schedule-priority-name", selectNginx+`schedulePriority:
  priorityClassSource: KubePriorityClass
  priorityClassName: ""`),
			[]string{"spec.schedulePriority.priorityClassName"}},
		{"workload affinity with an empty key", policy("bad-workload-affinity-empty", selectNginx+`placement:
  workloadAffinity:
    affinity: {groupByLabelKey: ""}`),
			[]string{"spec.placement.workloadAffinity.affinity.groupByLabelKey", "must not be empty"}},
		{"workload anti-affinity with a key that is no label key", policy("bad-workload-affinity-key", selectNginx+`placement:
  workloadAffinity:
    antiAffinity: {groupByLabelKey: "not a key!"}`),
			[]string{"spec.placement.workloadAffinity.antiAffinity.groupByLabelKey", "should match"}},
		{"workload affinity and anti-affinity on one key", policy("bad-workload-affinity-same", selectNginx+`placement:
  workloadAffinity:
    affinity: {groupByLabelKey: app.example.com/group}
    antiAffinity: {groupByLabelKey: app.example.com/group}`),
			[]string{"spec.placement.workloadAffinity", "affinity and antiAffinity group by the same label key"}},
		{"replica limit of zero", policy("bad-replica-limit", selectNginx+`placement:
  replicaLimits: {maxReplicas: 0}`),
			[]string{"spec.placement.replicaLimits.maxReplicas", "should be greater than or equal to 1"}},
		{"negative per-cluster replica limit", policy("bad-cluster-limit", selectNginx+`placement:
  replicaLimits: {maxReplicasPerCluster: -3}`),
			[]string{"spec.placement.replicaLimits.maxReplicasPerCluster", "should be greater than or equal to 1"}},
		// ClusterPropagationPolicy shares the spec and so every rule; one
		// case shows the rules reach it.
		{"cluster policy with workload affinity on an empty key", `apiVersion: policy.shepherd.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: bad-cluster-policy-workload-affinity}
spec:
  resourceSelectors:
  - {apiVersion: v1, kind: Namespace, name: team-a}
  placement:
    workloadAffinity:
      antiAffinity: {groupByLabelKey: ""}
`, []string{"ClusterPropagationPolicy", "spec.placement.workloadAffinity.antiAffinity.groupByLabelKey", "must not be empty"}},
		{"preferred weight above 100", policy("bad-pref-weight", selectNginx+`placement:
  preferredClusterAffinities:
  - weight: 101
    preference: {clusterNames: [member1]}`),
			[]string{"spec.placement.preferredClusterAffinities[0].weight", "less than or equal to 100"}},
		{"preferred weight zero", policy("bad-pref-zero", selectNginx+`placement:
  preferredClusterAffinities:
  - weight: 0
    preference: {clusterNames: [member1]}`),
			[]string{"spec.placement.preferredClusterAffinities[0].weight", "must not be 0"}},
		{"affinity and fallback affinities together", policy("bad-affinities", selectNginx+`placement:
  clusterAffinity: {clusterNames: [member1]}
  clusterAffinities:
  - {affinityName: primary, clusterNames: [member2]}`),
			[]string{"spec.placement", "clusterAffinity and spec.placement.clusterAffinities are mutually exclusive"}},
		{"divided components with spread constraints", policy("bad-division-spread", selectNginx+`placement:
  components: {division: DivideIndependent}
  spreadConstraints:
  - {spreadByField: region, minGroups: 2, maxGroups: 2}`),
			[]string{"spec.placement", "components.division: DivideIndependent puts a workload's head on one cluster"}},
		{"unknown component division", policy("bad-division", selectNginx+`placement:
  components: {division: Split}`),
			[]string{"spec.placement.components.division", `Unsupported value: "Split"`}},
		{"duplicate fallback affinity name", policy("bad-affinity-name", selectNginx+`placement:
  clusterAffinities:
  - {affinityName: primary, clusterNames: [member1]}
  - {affinityName: primary, clusterNames: [member2]}`),
			[]string{"spec.placement.clusterAffinities[1]", `Duplicate value: {"affinityName":"primary"}`}},
		{"unknown field selector key", policy("bad-field-key", selectNginx+`placement:
  clusterAffinity:
    fieldSelector:
      matchExpressions:
      - {key: color, operator: In, values: [blue]}`),
			[]string{"spec.placement.clusterAffinity.fieldSelector.matchExpressions[0].key", `Unsupported value: "color"`}},
		{"field selector In without values", policy("bad-field-values", selectNginx+`placement:
  clusterAffinity:
    fieldSelector:
      matchExpressions:
      - {key: region, operator: In}`),
			[]string{"spec.placement.clusterAffinity.fieldSelector.matchExpressions[0]", "values must be non-empty for In and NotIn"}},
		{"toleration Exists with a value", policy("bad-toleration", selectNginx+`placement:
  clusterTolerations:
  - {key: dedicated, operator: Exists, value: web, effect: NoSchedule}`),
			[]string{"spec.placement.clusterTolerations", "value must be empty when operator is Exists"}},
		{"no resource selectors", policy("bad-no-selectors", `placement: {}`),
			[]string{"spec.resourceSelectors", "Required value"}},
		{"selector with name and label selector", policy("bad-selector", `resourceSelectors:
- apiVersion: apps/v1
  kind: Deployment
  name: nginx
  labelSelector: {matchLabels: {app: nginx}}`),
			[]string{"spec.resourceSelectors[0]", "name and labelSelector are mutually exclusive"}},
		{"cluster taint PreferNoSchedule", `apiVersion: cluster.shepherd.io/v1alpha1
kind: Cluster
metadata: {name: bad-taint}
spec:
  apiEndpoint: https://10.0.0.1:6443
  secretRef: {namespace: shepherd-system, name: bad-taint}
  taints:
  - {key: spot, effect: PreferNoSchedule}
`, []string{"spec.taints", "effect must be NoSchedule or NoExecute"}},
		{"cluster endpoint not a URL", `apiVersion: cluster.shepherd.io/v1alpha1
kind: Cluster
metadata: {name: bad-endpoint}
spec:
  apiEndpoint: ftp://example.com
  secretRef: {namespace: shepherd-system, name: bad-endpoint}
`, []string{"spec.apiEndpoint", "should match"}},
		{"cluster without credentials", `apiVersion: cluster.shepherd.io/v1alpha1
kind: Cluster
metadata: {name: bad-secret}
spec:
  apiEndpoint: https://example.com:6443
`, []string{"spec.secretRef is required"}},
		{"cluster name too long", `apiVersion: cluster.shepherd.io/v1alpha1
kind: Cluster
metadata: {name: a-very-long-cluster-name-that-exceeds-the-limit-xyz}
spec:
  apiEndpoint: https://example.com:6443
  secretRef: {namespace: shepherd-system, name: long}
`, []string{"metadata.name of a Cluster must be at most 48 characters"}},
		{"reschedule task without targets", `apiVersion: task.shepherd.io/v1alpha1
kind: RescheduleTask
metadata: {name: bad-empty-task}
spec: {}
`, []string{"spec", "set at least one target in targetRefPolicy or targetRefResource"}},
		{"reschedule task negative TTL", `apiVersion: task.shepherd.io/v1alpha1
kind: RescheduleTask
metadata: {name: bad-ttl-task}
spec:
  ttlSecondsAfterFinished: -1
  targetRefPolicy: [{namespace: default, name: nginx}]
`, []string{"spec.ttlSecondsAfterFinished", "greater than or equal to 0"}},
		{"reschedule task resource without name", `apiVersion: task.shepherd.io/v1alpha1
kind: RescheduleTask
metadata: {name: bad-resource-task}
spec:
  targetRefResource: [{apiVersion: apps/v1, kind: Deployment, namespace: default}]
`, []string{"spec.targetRefResource[0].name", "Required value"}},
		{"health interpreter without expression", `apiVersion: config.shepherd.io/v1alpha1
kind: HealthInterpreter
metadata: {name: bad-empty-expression}
spec:
  target: {apiVersion: v1, kind: ConfigMap}
  health: {expression: ""}
`, []string{"spec.health.expression", "at least 1"}},
		{"health interpreter without target kind", `apiVersion: config.shepherd.io/v1alpha1
kind: HealthInterpreter
metadata: {name: bad-no-kind}
spec:
  target: {apiVersion: v1}
  health: {expression: "true"}
`, []string{"spec.target.kind", "Required value"}},
		{"health interpreter expression too long", `apiVersion: config.shepherd.io/v1alpha1
kind: HealthInterpreter
metadata: {name: bad-long-expression}
spec:
  target: {apiVersion: v1, kind: ConfigMap}
  health: {expression: "` + strings.Repeat("x", 4097) + `"}
`, []string{"spec.health.expression", "may not be more than 4096"}},
		// The two below are refused by the HealthInterpreter webhook
		// (started in TestMain), not by the schema.
		{"health interpreter expression that does not compile", `apiVersion: config.shepherd.io/v1alpha1
kind: HealthInterpreter
metadata: {name: bad-syntax}
spec:
  target: {apiVersion: v1, kind: ConfigMap}
  health: {expression: "observedObj.data.healthy =="}
`, []string{"healthinterpreters.config.shepherd.io", "spec.health.expression", "does not compile", "Syntax error"}},
		{"health interpreter expression of the wrong type", `apiVersion: config.shepherd.io/v1alpha1
kind: HealthInterpreter
metadata: {name: bad-type}
spec:
  target: {apiVersion: v1, kind: ConfigMap}
  health: {expression: "size(observedObj.data)"}
`, []string{"spec.health.expression", "must return a string"}},
		{"health interpreter with a malformed apiVersion", `apiVersion: config.shepherd.io/v1alpha1
kind: HealthInterpreter
metadata: {name: bad-apiversion}
spec:
  target: {apiVersion: a/b/c, kind: ConfigMap}
  health: {expression: "true"}
`, []string{"spec.target.apiVersion", "GROUP/VERSION"}},
	}
	ctx := context.Background()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// A plain create, as `kubectl create` does; server-side apply
			// refuses some of these earlier, with less precise messages.
			_, err := hub.Create(ctx, []byte(tc.yaml))
			if err == nil {
				t.Fatalf("the API server accepted an invalid object:\n%s", tc.yaml)
			}
			if !testenv.IsInvalid(unwrapStatus(err)) {
				t.Fatalf("want an Invalid error, got %v (reason %s)", err, apierrors.ReasonForError(unwrapStatus(err)))
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not mention %q:\n%v", w, err)
				}
			}
		})
	}
	if len(cases) < 15 {
		t.Fatalf("only %d invalid cases; the foundation asks for at least 15", len(cases))
	}
}

// TestLifecycleFieldsAreStoredAsWritten applies a policy using every
// accepted value of the life-cycle and Karmada v1.18 fields and reads it
// back: each field is stored exactly as written (nothing pruned, no
// spelling of a purge mode rewritten), and the defaults fill only what
// was left out.
func TestLifecycleFieldsAreStoredAsWritten(t *testing.T) {
	suite.Hub(t)
	ctx := context.Background()
	written := policy("lifecycle-accepted", selectNginx+`conflictResolution: Overwrite
activationPreference: Lazy
preserveResourcesOnDeletion: true
preemption: Always
schedulePriority: {priorityClassSource: KubePriorityClass, priorityClassName: high-priority}
dependentOverrides: [nginx-images]
association: false
suspension:
  dispatchingOnClusters:
    clusterNames: [member2, member3]
failover:
  application:
    decisionConditions: {tolerationSeconds: 60}
    purgeMode: Directly
    statePreservation:
      rules:
      - {aliasLabelName: app.example.io/checkpoint, jsonPath: "{.checkpoint}"}
      - {aliasLabelName: epoch, jsonPath: "{.progress.epoch}"}
  cluster:
    purgeMode: Gracefully
    statePreservation:
      rules:
      - {aliasLabelName: checkpoint, jsonPath: "{.checkpoint}"}
placement:
  clusterAffinities:
  - affinityName: primary
    clusterNames: [member1]
    overflowAffinities:
    - {affinityName: burst, clusterNames: [member2]}
  workloadAffinity:
    affinity: {groupByLabelKey: app.example.io/shop}
    antiAffinity: {groupByLabelKey: ha-pair}`)
	want, err := testenv.DecodeYAML([]byte(written))
	if err != nil {
		t.Fatal(err)
	}
	applied, err := hub.Apply(ctx, []byte(written))
	if err != nil {
		t.Fatalf("the policy was refused: %v", err)
	}
	stored := reread(t, applied[0])
	// The fields are read one by one as well, so a failure names the field.
	for _, f := range []struct {
		path []string
		want string
	}{
		{[]string{"spec", "conflictResolution"}, "Overwrite"},
		{[]string{"spec", "activationPreference"}, "Lazy"},
		{[]string{"spec", "preemption"}, "Always"},
		{[]string{"spec", "schedulePriority", "priorityClassName"}, "high-priority"},
		{[]string{"spec", "failover", "application", "purgeMode"}, "Directly"},
		{[]string{"spec", "failover", "cluster", "purgeMode"}, "Gracefully"},
		{[]string{"spec", "placement", "workloadAffinity", "affinity", "groupByLabelKey"}, "app.example.io/shop"},
		{[]string{"spec", "placement", "workloadAffinity", "antiAffinity", "groupByLabelKey"}, "ha-pair"},
	} {
		if got, _, _ := unstructured.NestedString(stored.Object, f.path...); got != f.want {
			t.Errorf("%s: stored %q, written %q", strings.Join(f.path, "."), got, f.want)
		}
	}
	if got, found, _ := unstructured.NestedBool(stored.Object, "spec", "preserveResourcesOnDeletion"); !found || !got {
		t.Errorf("spec.preserveResourcesOnDeletion: stored %v (found %v), written true", got, found)
	}
	if got, _, _ := unstructured.NestedStringSlice(stored.Object, "spec", "suspension", "dispatchingOnClusters", "clusterNames"); strings.Join(got, ",") != "member2,member3" {
		t.Errorf("spec.suspension.dispatchingOnClusters.clusterNames: stored %v, written [member2 member3]", got)
	}
	rules, _, _ := unstructured.NestedSlice(stored.Object, "spec", "failover", "application", "statePreservation", "rules")
	if len(rules) != 2 {
		t.Errorf("spec.failover.application.statePreservation.rules: stored %v, written 2 rules", rules)
	}
	// And every field written, whole, with its value.
	if path, ok := holds(stored.Object["spec"], want[0].Object["spec"], "spec"); !ok {
		t.Errorf("%s is not stored as written:\n%v", path, stored.Object["spec"])
	}

	// The former names of the purge modes are stored as written too, not
	// rewritten to the new ones.
	applied, err = hub.Apply(ctx, []byte(policy("lifecycle-former-purge-names", selectNginx+`failover:
  application:
    purgeMode: Graciously
    gracePeriodSeconds: 30
  cluster:
    purgeMode: Graciously`)))
	if err != nil {
		t.Fatalf("the policy with the former purge mode names was refused: %v", err)
	}
	stored = reread(t, applied[0])
	for _, kind := range []string{"application", "cluster"} {
		if got, _, _ := unstructured.NestedString(stored.Object, "spec", "failover", kind, "purgeMode"); got != "Graciously" {
			t.Errorf("spec.failover.%s.purgeMode: stored %q, written Graciously", kind, got)
		}
	}
	applied, err = hub.Apply(ctx, []byte(policy("lifecycle-former-direct-name", selectNginx+`failover:
  application:
    purgeMode: Immediately`)))
	if err != nil {
		t.Fatalf("purgeMode Immediately was refused: %v", err)
	}
	if got, _, _ := unstructured.NestedString(reread(t, applied[0]).Object, "spec", "failover", "application", "purgeMode"); got != "Immediately" {
		t.Errorf("spec.failover.application.purgeMode: stored %q, written Immediately", got)
	}
}

// TestPolicyDefaults: what a policy leaves out of the life-cycle and
// failover fields reads back with the documented defaults (docs/api.md).
func TestPolicyDefaults(t *testing.T) {
	suite.Hub(t)
	ctx := context.Background()
	applied, err := hub.Apply(ctx, []byte(policy("lifecycle-defaults", selectNginx+`failover:
  application: {}
  cluster: {}`)))
	if err != nil {
		t.Fatal(err)
	}
	stored := reread(t, applied[0])
	for _, f := range []struct {
		path []string
		want string
	}{
		{[]string{"spec", "conflictResolution"}, "Abort"},
		{[]string{"spec", "failover", "application", "purgeMode"}, "Gracefully"},
		{[]string{"spec", "failover", "cluster", "purgeMode"}, "Immediately"},
	} {
		if got, _, _ := unstructured.NestedString(stored.Object, f.path...); got != f.want {
			t.Errorf("%s defaults to %q, want %q", strings.Join(f.path, "."), got, f.want)
		}
	}
	for _, path := range [][]string{
		{"spec", "activationPreference"}, {"spec", "suspension"}, {"spec", "preserveResourcesOnDeletion"},
		{"spec", "failover", "application", "gracePeriodSeconds"},
	} {
		if v, found, _ := unstructured.NestedFieldNoCopy(stored.Object, path...); found {
			t.Errorf("%s is set to %v though the policy left it out", strings.Join(path, "."), v)
		}
	}
}

// reread gets obj again from the hub.
func reread(t *testing.T, obj *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	ri, err := hub.Resource(obj)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ri.Get(context.Background(), obj.GetName(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// holds reports whether got holds every field of want with the same value
// (got may have more fields, e.g. defaults); if not, it returns the path
// of the first difference. Lists must match item by item.
func holds(got, want any, path string) (string, bool) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return path, false
		}
		for k, wv := range w {
			gv, found := g[k]
			if !found {
				// A written empty list or false may read back absent;
				// any other value missing was pruned.
				if isEmpty(wv) {
					continue
				}
				return path + "." + k, false
			}
			if p, ok := holds(gv, wv, path+"."+k); !ok {
				return p, false
			}
		}
		return "", true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return path, false
		}
		for i := range w {
			if p, ok := holds(g[i], w[i], fmt.Sprintf("%s[%d]", path, i)); !ok {
				return p, false
			}
		}
		return "", true
	}
	return path, fmt.Sprint(got) == fmt.Sprint(want)
}

// isEmpty is an empty list or map, or false.
func isEmpty(v any) bool {
	switch x := v.(type) {
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	case bool:
		return !x
	}
	return false
}

// TestRejectedUpdateKeepsStoredObject checks a refused update leaves the
// stored object exactly as it was.
func TestRejectedUpdateKeepsStoredObject(t *testing.T) {
	suite.Hub(t)
	ctx := context.Background()
	good := policy("keep-me", selectNginx+`placement:
  spreadConstraints:
  - {spreadByField: cluster, minGroups: 1, maxGroups: 2}`)
	objs, err := hub.Apply(ctx, []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	before := objs[0]
	bad := strings.Replace(good, "maxGroups: 2", "maxGroups: 2}\n  - {spreadByField: cluster, minGroups: 1", 1)
	if _, err := hub.Apply(ctx, []byte(bad)); err == nil {
		t.Fatal("the invalid update was accepted")
	}
	after := unchanged(t, before)
	sc, _, _ := unstructured.NestedSlice(after.Object, "spec", "placement", "spreadConstraints")
	if len(sc) != 1 {
		t.Errorf("stored spreadConstraints changed: %v", sc)
	}
}

// unwrapStatus digs the API status error out of Apply's wrapping.
func unwrapStatus(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		next := u.Unwrap()
		if next == nil {
			return err
		}
		err = next
	}
}

// TestHealthInterpreterWebhookOnUpdate: an update that breaks a stored
// rule is refused and the rule stays; one that fixes nothing but labels
// goes through.
func TestHealthInterpreterWebhookOnUpdate(t *testing.T) {
	suite.Hub(t)
	ctx := context.Background()
	const good = `apiVersion: config.shepherd.io/v1alpha1
kind: HealthInterpreter
metadata: {name: update-me}
spec:
  target: {apiVersion: example.io/v1, kind: Widget}
  health: {expression: "has(observedObj.status) ? 'Healthy' : 'Unknown'"}
`
	objs, err := hub.Apply(ctx, []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	before := objs[0]
	bad := strings.Replace(good, "'Unknown'", "", 1)
	if _, err := hub.Apply(ctx, []byte(bad)); err == nil || !strings.Contains(err.Error(), "spec.health.expression") {
		t.Fatalf("breaking update: want a refusal naming spec.health.expression, got %v", err)
	}
	unchanged(t, before)
	labelled := strings.Replace(good, "metadata: {name: update-me}", "metadata: {name: update-me, labels: {team: a}}", 1)
	if _, err := hub.Apply(ctx, []byte(labelled)); err != nil {
		t.Fatalf("a label change was refused: %v", err)
	}
}

// unchanged reads before's object again and fails t if a refused update
// moved its resourceVersion; it returns the object read.
func unchanged(t *testing.T, before *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	ri, err := hub.Resource(before)
	if err != nil {
		t.Fatal(err)
	}
	after, err := ri.Get(context.Background(), before.GetName(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.GetResourceVersion() != before.GetResourceVersion() {
		t.Errorf("resourceVersion moved from %s to %s after a refused update", before.GetResourceVersion(), after.GetResourceVersion())
	}
	return after
}

// TestClusterSyncModeIsImmutable: a Pull cluster needs neither endpoint
// nor credentials, and no cluster changes its mode: the hub and an agent
// would both apply its Works.
func TestClusterSyncModeIsImmutable(t *testing.T) {
	suite.Hub(t)
	ctx := context.Background()
	pull := `apiVersion: cluster.shepherd.io/v1alpha1
kind: Cluster
metadata: {name: edge-immutable}
spec:
  syncMode: Pull
`
	objs, err := hub.Apply(ctx, []byte(pull))
	if err != nil {
		t.Fatalf("a Pull cluster without endpoint or credentials was refused: %v", err)
	}
	toPush := strings.Replace(pull, "syncMode: Pull", "syncMode: Push\n  apiEndpoint: https://10.0.0.1:6443\n  secretRef: {namespace: shepherd-system, name: edge-immutable}", 1)
	_, err = hub.Apply(ctx, []byte(toPush))
	if err == nil || !strings.Contains(err.Error(), "spec.syncMode cannot change") {
		t.Fatalf("changing syncMode: got %v, want the refusal naming spec.syncMode", err)
	}
	after := unchanged(t, objs[0])
	if mode, _, _ := unstructured.NestedString(after.Object, "spec", "syncMode"); mode != "Pull" {
		t.Errorf("stored syncMode is %q", mode)
	}
}
