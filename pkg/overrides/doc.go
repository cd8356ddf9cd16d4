// Package overrides renders a resource template for one member cluster by
// applying the OverridePolicies and ClusterOverridePolicies that select it.
//
// The package is pure: it reads only its arguments and changes only the
// object it is given, so the controller that renders Works, a CLI preview
// and tests all get the same result from the same inputs, and the rules
// below can be tested without an API server.
//
// # Order
//
// Several policies, and several rules and overriders within a policy, may
// change the same field; the last change wins. Apply applies, in order:
//
//  1. Every ClusterOverridePolicy that selects the object, then every
//     OverridePolicy of the object's namespace that selects it. An
//     OverridePolicy of another namespace never applies, and none applies
//     to a cluster-scoped object. So a namespace's own policy has the last
//     word over a fleet-wide one.
//  2. Within each kind, policies from the least to the most specific
//     selection of the object: no resourceSelectors (selects everything),
//     then a selector naming only the kind, then a label selector that
//     matches, then a selector naming the object (a policy counts with its
//     most specific matching selector). Policies equally specific apply in
//     the order of their names. So the policy written for this very object
//     applies last and wins. (Karmada ranks "no selectors" and "kind only"
//     alike, leaving those to the name.)
//  3. Within a policy, its spec.overrideRules in order, each only when its
//     targetCluster matches the cluster (no targetCluster matches every
//     cluster; matching is pkg/clustermatch's, the scheduler's rules).
//     A policy written in Karmada's deprecated form (spec.targetCluster and
//     spec.overriders) is one rule, numbered 0.
//  4. Within a rule, the overriders by type in Karmada's order:
//     imageOverrider, commandOverrider, argsOverrider, labelsOverrider,
//     annotationsOverrider, fieldOverrider, plaintext; and the entries of
//     each list in order.
//
// Policies being deleted are skipped. Which policies select the object is
// decided on the object as given, before any override: a label added by
// one policy does not make another policy select the object (Karmada
// selects OverridePolicies after applying ClusterOverridePolicies).
//
// # Errors
//
// Apply stops at the first overrider that cannot apply and returns an
// *Error naming the policy, the rule and the overrider, e.g.
//
//	OverridePolicy default/images rule 0 plaintext[1]: replace /spec/replicaz: path not found
//
// The object is then partly rendered and must be discarded; whether the
// failure holds back only this cluster or more is the caller's decision.
// No overrider may change what the object is (apiVersion, kind) or which
// object it is (metadata's name, generateName, namespace, uid,
// resourceVersion, ownerReferences, finalizers): Shepherd identifies and
// owns member objects by them, and a tenant's template must not turn into
// an object of another kind or namespace (a ConfigMap into a
// ClusterRoleBinding). See policyv1alpha1.IdentityPaths.
package overrides
