package serviceimport

import (
	"time"

	"k8s.io/apimachinery/pkg/labels"
)

// ControllerName names the controller in --controllers, logs, metrics and
// events.
const ControllerName = "service-import"

// DefaultClusterSet is Options.ClusterSet when unset.
const DefaultClusterSet = "shepherd"

// Defaults of Options.
const (
	DefaultEndpointGracePeriod    = 30 * time.Second
	DefaultMaxEndpointsPerCluster = 500
)

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
	// EndpointGracePeriod is how long a member that stopped being Ready
	// keeps its endpoints in the imports (default 30s, flag
	// --mcs-endpoint-grace-period): a short blip does not send every
	// client elsewhere; a longer outage withdraws them.
	EndpointGracePeriod time.Duration
	// MaxEndpointsPerCluster caps the endpoints one member contributes to
	// one Service's import (default 500, flag
	// --mcs-max-endpoints-per-cluster); the export's Ready condition says
	// when its endpoints were capped.
	MaxEndpointsPerCluster int
	// Workers reconcile that many Services at once (default 2).
	Workers int
}

func (o Options) withDefaults() Options {
	if o.ClusterSet == "" {
		o.ClusterSet = DefaultClusterSet
	}
	if o.EndpointGracePeriod <= 0 {
		o.EndpointGracePeriod = DefaultEndpointGracePeriod
	}
	if o.MaxEndpointsPerCluster <= 0 {
		o.MaxEndpointsPerCluster = DefaultMaxEndpointsPerCluster
	}
	if o.Members == nil {
		o.Members = labels.Everything()
	}
	if o.Workers <= 0 {
		o.Workers = 2
	}
	return o
}
