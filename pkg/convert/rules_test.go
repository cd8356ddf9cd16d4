package convert

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// pp renders a Karmada PropagationPolicy of namespace shop with the given
// spec lines (indented by two spaces under spec:), selecting Deployment web.
func pp(spec string) string {
	return karmada("PropagationPolicy", "resourceSelectors:\n- {apiVersion: apps/v1, kind: Deployment, name: web}\n"+spec)
}

func karmada(kind, spec string) string {
	return "apiVersion: policy.karmada.io/v1alpha1\nkind: " + kind + "\nmetadata: {name: p, namespace: shop}\nspec:\n" + indent(spec)
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "  " + l
	}
	return strings.Join(lines, "\n") + "\n"
}

// fhpa renders a Karmada FederatedHPA of namespace shop scaling Deployment
// web up to 10 replicas, with more spec lines.
func fhpa(name, spec string) string {
	return "apiVersion: autoscaling.karmada.io/v1alpha1\nkind: FederatedHPA\nmetadata: {name: " + name + ", namespace: shop}\nspec:\n" +
		indent("scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\nmaxReplicas: 10\n"+spec)
}

// cronFHPA renders a Karmada CronFederatedHPA of namespace shop with the
// given spec lines.
func cronFHPA(spec string) string {
	return "apiVersion: autoscaling.karmada.io/v1alpha1\nkind: CronFederatedHPA\nmetadata: {name: c, namespace: shop}\nspec:\n" + indent(spec)
}

// convertString reads and converts one YAML stream named in.yaml.
func convertString(t *testing.T, in string) ([]*unstructured.Unstructured, *Report) {
	t.Helper()
	docs, errs := Read("in.yaml", strings.NewReader(in))
	return Convert(docs, errs...)
}

// ruleCases exercise every rule; TestEveryRuleIsExercised checks that.
var ruleCases = []struct {
	name string
	in   string
	// want maps each field reported to its rule.
	want map[string]string
	// has and lacks are paths (dotted, [i] for indexes) that the output
	// must have, with the value when not "", or must not have.
	has   map[string]string
	lacks []string
	// opts are the conversion's options (none by default).
	opts Options
}{
	{name: "only apiVersion changes", in: pp("placement:\n  clusterAffinity: {clusterNames: [m1]}"),
		has: map[string]string{"apiVersion": "policy.shepherd.io/v1alpha1", "spec.placement.clusterAffinity.clusterNames[0]": "m1"}},
	{name: "name with labelSelector", in: karmada("PropagationPolicy", "resourceSelectors:\n- apiVersion: apps/v1\n  kind: Deployment\n  name: web\n  labelSelector: {matchLabels: {a: b}}"),
		want:  map[string]string{"spec.resourceSelectors[0].labelSelector": "selector-name-and-label"},
		lacks: []string{"spec.resourceSelectors[0].labelSelector"}, has: map[string]string{"spec.resourceSelectors[0].name": "web"}},
	{name: "override policy name with labelSelector", in: karmada("OverridePolicy", "resourceSelectors:\n- apiVersion: apps/v1\n  kind: Deployment\n  name: web\n  labelSelector: {matchLabels: {a: b}}\noverrideRules:\n- overriders: {labelsOverrider: [{operator: add, value: {a: b}}]}"),
		want: map[string]string{"spec.resourceSelectors[0].labelSelector": "selector-name-and-label"}},
	{name: "selector of another namespace", in: karmada("PropagationPolicy", "resourceSelectors:\n- {apiVersion: apps/v1, kind: Deployment, namespace: other}"),
		want: map[string]string{"spec.resourceSelectors[0].namespace": "selector-other-namespace"}, has: map[string]string{"spec.resourceSelectors[0].namespace": "other"}},
	{name: "ServiceImport selector", in: karmada("PropagationPolicy", "resourceSelectors:\n- {apiVersion: multicluster.x-k8s.io/v1alpha1, kind: ServiceImport, name: web}\n- {apiVersion: multicluster.x-k8s.io/v1alpha1, kind: ServiceExport, name: web}"),
		want: map[string]string{"spec.resourceSelectors[0]": "mcs-selector"}, has: map[string]string{"spec.resourceSelectors[0].kind": "ServiceImport", "spec.resourceSelectors[1].kind": "ServiceExport"}},
	{name: "MCS CRDs propagated by the user", in: karmada("ClusterPropagationPolicy", "resourceSelectors:\n- {apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, name: serviceexports.multicluster.x-k8s.io}\n- {apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, name: serviceimports.multicluster.x-k8s.io}\n- {apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, name: widgets.example.com}"),
		want: map[string]string{"spec.resourceSelectors[0]": "mcs-selector", "spec.resourceSelectors[1]": "mcs-selector", "metadata.namespace": "unknown-field"}},
	{name: "association", in: pp("association: true"),
		want: map[string]string{"spec.association": "association"}, has: map[string]string{"spec.propagateDeps": "true"}, lacks: []string{"spec.association"}},
	{name: "affinity and affinities", in: pp("placement:\n  clusterAffinity: {clusterNames: [m1]}\n  clusterAffinities: [{affinityName: a, clusterNames: [m2]}]"),
		want: map[string]string{"spec.placement.clusterAffinities": "affinity-and-affinities"}},
	{name: "toleration Exists with a value", in: pp("placement:\n  clusterTolerations: [{key: k, operator: Exists, value: v}]"),
		want: map[string]string{"spec.placement.clusterTolerations[0].value": "toleration-exists-value"}, lacks: []string{"spec.placement.clusterTolerations[0].value"}},
	{name: "toleration operator", in: pp("placement:\n  clusterTolerations: [{key: k, operator: Gt, value: \"1\"}]"),
		want: map[string]string{"spec.placement.clusterTolerations[0].operator": "toleration-operator"}},
	{name: "spread without field", in: pp("placement:\n  spreadConstraints: [{minGroups: 1, maxGroups: 2}]"),
		want: map[string]string{"spec.placement.spreadConstraints[0].spreadByField": "spread-default-field"}, has: map[string]string{"spec.placement.spreadConstraints[0].spreadByField": "cluster"}},
	{name: "spread by field and label", in: pp("placement:\n  spreadConstraints: [{spreadByField: cluster, spreadByLabel: l, maxGroups: 2}]"),
		want: map[string]string{"spec.placement.spreadConstraints[0]": "spread-field-and-label"}},
	{name: "spread without maxGroups", in: pp("placement:\n  spreadConstraints: [{spreadByField: cluster, minGroups: 2}]"),
		want: map[string]string{"spec.placement.spreadConstraints[0].maxGroups": "spread-max-groups"}},
	{name: "spread with maxGroups 0", in: pp("placement:\n  spreadConstraints: [{spreadByField: cluster, maxGroups: 0}]"),
		want: map[string]string{"spec.placement.spreadConstraints[0].maxGroups": "spread-max-groups-zero"}, lacks: []string{"spec.placement.spreadConstraints[0].maxGroups"}},
	{name: "spread with minGroups 0", in: pp("placement:\n  spreadConstraints: [{spreadByField: cluster, minGroups: 0, maxGroups: 2}]"),
		want: map[string]string{"spec.placement.spreadConstraints[0].minGroups": "spread-min-groups-zero"}, lacks: []string{"spec.placement.spreadConstraints[0].minGroups"}},
	{name: "empty field selectors", in: pp("placement:\n  clusterAffinities:\n  - affinityName: a\n    clusterNames: [m1]\n    fieldSelector: {matchExpressions: []}\n    overflowAffinities: [{affinityName: b, fieldSelector: {}}]\n  replicaScheduling:\n    replicaDivisionPreference: Aggregated"),
		want:  map[string]string{"spec.placement.clusterAffinities[0].fieldSelector": "field-selector-empty", "spec.placement.clusterAffinities[0].overflowAffinities[0].fieldSelector": "field-selector-empty"},
		lacks: []string{"spec.placement.clusterAffinities[0].fieldSelector", "spec.placement.clusterAffinities[0].overflowAffinities[0].fieldSelector"}},
	{name: "field selector with expressions passes", in: pp("placement:\n  clusterAffinity:\n    fieldSelector: {matchExpressions: [{key: region, operator: In, values: [eu]}]}"),
		has: map[string]string{"spec.placement.clusterAffinity.fieldSelector.matchExpressions[0].key": "region"}},
	{name: "spread by zone and label", in: pp("placement:\n  spreadConstraints:\n  - {spreadByField: zone, maxGroups: 2}\n  - {spreadByField: cluster, maxGroups: 4}\n  - {spreadByLabel: rack, maxGroups: 2}"),
		want: map[string]string{"spec.placement.spreadConstraints[0]": "spread-honoured", "spec.placement.spreadConstraints[2]": "spread-honoured"}},
	{name: "Divided weights without preference", in: pp("placement:\n  replicaScheduling:\n    replicaSchedulingType: Divided\n    weightPreference: {staticWeightList: [{targetCluster: {clusterNames: [m1]}, weight: 1}]}"),
		want: map[string]string{"spec.placement.replicaScheduling.replicaDivisionPreference": "division-preference-weighted"},
		has:  map[string]string{"spec.placement.replicaScheduling.replicaDivisionPreference": "Weighted"}},
	{name: "default type is Divided", in: pp("placement:\n  replicaScheduling:\n    weightPreference: {dynamicWeight: AvailableReplicas}"),
		want: map[string]string{"spec.placement.replicaScheduling.replicaDivisionPreference": "division-preference-weighted", "spec.placement.replicaScheduling.weightPreference.dynamicWeight": "dynamic-weight"}},
	{name: "Duplicated with preference and weights", in: pp("placement:\n  replicaScheduling:\n    replicaSchedulingType: Duplicated\n    replicaDivisionPreference: Weighted\n    weightPreference: {dynamicWeight: AvailableReplicas}"),
		want:  map[string]string{"spec.placement.replicaScheduling.replicaDivisionPreference": "division-preference-unused", "spec.placement.replicaScheduling.weightPreference": "weight-preference-unused"},
		lacks: []string{"spec.placement.replicaScheduling.replicaDivisionPreference", "spec.placement.replicaScheduling.weightPreference"}},
	{name: "Aggregated with weights", in: pp("placement:\n  replicaScheduling:\n    replicaDivisionPreference: Aggregated\n    weightPreference: {dynamicWeight: AvailableReplicas}"),
		want:  map[string]string{"spec.placement.replicaScheduling.weightPreference": "weight-preference-unused"},
		lacks: []string{"spec.placement.replicaScheduling.weightPreference"}, has: map[string]string{"spec.placement.replicaScheduling.replicaDivisionPreference": "Aggregated"}},
	{name: "empty weight preference", in: pp("placement:\n  replicaScheduling:\n    replicaDivisionPreference: Weighted\n    weightPreference: {staticWeightList: []}"),
		want: map[string]string{"spec.placement.replicaScheduling.weightPreference": "weight-preference-empty"}, lacks: []string{"spec.placement.replicaScheduling.weightPreference"}},
	{name: "static and dynamic weights", in: pp("placement:\n  replicaScheduling:\n    replicaDivisionPreference: Weighted\n    weightPreference:\n      dynamicWeight: AvailableReplicas\n      staticWeightList: [{targetCluster: {clusterNames: [m1]}, weight: 1}]"),
		want:  map[string]string{"spec.placement.replicaScheduling.weightPreference.staticWeightList": "static-and-dynamic-weights", "spec.placement.replicaScheduling.weightPreference.dynamicWeight": "dynamic-weight"},
		lacks: []string{"spec.placement.replicaScheduling.weightPreference.staticWeightList"}},
	{name: "priority", in: pp("priority: 5"), want: map[string]string{"spec.priority": "priority-order"}},
	{name: "priority 0 means nothing", in: pp("priority: 0")},
	{name: "state preservation", in: pp("failover:\n  application:\n    decisionConditions: {tolerationSeconds: 60}\n    statePreservation: {rules: [{aliasLabelName: example.com/id, jsonPath: '{.status.id}'}]}"),
		want: map[string]string{"spec.failover.application.statePreservation": "state-preservation", "spec.failover.application": "block-predecessor"}},
	{name: "application failover", in: pp("propagateDeps: true\nfailover:\n  application:\n    decisionConditions: {tolerationSeconds: 120}\n    purgeMode: Directly"),
		want: map[string]string{"spec.failover.application": "block-predecessor"}, has: map[string]string{"spec.failover.application.purgeMode": "Directly"}},
	{name: "grace period above a day", in: pp("propagateDeps: true\nfailover:\n  application:\n    decisionConditions: {tolerationSeconds: 30}\n    gracePeriodSeconds: 172800"),
		want: map[string]string{"spec.failover.application.gracePeriodSeconds": "grace-period-max", "spec.failover.application": "block-predecessor"},
		has:  map[string]string{"spec.failover.application.gracePeriodSeconds": "86400"}},
	{name: "grace period of a day passes", in: pp("propagateDeps: true\nfailover:\n  application:\n    gracePeriodSeconds: 86400\n    blockPredecessorSeconds: 60"),
		has: map[string]string{"spec.failover.application.gracePeriodSeconds": "86400"}},
	{name: "Shepherd's failover window passes", in: strings.Replace(pp("failover:\n  application: {blockPredecessorSeconds: 60}"), "policy.karmada.io", "policy.shepherd.io", 1),
		has: map[string]string{"spec.failover.application.blockPredecessorSeconds": "60"}},
	{name: "cluster failover without purge mode", in: pp("failover:\n  cluster:\n    statePreservation: {rules: [{aliasLabelName: example.com/id, jsonPath: '{.status.id}'}]}"),
		want: map[string]string{"spec.failover.cluster.purgeMode": "cluster-failover-purge-mode", "spec.failover.cluster.statePreservation": "state-preservation"},
		has:  map[string]string{"spec.failover.cluster.purgeMode": "Gracefully"}},
	{name: "cluster failover Never", in: pp("failover:\n  cluster: {purgeMode: Never}"), want: map[string]string{"spec.failover.cluster.purgeMode": "cluster-purge-never"}},
	{name: "Overwrite", in: pp("conflictResolution: Overwrite"), want: map[string]string{"spec.conflictResolution": "conflict-overwrite"}},
	{name: "Lazy", in: pp("activationPreference: Lazy"), want: map[string]string{"spec.activationPreference": "lazy-activation"}},
	{name: "suspension of all and some", in: pp("suspension:\n  dispatching: true\n  dispatchingOnClusters: {clusterNames: [m1]}"),
		want: map[string]string{"spec.suspension.dispatchingOnClusters": "suspension-all-and-clusters"}, lacks: []string{"spec.suspension.dispatchingOnClusters"}},
	{name: "workloadAffinity passes through", in: pp("placement:\n  workloadAffinity:\n    affinity: {groupByLabelKey: app.example.com/group}"),
		has: map[string]string{"spec.placement.workloadAffinity.affinity.groupByLabelKey": "app.example.com/group"}},
	{name: "unknown fields", in: pp("placement:\n  clusterAffinity: {clusterNames: [m1], zones: [a]}\nspreadPolicy: even"),
		want:  map[string]string{"spec.placement.clusterAffinity.zones": "unknown-field", "spec.spreadPolicy": "unknown-field"},
		lacks: []string{"spec.placement.clusterAffinity.zones", "spec.spreadPolicy"}},
	{name: "Karmada's metadata", in: "apiVersion: policy.karmada.io/v1alpha1\nkind: ClusterPropagationPolicy\nmetadata:\n  name: p\n  uid: 1b1c\n  resourceVersion: \"7\"\n  finalizers: [karmada.io/propagation-policy-controller, example.com/keep]\n  labels: {clusterpropagationpolicy.karmada.io/permanent-id: x, team: a}\n  ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: c, uid: u}]\nspec:\n  resourceSelectors: [{apiVersion: v1, kind: Namespace}]",
		want: map[string]string{"metadata.finalizers": "karmada-metadata", "metadata.labels.clusterpropagationpolicy.karmada.io/permanent-id": "karmada-metadata", "metadata.ownerReferences": "karmada-metadata"},
		has:  map[string]string{"metadata.labels.team": "a", "metadata.finalizers[0]": "example.com/keep"}, lacks: []string{"metadata.uid", "metadata.resourceVersion", "metadata.ownerReferences"}},
	{name: "namespace of a cluster-scoped kind", in: "apiVersion: policy.karmada.io/v1alpha1\nkind: ClusterOverridePolicy\nmetadata: {name: p, namespace: shop}\nspec: {}",
		want: map[string]string{"metadata.namespace": "unknown-field"}, lacks: []string{"metadata.namespace"}},
	{name: "empty override rule", in: karmada("OverridePolicy", "overrideRules:\n- overriders: {}\n- overriders: {argsOverrider: [{containerName: c, operator: add, value: [--v]}]}"),
		want: map[string]string{"spec.overrideRules[0]": "empty-override-rule"}, has: map[string]string{"spec.overrideRules[0].overriders.argsOverrider[0].containerName": "c"}},
	{name: "rules beside deprecated overriders", in: karmada("OverridePolicy", "targetCluster: {clusterNames: [m1]}\noverrideRules:\n- overriders: {labelsOverrider: [{operator: add, value: {a: b}}]}"),
		want: map[string]string{"spec.overrideRules": "deprecated-overriders"}},
	{name: "override of the identity", in: karmada("OverridePolicy", "overrideRules:\n- overriders:\n    plaintext: [{path: /metadata/finalizers, operator: remove}]\n    imageOverrider: [{predicate: {path: /kind}, component: Tag, operator: replace, value: v1}]"),
		want: map[string]string{"spec.overrideRules[0].overriders.plaintext[0].path": "override-identity-path", "spec.overrideRules[0].overriders.imageOverrider[0].predicate.path": "override-identity-path"}},
	{name: "deprecated overriders alone pass", in: karmada("OverridePolicy", "targetCluster: {clusterNames: [m1]}\noverriders:\n  commandOverrider: [{containerName: c, operator: add, value: [run]}]"),
		has: map[string]string{"spec.overriders.commandOverrider[0].containerName": "c"}},
	{name: "Lua", in: "apiVersion: config.karmada.io/v1alpha1\nkind: ResourceInterpreterCustomization\nmetadata: {name: r}\nspec:\n  target: {apiVersion: example.com/v1, kind: Thing}\n  customizations:\n    retention: {luaScript: 'function Retain(d, o) return d end'}\n    statusAggregation: {luaScript: x}\n    dependencyInterpretation: {luaScript: y}\n    statusReflection: {luaScript: z}\n    replicaMagic: {luaScript: w}",
		want: map[string]string{"spec.customizations.retention.luaScript": "lua-to-cel", "spec.customizations.statusAggregation.luaScript": "lua-to-cel",
			"spec.customizations.dependencyInterpretation.luaScript": "lua-to-cel", "spec.customizations.statusReflection": "lua-status-reflection", "spec.customizations.replicaMagic": "unknown-field"},
		has: map[string]string{"metadata.annotations." + LuaAnnotationPrefix + "retention": "function Retain(d, o) return d end", "spec.customizations.dependencies.expression": ""}},
	{name: "Karmada's components", in: "apiVersion: config.karmada.io/v1alpha1\nkind: ResourceInterpreterCustomization\nmetadata: {name: r}\nspec:\n  target: {apiVersion: ray.io/v1, kind: RayCluster}\n  customizations:\n    componentResource: {luaScript: 'function GetComponents(o) return {} end'}",
		want: map[string]string{"spec.customizations.componentResource.luaScript": "lua-to-cel"},
		has:  map[string]string{"metadata.annotations." + LuaAnnotationPrefix + "componentResource": "function GetComponents(o) return {} end", "spec.customizations.components.expression": ""}},
	{name: "status reflection alone", in: "apiVersion: config.karmada.io/v1alpha1\nkind: ResourceInterpreterCustomization\nmetadata: {name: r}\nspec:\n  target: {apiVersion: example.com/v1, kind: Thing}\n  customizations:\n    statusReflection: {luaScript: z}",
		want: map[string]string{"spec.customizations.statusReflection": "lua-status-reflection", "spec.customizations": "nothing-to-customize"}},
	{name: "unsupported kind", in: "apiVersion: work.karmada.io/v1alpha2\nkind: ResourceBinding\nmetadata: {name: b, namespace: shop}\nspec: {}",
		want: map[string]string{"": "unsupported-kind"}},
	{name: "autoscaler of another version", in: "apiVersion: autoscaling.karmada.io/v1beta1\nkind: FederatedHPA\nmetadata: {name: h, namespace: shop}\nspec: {}",
		want: map[string]string{"": "unsupported-kind"}},
	{name: "FederatedHPA only changes apiVersion", in: fhpa("h", "minReplicas: 2\nmetrics:\n- type: Resource\n  resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}\nbehavior:\n  scaleDown: {stabilizationWindowSeconds: 60}"),
		has: map[string]string{"apiVersion": "autoscaling.shepherd.io/v1alpha1", "spec.metrics[0].resource.target.averageUtilization": "60",
			"spec.behavior.scaleDown.stabilizationWindowSeconds": "60", "spec.scaleTargetRef.name": "web"}},
	{name: "FederatedHPA status and server metadata", in: fhpa("h", "") + "status: {currentReplicas: 3, desiredReplicas: 4}\n",
		lacks: []string{"status"}},
	{name: "FederatedHPA unknown field", in: fhpa("h", "scaleToZero: true\nmetrics:\n- type: Resource\n  resource: {name: cpu, window: 30s, target: {type: Utilization, averageUtilization: 60}}"),
		want:  map[string]string{"spec.scaleToZero": "unknown-field", "spec.metrics[0].resource.window": "unknown-field"},
		lacks: []string{"spec.scaleToZero", "spec.metrics[0].resource.window"}, has: map[string]string{"spec.metrics[0].resource.name": "cpu"}},
	{name: "metric target type and the value set", in: fhpa("h", "metrics:\n"+
		"- type: Resource\n  resource: {name: memory, target: {type: Value, averageValue: 512Mi}}\n"+
		"- type: ContainerResource\n  containerResource: {name: cpu, container: app, target: {type: AverageValue, averageUtilization: 60}}\n"+
		"- type: Resource\n  resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}"),
		want: map[string]string{"spec.metrics[0].resource.target.type": "fhpa-target-type", "spec.metrics[1].containerResource.target.type": "fhpa-target-type"},
		has: map[string]string{"spec.metrics[0].resource.target.type": "AverageValue", "spec.metrics[0].resource.target.averageValue": "512Mi",
			"spec.metrics[1].containerResource.target.type": "Utilization", "spec.metrics[2].resource.target.type": "Utilization"}},
	{name: "utilization above 100", in: fhpa("h", "metrics:\n"+
		"- type: Resource\n  resource: {name: cpu, target: {type: Utilization, averageUtilization: 150}}\n"+
		"- type: ContainerResource\n  containerResource: {name: memory, container: app, target: {type: Utilization, averageUtilization: 101}}\n"+
		"- type: Resource\n  resource: {name: memory, target: {type: Utilization, averageUtilization: 100}}"),
		want: map[string]string{"spec.metrics[0].resource.target.averageUtilization": "fhpa-utilization-above-100",
			"spec.metrics[1].containerResource.target.averageUtilization": "fhpa-utilization-above-100"}},
	{name: "custom and external metrics", in: fhpa("h", "metrics:\n"+
		"- type: Pods\n  pods: {metric: {name: http_requests}, target: {type: AverageValue, averageValue: 700m}}\n"+
		"- type: Object\n  object: {describedObject: {apiVersion: networking.k8s.io/v1, kind: Ingress, name: main}, metric: {name: requests}, target: {type: Value, value: 10k}}\n"+
		"- type: External\n  external: {metric: {name: queue_depth}, target: {type: AverageValue, averageValue: 30}}\n"+
		"- type: Object\n  object: {describedObject: {apiVersion: v1, kind: Service, name: web}, metric: {name: requests}, target: {type: AverageValue, averageValue: 100}}\n"+
		"- type: Resource\n  resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}"),
		want: map[string]string{"spec.metrics[1].object.target": "fhpa-object-value", "spec.metrics[2]": "fhpa-metric-not-read"},
		has: map[string]string{"spec.metrics[0].pods.metric.name": "http_requests", "spec.metrics[1].object.target.value": "10k",
			"spec.metrics[2].external.metric.name": "queue_depth", "spec.metrics[3].object.target.averageValue": "100"}},
	{name: "two FederatedHPAs on one target", in: fhpa("b", "") + "---\n" + fhpa("a", ""),
		want: map[string]string{"spec.scaleTargetRef": "fhpa-one-per-target"}},
	{name: "CronFederatedHPA only changes apiVersion", in: cronFHPA("scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\nrules:\n" +
		"- {name: up, schedule: '0 8 * * 1-5', timeZone: Asia/Tokyo, targetReplicas: 5, successfulHistoryLimit: 5}\n- {name: down, schedule: '@daily', targetReplicas: 0, suspend: true}"),
		has: map[string]string{"apiVersion": "autoscaling.shepherd.io/v1alpha1", "spec.rules[0].timeZone": "Asia/Tokyo", "spec.rules[1].targetReplicas": "0"}},
	{name: "CronFederatedHPA of a Karmada FederatedHPA", in: cronFHPA("scaleTargetRef: {apiVersion: autoscaling.karmada.io/v1alpha1, kind: FederatedHPA, name: web}\nrules:\n- {name: up, schedule: '*/1 * * * *', targetMinReplicas: 2, targetMaxReplicas: 10}") +
		"status:\n  executionHistories: [{ruleName: up, nextExecutionTime: '2026-03-02T06:30:00Z'}]\n",
		want: map[string]string{"spec.scaleTargetRef.apiVersion": "cron-target-group"},
		has:  map[string]string{"spec.scaleTargetRef.apiVersion": "autoscaling.shepherd.io/v1alpha1", "spec.scaleTargetRef.kind": "FederatedHPA"}, lacks: []string{"status"}},
	{name: "Shepherd's CronFederatedHPA naming Karmada's group passes unchanged", in: strings.Replace(cronFHPA("scaleTargetRef: {apiVersion: autoscaling.karmada.io/v1alpha1, kind: FederatedHPA, name: web}\nrules:\n- {name: up, schedule: '@hourly', targetMaxReplicas: 10}"), "autoscaling.karmada.io", "autoscaling.shepherd.io", 1),
		has: map[string]string{"spec.scaleTargetRef.apiVersion": "autoscaling.karmada.io/v1alpha1"}},
	{name: "schedule with seconds", in: cronFHPA("scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\nrules:\n- {name: up, schedule: '0 */1 * * * *', targetReplicas: 5}"),
		want: map[string]string{"spec.rules[0].schedule": "cron-schedule"}},
	{name: "schedules that do not parse", in: cronFHPA("scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\nrules:\n" +
		"- {name: a, schedule: '@hourly', targetReplicas: 5}\n- {name: b, schedule: '@5minutes', targetReplicas: 5}\n" +
		"- {name: c, schedule: '0 0 L * *', targetReplicas: 5}\n- {name: d, schedule: 'CRON_TZ=UTC 0 8 * * *', targetReplicas: 5}\n- {name: e, schedule: '61 * * * *', targetReplicas: 5}"),
		want: map[string]string{"spec.rules[1].schedule": "cron-schedule", "spec.rules[2].schedule": "cron-schedule",
			"spec.rules[3].schedule": "cron-schedule", "spec.rules[4].schedule": "cron-schedule"}},
	{name: "time zone", in: cronFHPA("scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\nrules:\n- {name: up, schedule: '0 8 * * *', timeZone: Mars/Olympus_Mons, targetReplicas: 5}"),
		want: map[string]string{"spec.rules[0].timeZone": "cron-time-zone"}},
	{name: "refused by the hub", in: pp("placement:\n  clusterAffinity:\n    fieldSelector:\n      matchExpressions: [{key: region, operator: In}]"),
		want: map[string]string{"spec.placement.clusterAffinity.fieldSelector.matchExpressions[0]": "hub-refuses"}},
	{name: "duplicate", in: pp("") + "---\n" + pp("priority: 0"), want: map[string]string{"": "duplicate"}},
	{name: "wrong type", in: pp("priority: high"), want: map[string]string{"": "not-well-formed", "spec.priority": "priority-order"}},
	{name: "unreadable", in: "apiVersion: v1\nkind: [", want: map[string]string{"": "unreadable"}},
	{name: "taking over Karmada's objects", in: pp(""), opts: Options{TakeOverFromKarmada: true},
		want: map[string]string{"spec.applyStrategy": "take-over-from-karmada"},
		has:  map[string]string{"spec.applyStrategy.whenToTakeOver": "IfNoDiff", "spec.applyStrategy.takeOverFrom": "Karmada"}},
	{name: "taking over Karmada's objects drops Overwrite", in: karmada("ClusterPropagationPolicy", "resourceSelectors:\n- {apiVersion: v1, kind: Namespace, name: shop}\nconflictResolution: Overwrite"),
		opts: Options{TakeOverFromKarmada: true},
		want: map[string]string{"spec.applyStrategy": "take-over-from-karmada", "spec.conflictResolution": "take-over-overwrite", "metadata.namespace": "unknown-field"},
		has:  map[string]string{"spec.applyStrategy.takeOverFrom": "Karmada"}, lacks: []string{"spec.conflictResolution"}},
	{name: "taking over leaves overrides as they are", in: karmada("OverridePolicy", "resourceSelectors:\n- {apiVersion: apps/v1, kind: Deployment, name: web}\noverrideRules:\n- overriders:\n    labelsOverrider: [{operator: add, value: {a: b}}]"),
		opts: Options{TakeOverFromKarmada: true}, lacks: []string{"spec.applyStrategy"}},
}

func TestRules(t *testing.T) {
	for _, tc := range ruleCases {
		t.Run(tc.name, func(t *testing.T) {
			docs, errs := Read("in.yaml", strings.NewReader(tc.in))
			objs, report := ConvertWith(tc.opts, docs, errs...)
			got := map[string]string{}
			for _, e := range report.Entries {
				got[e.Field] = e.Rule
				if e.Action != rule(e.Rule).Action {
					t.Errorf("%s: action %s, rule %s says %s", e.Field, e.Action, e.Rule, rule(e.Rule).Action)
				}
			}
			if !equalMaps(got, tc.want) {
				t.Errorf("report %v\nwant %v", got, tc.want)
			}
			if len(tc.has)+len(tc.lacks) == 0 {
				return
			}
			if len(objs) != 1 {
				t.Fatalf("%d objects out, want 1", len(objs))
			}
			for path, want := range tc.has {
				v, ok := lookup(objs[0].Object, path)
				if !ok || (want != "" && v != want) {
					t.Errorf("%s = %q (found %v), want %q", path, v, ok, want)
				}
			}
			for _, path := range tc.lacks {
				if _, ok := lookup(objs[0].Object, path); ok {
					t.Errorf("%s is still in the output", path)
				}
			}
		})
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// lookup reads a path of the test's form; keys with dots are matched
// greedily against the map's keys.
func lookup(obj any, path string) (string, bool) {
	if path == "" {
		return toString(obj), true
	}
	if strings.HasPrefix(path, "[") {
		end := strings.Index(path, "]")
		var i int
		for _, c := range path[1:end] {
			i = i*10 + int(c-'0')
		}
		l, ok := obj.([]any)
		if !ok || i >= len(l) {
			return "", false
		}
		return lookup(l[i], strings.TrimPrefix(path[end+1:], "."))
	}
	m, ok := obj.(map[string]any)
	if !ok {
		return "", false
	}
	keys := sortedKeys(m)
	slices.SortFunc(keys, func(a, b string) int { return len(b) - len(a) })
	for _, k := range keys {
		if path == k {
			return toString(m[k]), true
		}
		if rest, ok := strings.CutPrefix(path, k); ok && (rest[0] == '.' || rest[0] == '[') {
			return lookup(m[k], strings.TrimPrefix(rest, "."))
		}
	}
	return "", false
}

func toString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case nil:
		return ""
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

// TestEveryRuleIsExercised keeps ruleCases complete.
func TestEveryRuleIsExercised(t *testing.T) {
	used := map[string]bool{}
	for _, tc := range ruleCases {
		for _, r := range tc.want {
			used[r] = true
		}
	}
	for _, r := range Rules {
		if !used[r.ID] {
			t.Errorf("rule %s has no case in ruleCases", r.ID)
		}
	}
}
