// Package interpreter is what Shepherd knows about resource kinds, in one
// place: where a kind keeps its replicas and pod template, how a member
// cluster's share of the replicas is written, which status fields add up
// on the hub, whether its status reports observedGeneration, how its health
// is judged, which objects it depends on, which fields member controllers
// own, and the short names the CLI accepts.
//
// Every controller, the scheduler's inputs and the CLI ask this package;
// adding a built-in kind means adding one entry to the table in kinds.go.
// The operations live one per file, as in Karmada's native resource
// interpreter:
//
//	replicas.go     GetReplicas: replicas and what one replica needs
//	revise.go       ReviseReplica: a cluster's share written into the object
//	aggregate.go    AggregateStatus: member statuses summed for the hub
//	generation.go   ObservesGeneration
//	health.go       InterpretHealth (the built-in health rules)
//	dependencies.go GetDependencies: ConfigMaps, Secrets, ServiceAccounts
//	                and PVCs a pod template refers to
//	retain.go       Retain: fields a member controller owns
//	aliases.go      kind names the CLI accepts
//
// A kind the table does not list has no replicas, no summed status, no
// dependencies and Unknown health: it is propagated whole.
package interpreter
