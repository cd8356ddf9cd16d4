// Package controlplane runs the shepherd hub's Kubernetes control plane —
// an embedded etcd and a real kube-apiserver — inside the current process.
//
// It backs both `shepherd up` and integration tests: there are no external
// binaries to download, and objects, CRDs (including CEL validation) and
// RBAC behave exactly as on a real cluster because the code is the real
// kube-apiserver (k8s.io/kubernetes/cmd/kube-apiserver/app), not a fake.
//
// # Lifecycle
//
// Start blocks until the apiserver reports ready and the requested CRDs are
// Established. Cancelling Start's context (or calling Stop) shuts down the
// apiserver first and etcd second; Done/Wait report completion, bounded by
// Options.ShutdownTimeout plus etcd's own close (a few seconds at most).
//
// # Persistence
//
// Everything lives under Options.DataDir: etcd/ (data), pki/ (CA, serving,
// admin and service-account keys, and the front-proxy CA and client
// certificate the aggregator proxies to aggregated APIs with; ECDSA P-256,
// reused across restarts) and kubeconfig (rewritten on each start since
// ports may change).
//
// # Process-global state (read before embedding)
//
// kube-apiserver was written as a main package and still leans on globals:
//   - Feature gates: the default feature gate and component registry are
//     process-wide. Start uses them unmodified (no --feature-gates).
//   - Metrics: apiserver and etcd register into the global Prometheus
//     registries, guarded by sync.Once, so repeated starts are fine but the
//     metrics of a stopped instance stay registered.
//   - Logging: the apiserver logs through klog. Start does not reconfigure
//     klog; call RedirectKlog once from main/TestMain to route it to logr.
//
// Sequential Start/stop cycles in one process are supported and tested.
// Two control planes running at the same time in one process also work
// (tested with separate data dirs), but they share the globals above, e.g.
// apiserver metrics from both are mixed in the same registry. One data dir
// can only be used by one running control plane at a time: DataDir/lock is
// flock'ed and a second Start fails fast instead of hanging inside etcd.
package controlplane
