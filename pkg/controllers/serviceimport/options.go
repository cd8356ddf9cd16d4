package serviceimport

import "k8s.io/apimachinery/pkg/labels"

// ControllerName names the controller in --controllers, logs, metrics and
// events.
const ControllerName = "service-import"

// DefaultClusterSet is Options.ClusterSet when unset.
const DefaultClusterSet = "shepherd"

// Options configure the controller. Zero values take the defaults.
type Options struct {
	// ClusterSet is the ClusterSet's ID, written into every member as the
	// ClusterProperty clusterset.k8s.io (default "shepherd", flag
	// --clusterset).
	ClusterSet string
	// Members selects the Clusters of the ClusterSet by their labels (nil:
	// every Cluster, the whole fleet; flag --clusterset-selector). A
	// Cluster outside it receives no import and no MCS API, and its
	// exports are not imported.
	Members labels.Selector
	// Workers reconcile that many Services at once (default 2).
	Workers int
}

func (o Options) withDefaults() Options {
	if o.ClusterSet == "" {
		o.ClusterSet = DefaultClusterSet
	}
	if o.Members == nil {
		o.Members = labels.Everything()
	}
	if o.Workers <= 0 {
		o.Workers = 2
	}
	return o
}
