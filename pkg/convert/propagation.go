package convert

import (
	"fmt"
	"reflect"
	"strings"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/jsonpointer"
)

// This file converts PropagationPolicy and ClusterPropagationPolicy, which
// share their spec: the rows of docs/api.md's "Coming from Karmada" table.
// Each rule keeps what Karmada did with the policy where Shepherd can say
// the same thing another way, and reports where it cannot.

func init() {
	register(policyv1alpha1.KindPropagationPolicy, kind{
		karmada: KarmadaPolicyGroup, shepherd: ShepherdPolicyGroup, namespaced: true,
		typ:    reflect.TypeFor[policyv1alpha1.PropagationPolicy](),
		decode: decoder[policyv1alpha1.PropagationPolicy](),
		rules:  propagationRules,
	})
	register(policyv1alpha1.KindClusterPropagationPolicy, kind{
		karmada: KarmadaPolicyGroup, shepherd: ShepherdPolicyGroup,
		typ:    reflect.TypeFor[policyv1alpha1.ClusterPropagationPolicy](),
		decode: decoder[policyv1alpha1.ClusterPropagationPolicy](),
		rules:  propagationRules,
	})
}

func decoder[T any]() func(map[string]any) error {
	return func(m map[string]any) error {
		_, err := decodeStrict[T](m)
		return err
	}
}

func propagationRules(o *object) {
	spec := nested(o.obj, "spec")
	if spec == nil {
		return
	}
	selectorRules(o, spec, o.kind == policyv1alpha1.KindPropagationPolicy)
	if spec["association"] == true {
		delete(spec, "association")
		spec["propagateDeps"] = true
		o.note("spec.association", "association",
			"Karmada deprecated association for propagateDeps, which Shepherd implements (the ConfigMaps, Secrets, ServiceAccount and PVCs a pod template refers to follow it): written as propagateDeps: true")
	}
	placementRules(o, nested(spec, "placement"))
	failoverRules(o, nested(spec, "failover"))
	if p, ok := spec["priority"]; ok && fmt.Sprint(p) != "0" {
		o.note("spec.priority", "priority-order",
			"Karmada compares priority first; Shepherd first prefers a selector naming the template, then a label selector, then one naming the kind only, and compares priority after that")
	}
	if str(spec, "conflictResolution") == "Overwrite" {
		o.note("spec.conflictResolution", "conflict-overwrite",
			"Overwrite adopts a member object only when its annotation names the very Work, never one another Work owns (Karmada trusts its managed-by label)")
	}
	if str(spec, "activationPreference") == "Lazy" {
		o.note("spec.activationPreference", "lazy-activation",
			"a policy change reaches a template when its metadata.generation changes (its resourceVersion for kinds without one), not on a label or annotation edit as in Karmada")
	}
	if s := nested(spec, "suspension"); s != nil && s["dispatching"] == true && s["dispatchingOnClusters"] != nil {
		delete(s, "dispatchingOnClusters")
		o.note("spec.suspension.dispatchingOnClusters", "suspension-all-and-clusters",
			"dispatching: true already holds every cluster, in Karmada too; Shepherd refuses both: dropped")
	}
}

// selectorRules applies to the resource selectors of every policy kind.
func selectorRules(o *object, spec map[string]any, ownNamespace bool) {
	for i, s := range list(spec, "resourceSelectors") {
		m, _ := s.(map[string]any)
		path := fmt.Sprintf("spec.resourceSelectors[%d]", i)
		if m == nil {
			continue
		}
		if str(m, "name") != "" && m["labelSelector"] != nil {
			delete(m, "labelSelector")
			o.note(path+".labelSelector", "selector-name-and-label",
				"Karmada ignores a labelSelector beside a name (the name picks the object); Shepherd refuses the pair: dropped")
		}
		if ns := str(m, "namespace"); ownNamespace && ns != "" && o.namespace() != "" && ns != o.namespace() {
			o.note(path+".namespace", "selector-other-namespace",
				"names namespace %q, not the policy's %q: it selects nothing, as in Karmada; Shepherd also reports the event SelectorNamespaceIgnored on the policy", ns, o.namespace())
		}
		if o.kind == policyv1alpha1.KindPropagationPolicy || o.kind == policyv1alpha1.KindClusterPropagationPolicy {
			mcsSelectorRules(o, m, path)
		}
	}
}

// mcsGroup is the group of the Multi-Cluster Services API.
const mcsGroup = "multicluster.x-k8s.io"

// mcsSelectorRules reports a selector of what Shepherd's Multi-Cluster
// Services write themselves: the ServiceImports, and the CRDs of
// ServiceExport and ServiceImport, which Karmada's users propagate.
func mcsSelectorRules(o *object, sel map[string]any, path string) {
	group, _, grouped := strings.Cut(str(sel, "apiVersion"), "/")
	if !grouped {
		group = "" // v1: the core group
	}
	switch {
	case group == mcsGroup && str(sel, "kind") == "ServiceImport":
		o.note(path, "mcs-selector",
			"selects ServiceImports: the hub serves none, so it selects nothing; Shepherd writes a ServiceImport of every exported Service into every member of the ClusterSet itself (Karmada propagated the one written on its control plane, with propagateDeps: true)")
	case group == "apiextensions.k8s.io" && str(sel, "kind") == "CustomResourceDefinition" &&
		(str(sel, "name") == "serviceexports."+mcsGroup || str(sel, "name") == "serviceimports."+mcsGroup):
		o.note(path, "mcs-selector",
			"selects the CRD %s, which Shepherd installs in every member when it joins: a second Work sending it conflicts with that one in every member; remove this selector", str(sel, "name"))
	}
}

func placementRules(o *object, pl map[string]any) {
	if pl == nil {
		return
	}
	if pl["clusterAffinity"] != nil && pl["clusterAffinities"] != nil {
		o.note("spec.placement.clusterAffinities", "affinity-and-affinities",
			"Karmada refuses clusterAffinity together with clusterAffinities as well: keep one")
	}
	affinityRules(o, pl)
	for i, t := range list(pl, "clusterTolerations") {
		m, _ := t.(map[string]any)
		path := fmt.Sprintf("spec.placement.clusterTolerations[%d]", i)
		switch op := str(m, "operator"); op {
		case "", "Equal":
		case "Exists":
			if str(m, "value") != "" {
				delete(m, "value")
				o.note(path+".value", "toleration-exists-value",
					"a toleration with operator Exists tolerates any value, in Karmada too; Shepherd refuses a value beside it: dropped")
			}
		default:
			o.note(path+".operator", "toleration-operator", "operator %q: Shepherd accepts Exists and Equal only", op)
		}
	}
	spreadRules(o, pl)
	replicaRules(o, nested(pl, "replicaScheduling"))
}

// affinityRules applies to every cluster affinity of a placement: the
// inline one, each term of clusterAffinities and its overflow groups, and
// each static weight's target.
func affinityRules(o *object, pl map[string]any) {
	const base = "spec.placement"
	emptyFieldSelector(o, nested(pl, "clusterAffinity"), base+".clusterAffinity")
	for i, t := range list(pl, "clusterAffinities") {
		term, _ := t.(map[string]any)
		path := fmt.Sprintf("%s.clusterAffinities[%d]", base, i)
		emptyFieldSelector(o, term, path)
		for j, ov := range list(term, "overflowAffinities") {
			m, _ := ov.(map[string]any)
			emptyFieldSelector(o, m, fmt.Sprintf("%s.overflowAffinities[%d]", path, j))
		}
	}
	for i, w := range list(nested(pl, "replicaScheduling", "weightPreference"), "staticWeightList") {
		m, _ := w.(map[string]any)
		emptyFieldSelector(o, nested(m, "targetCluster"), fmt.Sprintf("%s.replicaScheduling.weightPreference.staticWeightList[%d].targetCluster", base, i))
	}
}

// emptyFieldSelector drops a fieldSelector without expressions, which
// selects every cluster in Karmada and which Shepherd refuses.
func emptyFieldSelector(o *object, affinity map[string]any, path string) {
	fs, ok := affinity["fieldSelector"]
	if !ok {
		return
	}
	if m, _ := fs.(map[string]any); fs == nil || len(list(m, "matchExpressions")) == 0 {
		delete(affinity, "fieldSelector")
		o.note(path+".fieldSelector", "field-selector-empty",
			"no expressions: Karmada lets every cluster through, as Shepherd does without a fieldSelector; Shepherd refuses an empty one: dropped")
	}
}

func spreadRules(o *object, pl map[string]any) {
	for i, c := range list(pl, "spreadConstraints") {
		m, _ := c.(map[string]any)
		if m == nil {
			continue
		}
		path := fmt.Sprintf("spec.placement.spreadConstraints[%d]", i)
		field, label := str(m, "spreadByField"), str(m, "spreadByLabel")
		switch {
		case field == "" && label == "":
			m["spreadByField"] = "cluster"
			field = "cluster"
			o.note(path+".spreadByField", "spread-default-field",
				"Karmada fills in spreadByField: cluster when neither spreadByField nor spreadByLabel is set; Shepherd asks for one: written")
		case field != "" && label != "":
			o.note(path, "spread-field-and-label", "Karmada refuses spreadByField together with spreadByLabel as well: keep one")
			continue
		}
		if min, ok := m["minGroups"]; ok && fmt.Sprint(min) == "0" {
			delete(m, "minGroups")
			o.note(path+".minGroups", "spread-min-groups-zero",
				"0: Karmada's webhook writes 1 in its place; Shepherd refuses 0 and reads unset as 1: dropped")
		}
		max, hasMax := m["maxGroups"]
		switch {
		case !hasMax:
			o.note(path+".maxGroups", "spread-max-groups",
				"unset: Karmada takes at most maxGroups groups and has no default for it; Shepherd reads unset as no upper bound")
		case fmt.Sprint(max) == "0":
			delete(m, "maxGroups")
			o.note(path+".maxGroups", "spread-max-groups-zero",
				"0: Karmada takes at most maxGroups groups; Shepherd refuses 0 and reads unset as no upper bound: dropped")
		}
		if label != "" || (field != "cluster" && field != "region") {
			o.note(path, "spread-honoured",
				"Karmada's cluster selection honours spreading by cluster and region only and ignores this constraint; Shepherd honours it, so the clusters chosen can differ")
		}
	}
}

func replicaRules(o *object, rs map[string]any) {
	if rs == nil {
		return
	}
	const path = "spec.placement.replicaScheduling"
	typ := str(rs, "replicaSchedulingType")
	if typ == "" {
		typ = "Divided" // the default of both APIs
	}
	pref := str(rs, "replicaDivisionPreference")
	_, hasWeights := rs["weightPreference"]
	switch typ {
	case "Duplicated":
		if pref != "" {
			delete(rs, "replicaDivisionPreference")
			o.note(path+".replicaDivisionPreference", "division-preference-unused",
				"Karmada ignores replicaDivisionPreference when replicas are Duplicated; Shepherd refuses it: dropped")
		}
		if hasWeights {
			delete(rs, "weightPreference")
			o.note(path+".weightPreference", "weight-preference-unused",
				"Karmada ignores weightPreference when replicas are Duplicated; Shepherd refuses it: dropped, every cluster runs all replicas as before")
		}
		return
	case "Divided":
		if pref == "" && hasWeights {
			rs["replicaDivisionPreference"] = "Weighted"
			pref = "Weighted"
			o.note(path+".replicaDivisionPreference", "division-preference-weighted",
				"Karmada's webhook sets Weighted when Divided has no preference; Shepherd means the same but asks for it beside weightPreference: written")
		}
		if pref == "Aggregated" && hasWeights {
			delete(rs, "weightPreference")
			o.note(path+".weightPreference", "weight-preference-unused",
				"Karmada ignores weightPreference with Aggregated (it packs replicas into as few clusters as fit); Shepherd refuses it: dropped, Shepherd aggregates the same way")
		}
	}
	weightRules(o, rs)
}

func weightRules(o *object, rs map[string]any) {
	const path = "spec.placement.replicaScheduling.weightPreference"
	wp := nested(rs, "weightPreference")
	if wp == nil {
		return
	}
	_, hasStatic := wp["staticWeightList"]
	static, dynamic := list(wp, "staticWeightList"), str(wp, "dynamicWeight")
	switch {
	case dynamic != "" && hasStatic:
		delete(wp, "staticWeightList")
		o.note(path+".staticWeightList", "static-and-dynamic-weights",
			"Karmada divides by dynamicWeight and ignores staticWeightList beside it; Shepherd refuses the pair: the list is dropped")
	case dynamic == "" && len(static) == 0:
		delete(rs, "weightPreference")
		o.note(path, "weight-preference-empty",
			"no weights: Karmada weighs every cluster the same, as Shepherd does without weightPreference: dropped")
		return
	}
	if dynamic != "" {
		o.note(path+".dynamicWeight", "dynamic-weight",
			"Karmada divides over every feasible cluster by available replicas; Shepherd takes clusters best first until they fit, then divides by free room (add a cluster spread constraint with minGroups to spread wider)")
	}
}

// maxGracePeriodSeconds is the most failover.application.gracePeriodSeconds
// Shepherd accepts.
const maxGracePeriodSeconds = 86400

func failoverRules(o *object, fo map[string]any) {
	if fo == nil {
		return
	}
	if a := nested(fo, "application"); a != nil {
		if a["statePreservation"] != nil {
			o.note("spec.failover.application.statePreservation", "state-preservation",
				"a rule that reads nothing does not hold the eviction back (Karmada waits for every rule to read a value): Shepherd evicts and reports the event StateNotPreserved")
		}
		if g, ok := jsonpointer.Integer(a["gracePeriodSeconds"]); ok && g > maxGracePeriodSeconds {
			a["gracePeriodSeconds"] = int64(maxGracePeriodSeconds)
			o.note("spec.failover.application.gracePeriodSeconds", "grace-period-max",
				"%d: Karmada has no upper bound; Shepherd's is %d (a day), after which the old copy goes even though the new ones are not healthy: written as %d", g, maxGracePeriodSeconds, maxGracePeriodSeconds)
		}
		if _, set := a["blockPredecessorSeconds"]; !set {
			o.note("spec.failover.application", "block-predecessor",
				"Shepherd keeps the cluster a workload failed over from out of its placement for blockPredecessorSeconds, 600 when unset; Karmada's scheduler skips that cluster only while the eviction runs: set blockPredecessorSeconds to choose the window")
		}
	}
	c := nested(fo, "cluster")
	if c == nil {
		return
	}
	switch str(c, "purgeMode") {
	case "":
		c["purgeMode"] = "Gracefully"
		o.note("spec.failover.cluster.purgeMode", "cluster-failover-purge-mode",
			"unset: Karmada's default is Gracefully, Shepherd's Immediately: Gracefully written, so that the workload moves as before")
	case "Never":
		o.note("spec.failover.cluster.purgeMode", "cluster-purge-never", "Karmada refuses Never for cluster failover as well")
	}
	if c["statePreservation"] != nil {
		o.note("spec.failover.cluster.statePreservation", "state-preservation",
			"a rule that reads nothing does not hold the eviction back (Karmada waits for every rule to read a value): Shepherd evicts and reports the event StateNotPreserved")
	}
}
