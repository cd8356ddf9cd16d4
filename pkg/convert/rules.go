package convert

// Rule is one difference between Karmada and Shepherd that the converter
// acts on. The rules are the "Coming from Karmada" tables of docs/api.md,
// docs/overrides.md and docs/autoscaling.md as code: Row is the first cell
// of the row a rule implements, and TestRulesMatchTheDocs keeps the two in
// step.
type Rule struct {
	ID string
	// Doc is the file whose Karmada table has the row ("" when the rule is
	// documented in docs/migrating-from-karmada.md only).
	Doc string
	// Row is the first cell of that row.
	Row string
	// Action is what the rule does to the field.
	Action Action
}

const (
	apiDoc         = "docs/api.md"
	overridesDoc   = "docs/overrides.md"
	autoscalingDoc = "docs/autoscaling.md"
)

// Rows of docs/api.md's Karmada table that several rules share.
const (
	rowReplicaScheduling = "`placement.replicaScheduling.replicaSchedulingType`, `.replicaDivisionPreference`"
	rowSpread            = "`placement.spreadConstraints[].spreadByField`, `.spreadByLabel`, `.minGroups`, `.maxGroups`"
	rowDynamicWeight     = "`placement.replicaScheduling.weightPreference.dynamicWeight`"
	rowTolerations       = "`placement.clusterTolerations`"
	rowClusterPurge      = "`failover.cluster.purgeMode`"
	rowMCS               = "`ServiceExport`/`ServiceImport` of `multicluster.x-k8s.io/v1alpha1`; their CRDs propagated to members by the user with a ClusterPropagationPolicy"
)

// Rows of docs/autoscaling.md's Karmada table.
const (
	rowMetricTargetType = "FederatedHPA `metrics[].resource.target.type`, `metrics[].containerResource.target.type`"
	rowUtilization      = "FederatedHPA `metrics[].resource.target.averageUtilization`, `metrics[].containerResource.target.averageUtilization`"
	rowObjectValue      = "FederatedHPA `metrics[].object.target` of type `Value`"
	rowExternalMetric   = "FederatedHPA `metrics[]` of type `External`"
	rowFHPATarget       = "FederatedHPA `scaleTargetRef`"
	rowCronTarget       = "CronFederatedHPA `scaleTargetRef.apiVersion`"
	rowCronSchedule     = "CronFederatedHPA `rules[].schedule`"
	rowCronTimeZone     = "CronFederatedHPA `rules[].timeZone`"
)

// Rules lists every rule, in the order of docs/migrating-from-karmada.md.
var Rules = []Rule{
	{ID: "unknown-field", Action: Dropped},
	{ID: "karmada-metadata", Action: Dropped},
	{ID: "unsupported-kind", Action: Skipped},
	{ID: "duplicate", Action: Skipped},
	{ID: "not-well-formed", Action: Skipped},
	{ID: "unreadable", Action: Failed},
	{ID: "hub-refuses", Action: Refused},

	{ID: "selector-name-and-label", Doc: apiDoc, Row: "`resourceSelectors[].labelSelector`", Action: Dropped},
	{ID: "selector-other-namespace", Doc: apiDoc, Row: "`resourceSelectors[].namespace`", Action: Differs},
	{ID: "mcs-selector", Doc: apiDoc, Row: rowMCS, Action: Differs},
	{ID: "association", Doc: apiDoc, Row: "`association`", Action: Changed},
	{ID: "affinity-and-affinities", Doc: apiDoc, Row: "`placement.clusterAffinities[].affinityName` and its inline affinity", Action: Skipped},
	{ID: "field-selector-empty", Doc: apiDoc, Row: "`placement.clusterAffinity.fieldSelector`", Action: Dropped},
	{ID: "toleration-exists-value", Doc: apiDoc, Row: rowTolerations, Action: Dropped},
	{ID: "toleration-operator", Doc: apiDoc, Row: rowTolerations, Action: Skipped},
	{ID: "spread-default-field", Doc: apiDoc, Row: rowSpread, Action: Added},
	{ID: "spread-field-and-label", Doc: apiDoc, Row: rowSpread, Action: Skipped},
	{ID: "spread-max-groups", Doc: apiDoc, Row: rowSpread, Action: Differs},
	{ID: "spread-max-groups-zero", Doc: apiDoc, Row: rowSpread, Action: Dropped},
	{ID: "spread-min-groups-zero", Doc: apiDoc, Row: rowSpread, Action: Dropped},
	{ID: "spread-honoured", Doc: apiDoc, Row: rowSpread, Action: Differs},
	{ID: "division-preference-weighted", Doc: apiDoc, Row: rowReplicaScheduling, Action: Added},
	{ID: "division-preference-unused", Doc: apiDoc, Row: rowReplicaScheduling, Action: Dropped},
	{ID: "weight-preference-unused", Doc: apiDoc, Row: rowReplicaScheduling, Action: Dropped},
	{ID: "weight-preference-empty", Doc: apiDoc, Row: "`placement.replicaScheduling.weightPreference.staticWeightList`", Action: Dropped},
	{ID: "static-and-dynamic-weights", Doc: apiDoc, Row: rowDynamicWeight, Action: Dropped},
	{ID: "dynamic-weight", Doc: apiDoc, Row: rowDynamicWeight, Action: Differs},
	{ID: "priority-order", Doc: apiDoc, Row: "`priority`", Action: Differs},
	{ID: "state-preservation", Doc: apiDoc, Row: "`failover.application.statePreservation.rules[].aliasLabelName`, `.jsonPath`", Action: Differs},
	{ID: "grace-period-max", Doc: apiDoc, Row: "`failover.application.gracePeriodSeconds`", Action: Changed},
	{ID: "block-predecessor", Doc: apiDoc, Row: "`failover.application`: the cluster a workload failed over from", Action: Differs},
	{ID: "cluster-failover-purge-mode", Doc: apiDoc, Row: rowClusterPurge, Action: Added},
	{ID: "cluster-purge-never", Doc: apiDoc, Row: rowClusterPurge, Action: Skipped},
	{ID: "conflict-overwrite", Doc: apiDoc, Row: "`conflictResolution`", Action: Differs},
	{ID: "lazy-activation", Doc: apiDoc, Row: "`activationPreference`", Action: Differs},
	{ID: "suspension-all-and-clusters", Doc: apiDoc, Row: "`suspension.dispatching`", Action: Dropped},

	{ID: "empty-override-rule", Doc: overridesDoc, Row: "an override rule with no overriders", Action: Dropped},
	{ID: "deprecated-overriders", Doc: overridesDoc, Row: "`overrideRules` beside the deprecated `targetCluster` or `overriders`", Action: Skipped},
	{ID: "override-identity-path", Doc: overridesDoc, Row: "an override of `/kind`, `/apiVersion`, `/metadata/namespace`, owner references or finalizers", Action: Skipped},

	{ID: "fhpa-target-type", Doc: autoscalingDoc, Row: rowMetricTargetType, Action: Changed},
	{ID: "fhpa-utilization-above-100", Doc: autoscalingDoc, Row: rowUtilization, Action: Skipped},
	{ID: "fhpa-object-value", Doc: autoscalingDoc, Row: rowObjectValue, Action: Differs},
	{ID: "fhpa-metric-not-read", Doc: autoscalingDoc, Row: rowExternalMetric, Action: Differs},
	{ID: "fhpa-one-per-target", Doc: autoscalingDoc, Row: rowFHPATarget, Action: Skipped},
	{ID: "cron-target-group", Doc: autoscalingDoc, Row: rowCronTarget, Action: Changed},
	{ID: "cron-schedule", Doc: autoscalingDoc, Row: rowCronSchedule, Action: Skipped},
	{ID: "cron-time-zone", Doc: autoscalingDoc, Row: rowCronTimeZone, Action: Skipped},

	{ID: "lua-to-cel", Action: Manual},
	{ID: "lua-status-reflection", Action: Dropped},
	{ID: "nothing-to-customize", Action: Skipped},

	{ID: "take-over-from-karmada", Action: Added},
	{ID: "take-over-overwrite", Action: Dropped},
}

// rule returns the rule of an ID; an ID not in Rules is a bug the tests catch.
func rule(id string) Rule {
	for _, r := range Rules {
		if r.ID == id {
			return r
		}
	}
	panic("convert: no rule " + id)
}
