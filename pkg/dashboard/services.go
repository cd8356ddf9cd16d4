package dashboard

import (
	mcv1alpha1 "github.com/shepherd-io/shepherd/api/multicluster/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/mcs"
)

// ServicesView is the Services page: the multi-cluster Services of the
// ClusterSet, one row per exported Service, as `shepherd get services`
// shows them (mcs.Summarize).
type ServicesView struct {
	// Rows are in namespace and name order; each row's serving clusters
	// in name order.
	Rows []mcs.Summary
	// Conflicts counts the rows whose exports disagree.
	Conflicts int
	// NotReady counts the serving clusters, over all rows, whose endpoints
	// the hub left out of the import.
	NotReady int
}

// BuildServices summarizes the snapshot's ExportedServices by Service.
func BuildServices(s *Snapshot) ServicesView {
	exports := make([]mcv1alpha1.ExportedService, len(s.ExportedServices))
	for i, es := range s.ExportedServices {
		// A shallow copy: Summarize reads the exports and sorts only its
		// own slice of them, so the cache's objects stay as they are.
		exports[i] = *es
	}
	v := ServicesView{Rows: mcs.Summarize(exports)}
	for _, r := range v.Rows {
		if r.Conflict != "" {
			v.Conflicts++
		}
		for _, c := range r.Serving {
			if !c.Ready {
				v.NotReady++
			}
		}
	}
	return v
}
