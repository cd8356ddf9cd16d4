package dashboard

import (
	"time"

	eventsv1 "k8s.io/api/events/v1"

	autoscalingv1alpha1 "github.com/shepherd-io/shepherd/api/autoscaling/v1alpha1"
	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	mcv1alpha1 "github.com/shepherd-io/shepherd/api/multicluster/v1alpha1"
	taskv1alpha1 "github.com/shepherd-io/shepherd/api/task/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// Snapshot is what every page renders from: the hub's objects as the cache
// holds them at one moment. Its objects are shared with the cache and must
// not be modified.
type Snapshot struct {
	Now      time.Time
	Clusters []*clusterv1alpha1.Cluster
	Bindings []Binding
	Works    []*workv1alpha1.Work
	Tasks    []*taskv1alpha1.RescheduleTask
	Events   []*eventsv1.Event
	// ExportedServices are the members' exports of Services, in their
	// execution namespaces.
	ExportedServices []*mcv1alpha1.ExportedService
	// FederatedHPAs and CronFederatedHPAs are the autoscalers.
	FederatedHPAs     []*autoscalingv1alpha1.FederatedHPA
	CronFederatedHPAs []*autoscalingv1alpha1.CronFederatedHPA
}

// Binding is a ResourceBinding or a ClusterResourceBinding.
type Binding struct {
	// Cluster is true for a ClusterResourceBinding.
	Cluster bool
	Obj     workv1alpha1.BindingObject
}

// Ref identifies a binding in the dashboard's URLs.
type Ref struct {
	Cluster   bool
	Namespace string
	Name      string
}

// Ref of the binding.
func (b Binding) Ref() Ref {
	return Ref{Cluster: b.Cluster, Namespace: b.Obj.GetNamespace(), Name: b.Obj.GetName()}
}

// Kind is the binding's kind.
func (r Ref) Kind() string {
	if r.Cluster {
		return "ClusterResourceBinding"
	}
	return "ResourceBinding"
}

// Path is the workload page of the binding.
func (r Ref) Path() string {
	if r.Cluster {
		return "/workloads/cluster/" + r.Name
	}
	return "/workloads/ns/" + r.Namespace + "/" + r.Name
}

// String is namespace/name, or the name of a cluster-scoped binding.
func (r Ref) String() string {
	if r.Namespace == "" {
		return r.Name
	}
	return r.Namespace + "/" + r.Name
}

// Find returns the binding r names.
func (s *Snapshot) Find(r Ref) (Binding, bool) {
	for _, b := range s.Bindings {
		if b.Ref() == r {
			return b, true
		}
	}
	return Binding{}, false
}

// cluster returns the Cluster named name, or nil.
func (s *Snapshot) cluster(name string) *clusterv1alpha1.Cluster {
	for _, c := range s.Clusters {
		if c.Name == name {
			return c
		}
	}
	return nil
}
