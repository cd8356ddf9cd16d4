// Package interpreter is what Shepherd knows about resource kinds, in one
// place: where a kind keeps its replicas and pod template, which pod
// templates make up a workload that has several, how a member
// cluster's share of the replicas is written, what the hub allocated that
// a member allocates itself, which status fields add up on the hub, how
// many replicas a member runs and how many are ready, whether its status
// reports observedGeneration, how its health is judged, which objects it
// depends on, which pods it runs, which fields member controllers own,
// whose values are secret, and the short names the CLI accepts.
//
// The knowledge is one object, an Interpreter, built once per process
// (New) and handed to every controller that needs it; nothing else holds
// per-kind knowledge. It is layered (see Layered): HealthInterpreters over
// ResourceInterpreterCustomizations over the built-in kinds, the first
// two compiled here (CompileHealthInterpreter, CompileCustomization; CEL
// from package celrule) and taught at run time by the controllers of
// package controllers/customization. Adding a built-in kind means adding
// one entry to the table in kinds.go (for a kind made of several pod
// templates, to the table in components.go). The operations live one per
// file, as in Karmada's native resource interpreter:
//
//	interpreter.go  the Interpreter interface and its layers
//	replicas.go     Replicas: replicas and what one replica needs
//	components.go   Components: the pod templates of a workload made of
//	                several (a RayCluster's head and worker groups), and
//	                the table of the built-in kinds that are; their rules
//	                in components_rules.go and components_jvm.go
//	revise.go       ReviseReplicas: a cluster's share written into the object
//	prune.go        Prune, ReadyReplicas, StatusReplicas, DependencyKinds
//	aggregate.go    AggregateStatus: member statuses summed for the hub
//	generation.go   ObservesGeneration
//	sensitive.go    Sensitive: kinds whose diffs show hashes, not values
//	health.go       Health (the built-in rules under the run-time ones)
//	observe.go      Observe: status, health and generation for a Work
//	dependencies.go Dependencies: ConfigMaps, Secrets, ServiceAccounts
//	                and PVCs a pod template refers to
//	retain.go       Retain: fields a member controller owns
//	selector.go     PodSelector: the pods a workload runs, by its kind's
//	                rule (a selector, or its operator's label)
//	podcomponent.go PodComponents: which component of a workload of
//	                several pod templates each of its pods runs
//	aliases.go      kind names the CLI accepts
//	custom.go       Custom: what a customization says about a kind
//	customization.go CompileCustomization, CompileHealthInterpreter:
//	                ResourceInterpreterCustomizations and
//	                HealthInterpreters checked and compiled (for the
//	                controllers and the admission webhook alike)
//	healthrule.go   health rules in CEL over the member object
//
// A kind no layer knows has no replicas, no summed status, no
// dependencies and Unknown health: it is propagated whole.
package interpreter
