// Package dependencies propagates what a workload needs beside it
// (spec.propagateDeps): the ConfigMaps, Secrets, ServiceAccount and
// PersistentVolumeClaims its pod template refers to
// (Interpreter.Dependencies) follow it to every cluster it runs on.
//
// As in Karmada, each dependency has a binding of its own, named as the
// detector would name it, whose spec.requiredBy lists every dependent
// binding with the clusters it runs on; the binding controller gives such a
// binding Works in those clusters too (bindingutil.WorkTargets), and the
// execution controller applies them under the usual ownership rules, so an
// object Shepherd does not own in a member is never overwritten. When no
// policy selects the dependency, its binding is "attached" (no
// spec.policyRef): the scheduler leaves it alone, this package writes it,
// and deletes it when no dependent requires it any longer, which removes
// its objects from the members. When a policy selects the dependency too,
// its binding is the detector's and it runs on the union of its own
// targets and its dependents' clusters.
//
// Two controllers:
//   - "dependencies" reconciles dependent bindings: it writes their entry
//     into each dependency's binding and removes it from bindings they no
//     longer need (found through a cache index of requiredBy);
//   - "dependencies-attached" follows the dependency objects on the hub:
//     an edit reaches the attached binding's spec.resource (and so its
//     Works), and a deleted object takes its attached binding with it.
//
// A dependency missing on the hub is reported with the Warning event
// DependencyMissing on the dependent binding, and looked for again every
// 30 seconds. Only ResourceBindings have dependencies: no cluster-scoped
// kind Shepherd knows has a pod template.
package dependencies
