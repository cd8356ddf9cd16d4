package dashboard

import (
	"maps"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
	"github.com/shepherd-io/shepherd/pkg/placement"
)

// Health of a workload as the workloads page filters it.
const (
	HealthHealthy       = "Healthy"
	HealthUnhealthy     = "Unhealthy"
	HealthProgressing   = "Progressing"
	HealthUnschedulable = "Unschedulable"
)

// Healths are the values of the health filter, in the order offered.
var Healths = []string{HealthHealthy, HealthProgressing, HealthUnhealthy, HealthUnschedulable}

// WorkloadRow is one template and its placement.
type WorkloadRow struct {
	Ref       Ref
	Kind      string
	Namespace string
	Name      string
	// Policy is namespace/name of a PropagationPolicy, the name of a
	// ClusterPropagationPolicy, or empty for a binding no policy governs.
	Policy string
	// Unclaimed: the policy was deleted or no longer selects the
	// template; the workload stays where it is (workv1alpha1.Unclaimed).
	Unclaimed bool
	Strategy  string
	Desired   int32
	Ready     int32
	// HasReady is false for kinds whose status reports no ready replicas.
	HasReady bool
	Health   string
	// Message says why an Unschedulable workload is not placed.
	Message string
	Targets []TargetBar
}

// TargetBar is one cluster's share of a workload.
type TargetBar struct {
	Cluster  string
	Replicas int32
	// Counted: the workload has replicas, so the bar shows a count; a
	// ConfigMap's or a Role's bar shows only its state.
	Counted bool
	// Share is Replicas over the workload's largest target, 0..1, for the
	// length of its bar.
	Share float64
	// State is the copy's state, as `shepherd get placements` shows it
	// (workv1alpha1.AggregatedStatusItem.State): Healthy or Unhealthy
	// where a health rule judged it, Applied where none did, the Work's
	// reason (Conflict, AppliedFailed, ...) where it is not applied, and
	// Unknown before anything was collected.
	State string
	// Drifted: the copy was edited in the member (its Work's Drifted
	// condition).
	Drifted bool
}

// StateClass is the style of a copy's state: healthy, applied, unhealthy
// (Unhealthy or any reason it is not applied) or unknown.
func StateClass(state string) string {
	switch state {
	case string(policyv1alpha1.ResourceHealthy):
		return "healthy"
	case workv1alpha1.CopyApplied:
		return "applied"
	case string(policyv1alpha1.ResourceUnknown), "":
		return "unknown"
	default:
		return "unhealthy"
	}
}

// Row builds a binding's row; kinds reads the copies' ready replicas.
func Row(kinds interpreter.Interpreter, b Binding) WorkloadRow {
	spec, status := b.Obj.GetBindingSpec(), b.Obj.GetBindingStatus()
	r := WorkloadRow{
		Ref: b.Ref(), Kind: spec.Resource.Kind, Namespace: spec.Resource.Namespace, Name: spec.Resource.Name,
		Strategy: placement.Describe(spec.Placement, spec.Replicas), Desired: spec.Replicas, Policy: policyName(spec),
	}
	r.Unclaimed = workv1alpha1.Unclaimed(status)
	state := map[string]string{}
	gk := schema.FromAPIVersionAndKind(spec.Resource.APIVersion, spec.Resource.Kind).GroupKind()
	drifted := map[string]bool{}
	for i := range status.AggregatedStatus {
		item := &status.AggregatedStatus[i]
		state[item.ClusterName] = item.State()
		drifted[item.ClusterName] = item.Drifted
		if n, ok := kinds.ReadyReplicas(gk, item.Status); ok {
			r.Ready += n
			r.HasReady = true
		}
	}
	var largest int32
	for _, t := range spec.Clusters {
		if t.State == workv1alpha1.TargetUnscheduled {
			continue
		}
		st := state[t.Name]
		if st == "" {
			st = string(policyv1alpha1.ResourceUnknown)
		}
		r.Targets = append(r.Targets, TargetBar{Cluster: t.Name, Replicas: t.Replicas, Counted: spec.Replicas > 0 || t.Replicas > 0, State: st, Drifted: drifted[t.Name]})
		largest = max(largest, t.Replicas)
	}
	for i := range r.Targets {
		r.Targets[i].Share = 1
		if largest > 0 {
			r.Targets[i].Share = float64(r.Targets[i].Replicas) / float64(largest)
		}
	}
	r.Health, r.Message = workloadHealth(status, spec.Replicas > 0, r.Targets)
	return r
}

// policyName is namespace/name of the binding's PropagationPolicy, the
// name of its ClusterPropagationPolicy, or empty when no policy governs it.
func policyName(spec *workv1alpha1.BindingSpec) string {
	p := spec.PolicyRef
	switch {
	case p == nil:
		return ""
	case p.Namespace != "":
		return p.Namespace + "/" + p.Name
	}
	return p.Name
}

// workloadHealth is Unschedulable when the scheduler could not place the
// workload, Unhealthy when a copy is (or is not applied: a conflict, a
// refusal), Healthy when every copy is, Progressing otherwise. A copy of
// a kind without replicas is healthy once applied (there is nothing more
// to wait for); one of a workload with replicas only when a health rule
// says so.
func workloadHealth(status *workv1alpha1.BindingStatus, replicated bool, targets []TargetBar) (string, string) {
	if c := meta.FindStatusCondition(status.Conditions, workv1alpha1.ConditionScheduled); c != nil && c.Status == metav1.ConditionFalse {
		return HealthUnschedulable, c.Message
	}
	if len(targets) == 0 {
		return HealthProgressing, ""
	}
	healthy := 0
	for _, t := range targets {
		switch StateClass(t.State) {
		case "unhealthy":
			return HealthUnhealthy, ""
		case "healthy":
			healthy++
		case "applied":
			if !replicated {
				healthy++
			}
		}
	}
	if healthy == len(targets) {
		return HealthHealthy, ""
	}
	return HealthProgressing, ""
}

// Filter selects rows on the workloads page. Empty fields match all.
type Filter struct {
	Namespace string
	Policy    string
	Cluster   string
	Health    string
	// Query matches a substring of kind, namespace or name, ignoring case.
	Query string
}

// Matches reports whether r passes every filter.
func (f Filter) Matches(r *WorkloadRow) bool {
	if f.Namespace != "" && r.Namespace != f.Namespace {
		return false
	}
	if f.Policy != "" && r.Policy != f.Policy {
		return false
	}
	if f.Health != "" && r.Health != f.Health {
		return false
	}
	if f.Cluster != "" && !r.targets(f.Cluster) {
		return false
	}
	if q := strings.ToLower(strings.TrimSpace(f.Query)); q != "" {
		hay := strings.ToLower(r.Kind + " " + r.Namespace + "/" + r.Name)
		if !strings.Contains(hay, q) {
			return false
		}
	}
	return true
}

func (r *WorkloadRow) targets(cluster string) bool {
	for _, t := range r.Targets {
		if t.Cluster == cluster {
			return true
		}
	}
	return false
}

// PageSize is the number of rows on one workloads page.
const PageSize = 100

// WorkloadsView is the workloads page.
type WorkloadsView struct {
	Filter Filter
	Rows   []WorkloadRow
	// Matched counts the rows passing the filter, Total all rows.
	Matched, Total int
	// Page is 1-based; Pages is at least 1.
	Page, Pages int
	// Options of the filters' drop-downs, sorted.
	Namespaces, Policies, Clusters []string
	// Counts of rows per health, for the summary.
	Counts map[string]int
}

// BuildWorkloads filters and pages the snapshot's workloads, sorted by
// namespace, name and kind; kinds reads the copies' ready replicas.
func BuildWorkloads(kinds interpreter.Interpreter, s *Snapshot, f Filter, page int) WorkloadsView {
	v := WorkloadsView{Filter: f, Total: len(s.Bindings), Counts: map[string]int{}}
	namespaces, policies := map[string]bool{}, map[string]bool{}
	matched := make([]WorkloadRow, 0, len(s.Bindings))
	for _, b := range s.Bindings {
		r := Row(kinds, b)
		if r.Namespace != "" {
			namespaces[r.Namespace] = true
		}
		if r.Policy != "" {
			policies[r.Policy] = true
		}
		v.Counts[r.Health]++
		if f.Matches(&r) {
			matched = append(matched, r)
		}
	}
	sort.Slice(matched, func(i, j int) bool { return lessRow(&matched[i], &matched[j]) })
	v.Matched = len(matched)
	v.Pages = max(1, (len(matched)+PageSize-1)/PageSize)
	v.Page = min(max(page, 1), v.Pages)
	lo := (v.Page - 1) * PageSize
	v.Rows = matched[lo:min(lo+PageSize, len(matched))]
	v.Namespaces, v.Policies = slices.Sorted(maps.Keys(namespaces)), slices.Sorted(maps.Keys(policies))
	for _, c := range s.Clusters {
		v.Clusters = append(v.Clusters, c.Name)
	}
	sort.Strings(v.Clusters)
	return v
}

func lessRow(a, b *WorkloadRow) bool {
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	if a.Name != b.Name {
		return a.Name < b.Name
	}
	if a.Kind != b.Kind {
		return a.Kind < b.Kind
	}
	return a.Ref.String() < b.Ref.String()
}
