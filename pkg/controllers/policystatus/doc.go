// Package policystatus writes the status of PropagationPolicies and
// ClusterPropagationPolicies: how many templates each governs (and some of
// their names), the templates it ties for with other policies (same kind
// of policy, selector strength and priority, where only the names decide),
// and the cluster names its placement uses that no Cluster has.
//
// The detector records what it decided on each binding (spec.policyRef,
// and the tied policies in the binding's tied-policies annotation); this
// controller only reads bindings and Clusters. decide.go computes a status
// from them without I/O; reconciler.go reads and writes.
package policystatus
