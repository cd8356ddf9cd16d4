package mcs

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"

	mcv1alpha1 "github.com/shepherd-io/shepherd/api/multicluster/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// Summary is one exported Service across the ClusterSet, as the CLI and
// the dashboard show it.
type Summary struct {
	Namespace, Name string
	// Type is the import's type (the oldest export's).
	Type string
	// Serving are the exporting clusters, by name.
	Serving []Serving
	// Conflict is the exports' Conflict reason, "" when they agree.
	Conflict string
	// ConflictMessage says which property differs and where.
	ConflictMessage string
}

// Serving is one exporting cluster of a Service.
type Serving struct {
	Cluster   string
	Endpoints int
	// Ready is the hub's verdict: false while the cluster's endpoints are
	// left out of the import (the cluster is not Ready, or the hub has not
	// merged its export yet).
	Ready bool
}

// Summarize groups ExportedServices by Service, in namespace and name
// order, and merges each group as the hub does. A report that names
// another cluster than the one whose execution namespace holds it is left
// out, as the hub leaves it out of the import.
func Summarize(exports []mcv1alpha1.ExportedService) []Summary {
	by := map[string][]mcv1alpha1.ExportedService{}
	var keys []string
	for _, es := range exports {
		if owner, ok := names.ClusterOfExecutionNamespace(es.Namespace); !ok || owner != es.Spec.Cluster {
			continue // not that cluster's report: the hub does not import it
		}
		k := es.Spec.Namespace + "/" + es.Spec.Name
		if _, ok := by[k]; !ok {
			keys = append(keys, k)
		}
		by[k] = append(by[k], es)
	}
	slices.Sort(keys)
	out := make([]Summary, 0, len(keys))
	for _, k := range keys {
		group := by[k]
		slices.SortFunc(group, func(a, b mcv1alpha1.ExportedService) int { return strings.Compare(a.Spec.Cluster, b.Spec.Cluster) })
		specs := make([]mcv1alpha1.ExportedServiceSpec, len(group))
		for i, es := range group {
			specs[i] = es.Spec
		}
		merged := Merge(specs)
		s := Summary{Namespace: group[0].Spec.Namespace, Name: group[0].Spec.Name, Type: string(merged.Import.Type)}
		for _, es := range group {
			n := 0
			for _, sl := range es.Spec.EndpointSlices {
				n += len(sl.Endpoints)
			}
			s.Serving = append(s.Serving, Serving{Cluster: es.Spec.Cluster, Endpoints: n,
				Ready: meta.IsStatusConditionTrue(es.Status.Conditions, mcv1alpha1.ConditionReady)})
		}
		if v := merged.Verdicts[merged.Winner]; v.Conflict {
			s.Conflict, s.ConflictMessage = string(v.Reason), v.Message
		}
		out = append(out, s)
	}
	return out
}
