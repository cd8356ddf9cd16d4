// Package detector matches resource templates to propagation policies and
// keeps each matched template's binding (ResourceBinding or
// ClusterResourceBinding) in step with the template and its policy.
//
// # Which templates
//
// Any kind can be propagated. The detector watches the kinds policies name
// in their resource selectors, starting a watch the first time a policy
// names a kind (see kinds: a shared unstructured informer per kind, in the
// kind's preferred version, added to the running controller with Watch).
// Shepherd's own kinds and kinds describing the hub itself (Nodes, Events,
// Leases, EndpointSlices, ...) are never propagated, nor anything in the
// kube-* and shepherd-es-* namespaces (see Excluded).
//
// # Matching
//
// A PropagationPolicy selects templates of its own namespace only; a
// ClusterPropagationPolicy selects cluster-scoped templates and namespaced
// ones of any namespace. A matching PropagationPolicy beats any
// ClusterPropagationPolicy; among policies of a kind, a selector naming
// the template beats a label selector, which beats a selector naming the
// kind only; then the higher spec.priority wins, then the name sorting
// first. That decision is package policymatch's (Govern, which adds
// preemption), shared with the what-if of `shepherd plan` and the
// dashboard so that they foresee it exactly. Matching is re-evaluated
// whenever the template, a policy that may select it or its binding
// changes, so the best policy always governs.
//
// # Bindings
//
// A namespaced template gets a ResourceBinding in its namespace, also when
// a ClusterPropagationPolicy governs it; a cluster-scoped template gets a
// ClusterResourceBinding. Both are named names.BindingName(kind, name).
// The detector server-side applies only its own fields (policy labels,
// owner reference, spec.resource, policyRef, replicas, replicaRequirements,
// placement, failover, propagateDeps, schedulerName, and the binding
// controller's finalizer at creation) with field manager
// workv1alpha1.FieldManager, and writes nothing when they already hold:
// spec.clusters, the eviction fields and the status stay as their owners
// wrote them. A template edit that changes neither replicas nor placement
// only moves spec.resource.resourceVersion, which the scheduler ignores.
//
// The hub runs no garbage collector, so the owner reference deletes
// nothing: the detector deletes a binding itself when its template goes.
// The binding controller's finalizer then removes the Works, and with them
// the member copies (or releases them when the policy preserves
// resources on deletion).
//
// A template that no policy governs any longer (its policy was deleted,
// or changed and no longer selects it, and no other policy does) keeps
// its binding and its member copies, as in Karmada: the binding is marked
// unclaimed (condition Claimed=False, reason PolicyDeleted or
// PolicyNoLongerMatches, and a BindingUnclaimed event on the template).
// An unclaimed binding keeps its placement: the scheduler, failover and
// the descheduler leave its targets alone, while template edits still
// reach the clusters it is on. The next policy that selects the template
// claims the binding (Claimed=True, reason PolicyClaimed, a
// BindingClaimed event); deleting the template deletes it. A template no
// policy ever matched is left alone.
//
// Events: ApplyPolicySucceed, ApplyPolicyFailed, BindingUnclaimed,
// BindingClaimed and BindingNameConflict on templates; ResourceKindUnknown,
// ResourceKindNotPropagatable, SelectorNamespaceIgnored and
// InvalidSelector on policies. Metrics: shepherd_detector_bindings_total
// and shepherd_detector_watched_kinds.
package detector
