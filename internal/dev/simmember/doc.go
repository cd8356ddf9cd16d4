// Package simmember runs simulated member clusters inside the current process,
// next to the hub, so that what Shepherd places on a member actually runs:
// Deployments become available, Jobs complete, Services get EndpointSlices,
// deleting a namespace removes its pods.
//
// Each member is real Kubernetes code except for its nodes:
//   - an embedded etcd and kube-apiserver (package controlplane, one per
//     member, each in its own data dir);
//   - the workload controllers of kube-controller-manager (deployment,
//     replicaset, statefulset, job, garbage collector, namespace,
//     serviceaccount) and its endpointslice controller, which gives a
//     Service with a selector the EndpointSlices that multi-cluster
//     Services export, all built directly from k8s.io/kubernetes;
//   - a kube-scheduler with the default profile, plus optional out-of-tree
//     plugins (Options.SchedulerPlugins);
//   - kwok (sigs.k8s.io/kwok) as a library in place of kubelets: it keeps
//     the member's fake nodes Ready and moves pods bound to them through
//     Running/Ready, Succeeded (Job pods) and deletion, with kwok's default
//     stages;
//   - optionally (Options.RayOperator), a simulated Ray operator in place
//     of KubeRay: the member serves RayClusters and gets, for each, its
//     head pod and its worker groups' pods, labelled and owned as KubeRay
//     makes them, for the scheduler and kwok to run; no Ray runs;
//   - metrics.k8s.io/v1beta1 served from simulated usage (package
//     simmetrics, an aggregated API of the member's API server) in place
//     of metrics-server: each running pod uses its requests times the
//     percent its sim.shepherd.io/cpu-utilization and
//     sim.shepherd.io/memory-utilization annotations set; and
//     custom.metrics.k8s.io/v1beta2 in place of a metrics adapter, each
//     pod's or object's values from its metric.sim.shepherd.io/NAME
//     annotations.
//
// A fleet of members is described by a FleetSpec (LoadFleet, DefaultFleet).
//
// # Lifecycle
//
// Start returns once the member's nodes are Ready. Cancelling Start's
// context (or Stop) stops the controllers, scheduler and kwok first and the
// control plane last; a member typically stops in about a second. Objects
// persist in the data dir: starting again on it brings the member back,
// recreating only nodes that are missing.
//
// # Process-global state (read before running several members)
//
// The upstream components assume one instance per process. What that means
// here:
//   - Metrics: controllers and the scheduler register into the global
//     legacy Prometheus registry, mostly guarded by sync.Once, so all
//     members report into the same series. The replicaset controller does
//     not guard its registration; the resulting (harmless) duplicate
//     registration error of every member after the first is filtered out of
//     its log.
//   - Feature gates are the process-wide defaults, shared with the hub.
//   - Logging: components take their logger from the context (the member's
//     Logger, info demoted by two levels); the few that log through klog's
//     global functions need logging.RedirectKlog.
//   - kwok has no way to stop its event broadcaster and its two delaying
//     queues: each Start leaves four idle (blocked, not spinning)
//     goroutines behind.
//   - kube-scheduler's cache debugger listens for SIGUSR2 (dumps the
//     scheduler cache); SIGINT/SIGTERM handling stays with the caller.
package simmember
