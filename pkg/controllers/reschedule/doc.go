// Package reschedule runs RescheduleTasks: a person (or `shepherd
// reschedule`) asks the scheduler to recompute the placement of workloads
// whose replicas and placement did not change, e.g. to move replicas back
// to a cluster that recovered, and watches the outcome per workload.
//
// # Selecting
//
// On its first reconcile a task resolves its targets once, from the API
// server (not the cache, so a binding created just before the task is
// found): every binding a policy governs (labelled with the policy and
// naming it in spec.policyRef; an empty namespace is a
// ClusterPropagationPolicy, whose bindings may be ResourceBindings of any
// namespace or ClusterResourceBindings), and the binding of every named
// resource (names.BindingName of its kind and name; a namespaced resource's
// ResourceBinding, else a ClusterResourceBinding). The targets are written
// to status.targets as Pending, each binding once. A resource with no
// binding, a missing policy and a policy governing nothing are Failed
// targets with the reason, so a mistake is visible rather than a silent
// no-op.
//
// # Requesting
//
// Each target's binding gets spec.rescheduleTriggeredAt set to the task's
// creation time, never moving a later stamp back (an optimistic lock keeps
// two tasks from racing), and a binding re-created meanwhile is stamped
// again. The scheduler serves the stamp with a Fresh cycle and records
// it: see placement.RescheduleServed for how a stamp in the same second
// as the last scheduling is told apart (the API keeps whole seconds).
//
// # Outcome
//
// A target is Successful when the scheduler served the stamp (or a later
// one) and the binding is Scheduled=True; Failed when its binding is gone
// or when the scheduler, having seen the binding with the stamp (the
// Scheduled condition observed its current generation), reports
// Scheduled=False: the reason then carries the scheduler's. The scheduler
// keeps retrying such a binding with back-off; the task reports what
// happened to its request. FinishedAt is when a target left Pending. The
// Completed condition is True with reason AllSucceeded or SomeFailed once
// every target finished (status.completionTime), InProgress before.
// ttlSecondsAfterFinished deletes a finished task at its deadline.
//
// Events on the task: Rescheduling, TargetFailed, Completed and
// CompletedWithFailures. Metrics: shepherd_reschedule_tasks_total{result}
// and shepherd_reschedule_targets_total{phase}.
package reschedule
