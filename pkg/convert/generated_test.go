package convert

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/shepherd-io/shepherd/config/crd/admit"
)

// This file holds the converter to its promise on policies written the
// way Karmada accepts them, at a scale no hand-written corpus reaches: a
// generator draws PropagationPolicies and ClusterPropagationPolicies from
// a fixed seed, each setting a random choice of the fields of Karmada's
// policy API with values Karmada admits, and every one must come out as a
// Shepherd object the hub admits, each field that was set either kept as
// written or named by the report.

// generatedPolicies is how many policies TestGeneratedKarmadaPolicies draws.
const generatedPolicies = 240

// karmadaPolicyFields are the fields of Karmada's propagation policy spec
// (dotted, lists without indexes) that the generator must set at least once
// over the run.
var karmadaPolicyFields = []string{
	"spec.resourceSelectors.apiVersion", "spec.resourceSelectors.kind", "spec.resourceSelectors.name",
	"spec.resourceSelectors.namespace", "spec.resourceSelectors.labelSelector.matchLabels",
	"spec.resourceSelectors.labelSelector.matchExpressions",
	"spec.association", "spec.propagateDeps",
	"spec.placement.clusterAffinity.clusterNames", "spec.placement.clusterAffinity.exclude",
	"spec.placement.clusterAffinity.labelSelector.matchLabels", "spec.placement.clusterAffinity.fieldSelector.matchExpressions",
	"spec.placement.clusterAffinities.affinityName", "spec.placement.clusterAffinities.clusterNames",
	"spec.placement.clusterAffinities.labelSelector.matchExpressions", "spec.placement.clusterAffinities.fieldSelector.matchExpressions",
	"spec.placement.clusterAffinities.overflowAffinities.affinityName", "spec.placement.clusterAffinities.overflowAffinities.clusterNames",
	"spec.placement.clusterTolerations.key", "spec.placement.clusterTolerations.operator", "spec.placement.clusterTolerations.value",
	"spec.placement.clusterTolerations.effect", "spec.placement.clusterTolerations.tolerationSeconds",
	"spec.placement.spreadConstraints.spreadByField", "spec.placement.spreadConstraints.spreadByLabel",
	"spec.placement.spreadConstraints.minGroups", "spec.placement.spreadConstraints.maxGroups",
	"spec.placement.replicaScheduling.replicaSchedulingType", "spec.placement.replicaScheduling.replicaDivisionPreference",
	"spec.placement.replicaScheduling.weightPreference.staticWeightList.targetCluster.clusterNames",
	"spec.placement.replicaScheduling.weightPreference.staticWeightList.targetCluster.labelSelector.matchLabels",
	"spec.placement.replicaScheduling.weightPreference.staticWeightList.weight",
	"spec.placement.replicaScheduling.weightPreference.dynamicWeight",
	"spec.placement.workloadAffinity.affinity.groupByLabelKey", "spec.placement.workloadAffinity.antiAffinity.groupByLabelKey",
	"spec.priority", "spec.preemption", "spec.dependentOverrides", "spec.schedulerName",
	"spec.failover.application.decisionConditions.tolerationSeconds", "spec.failover.application.purgeMode",
	"spec.failover.application.gracePeriodSeconds", "spec.failover.application.statePreservation.rules.aliasLabelName",
	"spec.failover.application.statePreservation.rules.jsonPath",
	"spec.failover.cluster.purgeMode", "spec.failover.cluster.statePreservation.rules.aliasLabelName",
	"spec.conflictResolution", "spec.activationPreference",
	"spec.suspension.dispatching", "spec.suspension.dispatchingOnClusters.clusterNames",
	"spec.preserveResourcesOnDeletion",
	"spec.schedulePriority.priorityClassSource", "spec.schedulePriority.priorityClassName",
}

// policyGen draws one policy. Every choice keeps to what Karmada's schema
// and webhooks admit: the combinations Karmada refuses (clusterAffinity
// beside clusterAffinities, spreadByField beside spreadByLabel, two
// constraints on one field, preemption Always with a selector naming no
// object, application failover without propagateDeps, ...) are never drawn.
type policyGen struct {
	r *rand.Rand
}

func (g policyGen) chance(percent int) bool { return g.r.IntN(100) < percent }

func (g policyGen) pick(values ...any) any { return values[g.r.IntN(len(values))] }

func (g policyGen) clusters() []any {
	all := []any{"member1", "member2", "member3", "edge-a", "edge-b"}
	g.r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	return all[:1+g.r.IntN(3)]
}

func (g policyGen) labelSelector() map[string]any {
	if g.chance(50) {
		return map[string]any{"matchLabels": map[string]any{"tier": g.pick("web", "db", "cache")}}
	}
	op := g.pick("In", "NotIn", "Exists", "DoesNotExist").(string)
	e := map[string]any{"key": g.pick("env", "example.com/team"), "operator": op}
	if op == "In" || op == "NotIn" {
		e["values"] = []any{g.pick("prod", "staging"), "qa"}
	}
	return map[string]any{"matchExpressions": []any{e}}
}

func (g policyGen) fieldSelector() map[string]any {
	var exprs []any
	for _, key := range []string{"provider", "region", "zone"} {
		if g.chance(50) || len(exprs) == 0 && key == "zone" {
			exprs = append(exprs, map[string]any{"key": key, "operator": g.pick("In", "NotIn"), "values": []any{g.pick("eu-west", "us-east", "aws", "z1")}})
		}
	}
	if g.chance(10) {
		return map[string]any{"matchExpressions": []any{}} // Karmada: every cluster passes
	}
	return map[string]any{"matchExpressions": exprs}
}

// affinity draws a cluster affinity with at least one way of picking.
func (g policyGen) affinity() map[string]any {
	a := map[string]any{}
	for len(a) == 0 {
		if g.chance(50) {
			a["clusterNames"] = g.clusters()
		}
		if g.chance(30) {
			a["labelSelector"] = g.labelSelector()
		}
		if g.chance(25) {
			a["fieldSelector"] = g.fieldSelector()
		}
		if g.chance(20) {
			a["exclude"] = []any{"edge-c"}
		}
	}
	return a
}

func (g policyGen) selectors(namespaced bool, ns string, named bool) []any {
	kinds := [][2]string{{"apps/v1", "Deployment"}, {"v1", "ConfigMap"}, {"v1", "Service"}, {"batch/v1", "Job"},
		{"apps/v1", "StatefulSet"}, {"multicluster.x-k8s.io/v1alpha1", "ServiceExport"}, {"multicluster.x-k8s.io/v1alpha1", "ServiceImport"}}
	if !namespaced {
		kinds = append(kinds, [2]string{"apiextensions.k8s.io/v1", "CustomResourceDefinition"}, [2]string{"v1", "Namespace"})
	}
	var out []any
	for i := range 1 + g.r.IntN(3) {
		k := kinds[g.r.IntN(len(kinds))]
		s := map[string]any{"apiVersion": k[0], "kind": k[1]}
		switch {
		case named || g.chance(50):
			s["name"] = fmt.Sprintf("obj-%d", i)
			if k[1] == "CustomResourceDefinition" {
				s["name"] = g.pick("serviceexports.multicluster.x-k8s.io", "serviceimports.multicluster.x-k8s.io", "widgets.example.com")
			}
			if g.chance(10) {
				s["labelSelector"] = g.labelSelector() // Karmada ignores it beside a name
			}
		case g.chance(60):
			s["labelSelector"] = g.labelSelector()
		}
		switch {
		case namespaced && g.chance(30):
			s["namespace"] = ns // Karmada's webhook refuses another namespace
		case !namespaced && k[1] != "Namespace" && k[1] != "CustomResourceDefinition" && g.chance(40):
			s["namespace"] = g.pick("shop", "payments")
		}
		out = append(out, s)
	}
	return out
}

func (g policyGen) tolerations() []any {
	var out []any
	for range 1 + g.r.IntN(2) {
		t := map[string]any{"key": g.pick("cluster.karmada.io/not-ready", "example.com/maintenance")}
		switch g.r.IntN(3) {
		case 0:
			t["operator"] = "Exists"
			if g.chance(15) {
				t["value"] = "ignored" // Karmada tolerates any value then
			}
		case 1:
			t["operator"] = "Equal"
			t["value"] = "true"
		default:
			t["value"] = "true" // operator unset means Equal
		}
		if g.chance(60) {
			t["effect"] = g.pick("NoSchedule", "NoExecute")
			if t["effect"] == "NoExecute" && g.chance(50) {
				t["tolerationSeconds"] = int64(g.pick(0, 30, 300).(int))
			}
		}
		out = append(out, t)
	}
	return out
}

func (g policyGen) spread() []any {
	var out []any
	if g.chance(30) {
		c := map[string]any{"spreadByLabel": g.pick("example.com/rack", "topology.example.com/site")}
		g.groups(c)
		return append(out, c)
	}
	fields := []string{"cluster"}
	for _, f := range []string{"region", "zone", "provider"} {
		if g.chance(25) {
			fields = append(fields, f)
		}
	}
	for _, f := range fields {
		c := map[string]any{"spreadByField": f}
		if f == "cluster" && g.chance(15) {
			delete(c, "spreadByField") // Karmada's webhook fills in cluster
		}
		g.groups(c)
		out = append(out, c)
	}
	return out
}

func (g policyGen) groups(c map[string]any) {
	min := g.r.IntN(3) // 0 is what Karmada's webhook turns into 1
	if g.chance(70) {
		c["minGroups"] = int64(min)
	}
	if g.chance(70) {
		max := min + g.r.IntN(3)
		if max == 0 && g.chance(50) {
			max = 1
		}
		c["maxGroups"] = int64(max)
	}
}

func (g policyGen) weights() map[string]any {
	var list []any
	for range 1 + g.r.IntN(3) {
		target := map[string]any{"clusterNames": g.clusters()}
		if g.chance(25) {
			target = map[string]any{"labelSelector": map[string]any{"matchLabels": map[string]any{"region": g.pick("eu", "us")}}}
		}
		list = append(list, map[string]any{"targetCluster": target, "weight": int64(1 + g.r.IntN(5))})
	}
	switch g.r.IntN(10) {
	case 0, 1, 2:
		return map[string]any{"dynamicWeight": "AvailableReplicas"}
	case 3:
		return map[string]any{"dynamicWeight": "AvailableReplicas", "staticWeightList": list} // Karmada ignores the list
	case 4:
		return map[string]any{} // Karmada weighs every cluster the same
	}
	return map[string]any{"staticWeightList": list}
}

// replicaScheduling draws a strategy and says whether Karmada allows
// overflow affinities with it (dynamic weights or Aggregated).
func (g policyGen) replicaScheduling() (map[string]any, bool) {
	rs := map[string]any{}
	if g.chance(40) {
		rs["replicaSchedulingType"] = "Duplicated"
		if g.chance(20) {
			rs["replicaDivisionPreference"] = g.pick("Weighted", "Aggregated") // ignored by Karmada
		}
		if g.chance(20) {
			rs["weightPreference"] = g.weights() // ignored by Karmada
		}
		return rs, false
	}
	if g.chance(70) {
		rs["replicaSchedulingType"] = "Divided" // the default otherwise
	}
	pref := g.pick("", "Weighted", "Aggregated").(string)
	if pref != "" {
		rs["replicaDivisionPreference"] = pref
	}
	if pref != "Aggregated" || g.chance(20) {
		if pref != "" || g.chance(70) {
			rs["weightPreference"] = g.weights()
		}
	}
	dynamic := false
	if wp, ok := rs["weightPreference"].(map[string]any); ok && wp["dynamicWeight"] != nil {
		dynamic = pref != "Aggregated"
	}
	return rs, pref == "Aggregated" || dynamic
}

func (g policyGen) statePreservation() map[string]any {
	var rules []any
	for i := range 1 + g.r.IntN(2) {
		rules = append(rules, map[string]any{
			"aliasLabelName": fmt.Sprintf("example.com/state-%d", i),
			"jsonPath":       g.pick("{ .jobStatus.jobID }", "{.status.checkpoint}"),
		})
	}
	return map[string]any{"rules": rules}
}

// policy draws policy number i.
func (g policyGen) policy(i int) map[string]any {
	namespaced := i%2 == 0
	kind, ns := "ClusterPropagationPolicy", ""
	md := map[string]any{"name": fmt.Sprintf("gen-%03d", i)}
	if namespaced {
		kind, ns = "PropagationPolicy", "shop"
		md["namespace"] = ns
	}
	if g.chance(10) {
		md["labels"] = map[string]any{"team": "checkout"}
	}
	spec := map[string]any{}
	preempt := g.chance(15)
	spec["resourceSelectors"] = g.selectors(namespaced, ns, preempt)
	if preempt {
		spec["preemption"] = "Always"
	} else if g.chance(10) {
		spec["preemption"] = "Never"
	}
	if g.chance(20) {
		spec["priority"] = int64(g.pick(-5, 0, 1, 10, 1000).(int))
	}
	deps := g.chance(35)
	if g.chance(10) {
		spec["association"] = true
		deps = false
	}

	pl := map[string]any{}
	overflowOK := false
	if g.chance(60) {
		rs, ok := g.replicaScheduling()
		pl["replicaScheduling"], overflowOK = rs, ok
	}
	switch g.r.IntN(3) {
	case 0:
		pl["clusterAffinity"] = g.affinity()
	case 1:
		var terms []any
		for j := range 1 + g.r.IntN(3) {
			term := g.affinity()
			term["affinityName"] = fmt.Sprintf("group-%d", j)
			if overflowOK && g.chance(50) {
				ov := g.affinity()
				ov["affinityName"] = fmt.Sprintf("overflow-%d", j)
				term["overflowAffinities"] = []any{ov}
			}
			terms = append(terms, term)
		}
		pl["clusterAffinities"] = terms
	}
	if g.chance(30) {
		pl["clusterTolerations"] = g.tolerations()
	}
	if g.chance(30) {
		pl["spreadConstraints"] = g.spread()
	}
	if g.chance(15) {
		wa := map[string]any{}
		if g.chance(70) {
			wa["affinity"] = map[string]any{"groupByLabelKey": "example.com/group"}
		}
		if len(wa) == 0 || g.chance(40) {
			wa["antiAffinity"] = map[string]any{"groupByLabelKey": "example.com/spread-group"}
		}
		pl["workloadAffinity"] = wa
	}
	if len(pl) > 0 || g.chance(50) {
		spec["placement"] = pl
	}

	if g.chance(30) {
		fo := map[string]any{}
		if g.chance(60) {
			app := map[string]any{"decisionConditions": map[string]any{}}
			if g.chance(70) {
				app["decisionConditions"] = map[string]any{"tolerationSeconds": int64(g.pick(0, 60, 300).(int))}
			}
			mode := g.pick("", "Directly", "Gracefully", "Never").(string)
			if mode != "" {
				app["purgeMode"] = mode
			}
			if (mode == "" || mode == "Gracefully") && g.chance(50) {
				app["gracePeriodSeconds"] = int64(g.pick(1, 120, 600, 172800).(int))
			}
			if g.chance(30) {
				app["statePreservation"] = g.statePreservation()
			}
			fo["application"] = app
			deps = true // Karmada refuses application failover without it
		}
		if len(fo) == 0 || g.chance(50) {
			c := map[string]any{}
			if mode := g.pick("", "Directly", "Gracefully").(string); mode != "" {
				c["purgeMode"] = mode
			}
			if g.chance(30) {
				c["statePreservation"] = g.statePreservation()
			}
			fo["cluster"] = c
		}
		spec["failover"] = fo
	}
	if deps {
		spec["propagateDeps"] = true
	}
	if g.chance(20) {
		spec["conflictResolution"] = g.pick("Abort", "Overwrite")
	}
	if g.chance(15) {
		spec["activationPreference"] = "Lazy"
	}
	if g.chance(15) {
		s := map[string]any{}
		if g.chance(50) {
			s["dispatching"] = g.pick(true, false)
		}
		if s["dispatching"] != true && g.chance(60) {
			s["dispatchingOnClusters"] = map[string]any{"clusterNames": g.clusters()}
		}
		spec["suspension"] = s
	}
	if g.chance(15) {
		spec["preserveResourcesOnDeletion"] = g.pick(true, false)
	}
	if g.chance(10) {
		spec["schedulerName"] = g.pick("default-scheduler", "edge-scheduler")
	}
	if namespaced && g.chance(10) {
		spec["dependentOverrides"] = []any{"web-overrides"}
	}
	if g.chance(10) {
		spec["schedulePriority"] = map[string]any{"priorityClassSource": "KubePriorityClass", "priorityClassName": "high"}
	}
	return map[string]any{"apiVersion": KarmadaPolicyGroup + "/" + version, "kind": kind, "metadata": md, "spec": spec}
}

// apiObject copies obj as the API server decodes it: integers as int64,
// which CEL needs.
func apiObject(obj map[string]any) map[string]any {
	data, err := json.Marshal(obj)
	if err != nil {
		panic(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	var out map[string]any
	if err := dec.Decode(&out); err != nil {
		panic(err)
	}
	var fix func(any) any
	fix = func(x any) any {
		switch x := x.(type) {
		case map[string]any:
			for k, e := range x {
				x[k] = fix(e)
			}
		case []any:
			for i, e := range x {
				x[i] = fix(e)
			}
		case json.Number:
			if n, err := x.Int64(); err == nil {
				return n
			}
			f, _ := x.Float64()
			return f
		}
		return x
	}
	return fix(out).(map[string]any)
}

// leaves lists the dotted paths (indexes as [i]) of every value set in x.
func leaves(path string, x any, out map[string]any) {
	switch x := x.(type) {
	case map[string]any:
		if len(x) == 0 {
			out[path] = x
		}
		for k, e := range x {
			leaves(join(path, k), e, out)
		}
	case []any:
		if len(x) == 0 {
			out[path] = x
		}
		for i, e := range x {
			leaves(fmt.Sprintf("%s[%d]", path, i), e, out)
		}
	default:
		out[path] = x
	}
}

// withoutIndexes turns spec.a[0].b into spec.a.b.
func withoutIndexes(path string) string {
	var b strings.Builder
	skip := false
	for _, r := range path {
		switch {
		case r == '[':
			skip = true
		case r == ']':
			skip = false
		case !skip:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// reported says whether an entry names path, a field around it or one
// inside it.
func reported(entries []Entry, path string) bool {
	return slices.ContainsFunc(entries, func(e Entry) bool {
		return e.Field != "" && (path == e.Field || strings.HasPrefix(path, e.Field+".") || strings.HasPrefix(path, e.Field+"[") ||
			strings.HasPrefix(e.Field, path+".") || strings.HasPrefix(e.Field, path+"["))
	})
}

// TestGeneratedKarmadaPolicies: every generated policy Karmada accepts is
// converted (never skipped), the hub admits the result, and each field
// that was set is in the output with the value written unless the report
// names it. Entries always name their field.
func TestGeneratedKarmadaPolicies(t *testing.T) {
	// The validators convert admits its output with (package admit, from
	// the CRDs built in): the test asks them again, so that a conversion
	// the converter let through unchecked would fail here.
	validators := map[string]*admit.Validator{}
	for _, kind := range []string{"PropagationPolicy", "ClusterPropagationPolicy"} {
		v, err := hubValidator(kind)
		if err != nil || v == nil {
			t.Fatalf("no validator of %s: %v", kind, err)
		}
		validators[kind] = v
	}
	g := policyGen{r: rand.New(rand.NewPCG(20260301, 7))}
	covered := map[string]int{}
	kinds := map[string]int{}
	asIs, differs := 0, 0
	rulesSeen := map[string]int{}
	for i := range generatedPolicies {
		in := g.policy(i)
		data, err := yaml.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		docs, errs := Read("gen.yaml", strings.NewReader(string(data)))
		if len(errs) > 0 || len(docs) != 1 {
			t.Fatalf("policy %d does not read back: %+v", i, errs)
		}
		written := map[string]any{}
		leaves("", apiObject(docs[0].Object), written)
		objs, report := Convert(docs, errs...)
		name := fmt.Sprintf("%s %d", in["kind"], i)
		if report.Incomplete() || len(objs) != 1 {
			t.Errorf("%s, which Karmada accepts, is not converted: %+v\n%s", name, report.Entries, data)
			continue
		}
		for _, e := range report.Entries {
			if e.Field == "" {
				t.Errorf("%s: an entry names no field: %+v", name, e)
			}
			rulesSeen[e.Rule]++
		}
		if errs := validators[in["kind"].(string)].Create(objs[0].Object); len(errs) > 0 {
			t.Errorf("%s: the hub refuses the conversion, which reports %v: %v\n%s", name, report.Entries, errs.ToAggregate(), data)
		}
		out := map[string]any{}
		leaves("", apiObject(objs[0].Object), out)
		for path, v := range written {
			covered[withoutIndexes(path)]++
			if path == "apiVersion" {
				continue
			}
			if got, ok := out[path]; (!ok || !reflect.DeepEqual(got, v)) && !reported(report.Entries, path) {
				t.Errorf("%s: %s was %v, is %v (present %v) without a report entry\n%s", name, path, v, got, ok, data)
			}
		}
		kinds[in["kind"].(string)]++
		if len(report.Entries) == 0 {
			asIs++
		} else {
			differs++
		}
	}
	for _, f := range karmadaPolicyFields {
		if !slices.ContainsFunc(slices.Collect(maps.Keys(covered)), func(p string) bool { return p == f || strings.HasPrefix(p, f+".") }) {
			t.Errorf("no generated policy sets %s", f)
		}
	}
	if kinds["PropagationPolicy"] < generatedPolicies/3 || kinds["ClusterPropagationPolicy"] < generatedPolicies/3 {
		t.Errorf("kinds drawn %v", kinds)
	}
	if asIs < generatedPolicies/10 || differs < generatedPolicies/10 {
		t.Errorf("%d converted as they are and %d with differences: the generator should draw plenty of both", asIs, differs)
	}
	t.Logf("%d policies: %d as they are, %d with differences; entries per rule %v", generatedPolicies, asIs, differs, rulesSeen)
}
