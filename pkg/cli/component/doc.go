// Package component holds the commands of Shepherd's long-running
// components against a real hub: the controller manager and the agent of a
// Pull cluster. It is lean on purpose: cmd/shepherd-controller-manager and
// cmd/shepherd-agent are built from it alone, and must link neither the
// embedded control plane (kube-apiserver, etcd's server), nor the packages
// of k8s.io/kubernetes (kube-scheduler), nor kwok (TestComponentBinariesAreLean
// reads their dependency graphs). cmd/shepherd adds the same commands to its
// root, so `shepherd controller-manager` and `shepherd agent` are the same
// commands.
package component
