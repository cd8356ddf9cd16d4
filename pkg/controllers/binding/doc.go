// Package binding turns bindings into Works: one generic Reconciler per
// binding kind.
//
// For every active (Scheduled or Bound) target of a binding, the
// controller server-side applies a Work named names.WorkName in the
// cluster's execution namespace shepherd-es-<cluster> (created when
// missing), labelled with the cluster and the binding and holding the
// template (read from the detector's informer) without its status and
// hub-owned metadata; a Divided placement gets the cluster's share of the
// replicas written in, and a workload whose components the scheduler
// divided (spec.dividedComponents) the cluster's share of each component
// at the component's replicasPath, 0 for those it does not run. Works are written only when they differ from what
// is stored, and removed when their cluster is no longer an active target
// and no graceful eviction task (failover) keeps its old copy.
// The controller adds nothing else to Works: the execution controller puts
// its own finalizer on them and reports Applied in their status.
//
// Targets move from Scheduled to Bound once their Work is applied (a
// cluster picked again while its Work still exists is bound again without
// re-creating anything), and an Unscheduled target disappears once its
// Work is gone. The FullyApplied condition says whether every active
// target's Work is applied (FullyAppliedSuccess), some failed
// (FullyAppliedFailed, naming them) or some are still waiting (Pending).
//
// Bindings carry the finalizer FinalizerBinding: a deleted binding first
// deletes its Works and goes once they are gone.
//
// Events: SyncWorkSucceed and SyncWorkFailed. Metric:
// shepherd_binding_works_total{operation}.
package binding
