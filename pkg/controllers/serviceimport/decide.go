package serviceimport

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	mcv1alpha1 "github.com/shepherd-io/shepherd/api/multicluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/mcs"
)

// Labels on the Works this controller writes: they find a Service's Works
// in every member, and tell these Works from the ones bindings own.
const (
	LabelServiceNamespace = "multicluster.shepherd.io/service-namespace"
	LabelServiceName      = "multicluster.shepherd.io/service-name"
	// LabelMemberAPI marks the Works that carry the MCS API to a member.
	LabelMemberAPI = "multicluster.shepherd.io/member-api"
)

// member is a Cluster of the ClusterSet, as the plan needs it.
type member struct {
	Name string
	// Ready is the Cluster's Ready condition: the exports of a member that
	// is not Ready are left out of the import, so that clients elsewhere
	// stop being sent to it.
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
func planImport(namespace, name string, members []member, exports []*mcv1alpha1.ExportedService) (plan, error) {
	ready := map[string]bool{}
	known := map[string]bool{}
	for _, m := range members {
		known[m.Name], ready[m.Name] = true, m.Ready
	}
	p := plan{conditions: map[string][]metav1.Condition{}}
	var specs []mcv1alpha1.ExportedServiceSpec
	for _, es := range exports {
		c := es.Spec.Cluster
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
		specs = append(specs, es.Spec)
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
			Message: fmt.Sprintf("exported to the ClusterSet's %d members with the endpoints of %s", len(members), strings.Join(merged.Clusters, ", ")), ObservedGeneration: g}
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
