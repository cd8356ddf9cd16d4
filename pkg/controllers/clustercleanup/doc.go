// Package clustercleanup removes what Shepherd propagated to a member when
// its Cluster is deleted (`shepherd unjoin`). Each Cluster carries the
// cleanup finalizer; when the Cluster is being deleted, the controller
// deletes every Work in the cluster's execution namespace. The execution
// controller's finalizer on each Work deletes the Work's objects from the
// member (or releases them when the policy preserves resources, and only
// objects the Work owns). Once no Work is left the finalizer is removed, so
// the Cluster goes last. The empty execution namespace is kept for a
// cluster joined again under the same name.
//
// The scheduler treats a Cluster being deleted as gone (its workloads move
// elsewhere) and the binding controller creates no Work for it, so nothing
// re-creates what is being cleaned up. A member that cannot be reached
// holds the Cluster until it is back, or until `shepherd unjoin --force`
// gives up on it and records what may remain.
package clustercleanup
