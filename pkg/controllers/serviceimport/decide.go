package serviceimport

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	mcv1alpha1 "github.com/shepherd-io/shepherd/api/multicluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/mcs"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// LabelMemberAPI marks the Works that carry the MCS API to a member (an
// import Work carries mcs.LabelServiceNamespace and mcs.LabelServiceName).
const LabelMemberAPI = "multicluster.shepherd.io/member-api"

// member is a Cluster of the ClusterSet, as the plan needs it.
type member struct {
	Name string
	// Ready is false once the Cluster has not been Ready for the grace
	// period (Options.EndpointGracePeriod): the exports of such a member
	// are left out of the import, so that clients elsewhere stop being
	// sent to it. A blip shorter than the grace period keeps its
	// endpoints.
	Ready bool
}

// plan is what one Service's exports make of the ClusterSet.
type plan struct {
	// manifests every member receives (nil: no import, every member's Work
	// goes).
	manifests []workv1alpha1.Manifest
	// conditions are the Ready and Conflict conditions of each export, by
	// the export's cluster.
	conditions map[string][]metav1.Condition
	// refused are the conditions of ExportedServices that name another
	// cluster than the one whose execution namespace holds them, by
	// namespace/name: a member reports only its own exports.
	refused map[string][]metav1.Condition
	// serving is how many clusters' endpoints the import carries, and
	// conflict the exports' Conflict reason ("" for none): the metrics.
	serving  int
	conflict string
}

// planImport merges the exports of the Service namespace/name from the
// members of the ClusterSet. Exports of clusters outside members are not
// imported and are told so (a cluster the ClusterSet's selector leaves
// out; one that left the fleet takes its reports with its execution
// namespace).
func planImport(namespace, name string, members []member, exports []*mcv1alpha1.ExportedService, maxEndpoints int) (plan, error) {
	ready := map[string]bool{}
	known := map[string]bool{}
	for _, m := range members {
		known[m.Name], ready[m.Name] = true, m.Ready
	}
	p := plan{conditions: map[string][]metav1.Condition{}, refused: map[string][]metav1.Condition{}}
	var specs []mcv1alpha1.ExportedServiceSpec
	capped := map[string]string{}
	for _, es := range exports {
		c := es.Spec.Cluster
		if owner, ok := names.ClusterOfExecutionNamespace(es.Namespace); !ok || owner != c {
			p.refused[es.Namespace+"/"+es.Name] = []metav1.Condition{{
				Type: mcv1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: string(mcsv1beta1.ServiceExportReasonFailed), ObservedGeneration: es.Generation,
				Message: fmt.Sprintf("this export names cluster %q but is stored in namespace %s, which is not that cluster's execution namespace: a member reports only its own exports; it is not imported", c, es.Namespace),
			}}
			continue
		}
		switch {
		case !known[c]:
			p.conditions[c] = []metav1.Condition{{
				Type: mcv1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: string(mcsv1beta1.ServiceExportReasonPending),
				Message: fmt.Sprintf("cluster %s is not a member of the ClusterSet (the controller manager's --clusterset-selector): its export is not imported", c), ObservedGeneration: es.Generation,
			}}
			continue
		case !ready[c]:
			p.conditions[c] = []metav1.Condition{{
				Type: mcv1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: string(mcsv1beta1.ServiceExportReasonPending),
				Message: fmt.Sprintf("cluster %s is not Ready: its endpoints are left out of the ServiceImport until it is", c), ObservedGeneration: es.Generation,
			}}
			continue
		}
		spec, n := capEndpoints(es.Spec, maxEndpoints)
		if n > maxEndpoints {
			capped[c] = fmt.Sprintf("; capped: cluster %s reported %d endpoints, the import carries its first %d (the controller manager's --mcs-max-endpoints-per-cluster)", c, n, maxEndpoints)
		}
		specs = append(specs, spec)
	}
	if len(specs) == 0 {
		return p, nil
	}
	merged := mcs.Merge(specs)
	p.serving = len(merged.Clusters)
	if v := merged.Verdicts[merged.Winner]; v.Conflict {
		p.conflict = string(v.Reason)
	}
	rendered, err := mcs.Render(namespace, name, merged, specs)
	generation := map[string]int64{}
	for _, es := range exports {
		generation[es.Spec.Cluster] = es.Generation
	}
	for _, s := range specs {
		g := generation[s.Cluster]
		readyCond := metav1.Condition{Type: mcv1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: string(mcsv1beta1.ServiceExportReasonExported),
			Message: fmt.Sprintf("exported to the ClusterSet's %d members with the endpoints of %s", len(members), strings.Join(merged.Clusters, ", ")) + capped[s.Cluster], ObservedGeneration: g}
		if err != nil {
			readyCond.Status, readyCond.Reason, readyCond.Message = metav1.ConditionFalse, string(mcsv1beta1.ServiceExportReasonFailed), err.Error()
		}
		p.conditions[s.Cluster] = []metav1.Condition{readyCond, merged.Verdicts[s.Cluster].Condition(g)}
	}
	if err != nil {
		return p, nil // reported on every export; no import is sent
	}
	for _, o := range rendered.Objects() {
		raw, err := json.Marshal(o)
		if err != nil {
			return plan{}, fmt.Errorf("encoding the import of %s/%s: %w", namespace, name, err)
		}
		p.manifests = append(p.manifests, workv1alpha1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}})
	}
	return p, nil
}

// withinGrace says whether a member counts as Ready for its exports: its
// Ready condition is True, or has not been since `since` for less than
// grace (left is the time until it loses them); since and now are on the
// hub's clock (see Reconciler.readySince). A member never seen Ready (no
// condition) has nothing to keep.
func withinGrace(ready *metav1.Condition, since time.Time, grace time.Duration, now time.Time) (ok bool, left time.Duration) {
	switch {
	case ready == nil:
		return false, 0
	case ready.Status == metav1.ConditionTrue:
		return true, 0
	}
	if left := since.Add(grace).Sub(now); left > 0 {
		return true, left
	}
	return false, 0
}

// capEndpoints keeps at most max endpoints of an export, in the order of
// its slices, so that one member cannot flood every other member's
// EndpointSlices; it returns the export and how many endpoints it had.
func capEndpoints(spec mcv1alpha1.ExportedServiceSpec, max int) (mcv1alpha1.ExportedServiceSpec, int) {
	n := 0
	for _, s := range spec.EndpointSlices {
		n += len(s.Endpoints)
	}
	if max <= 0 || n <= max {
		return spec, n
	}
	out := spec
	out.EndpointSlices = nil
	left := max
	for _, s := range spec.EndpointSlices {
		if left == 0 {
			break
		}
		k := min(left, len(s.Endpoints))
		s.Endpoints = s.Endpoints[:k]
		out.EndpointSlices = append(out.EndpointSlices, s)
		left -= k
	}
	return out, n
}

// importWorkName is the name of the Work carrying the import of the
// Service namespace/name (both DNS labels: the dots keep pairs apart).
func importWorkName(namespace, name string) string { return "mcs." + namespace + "." + name }

// sortedMembers sorts members by name, so every decision and every write
// goes in the same order.
func sortedMembers(ms []member) []member {
	slices.SortFunc(ms, func(a, b member) int { return strings.Compare(a.Name, b.Name) })
	return ms
}

func metaNow() metav1.Time { return metav1.Now() }
