// Package serviceimport is the hub side of multi-cluster Services. For each
// Service that members export (their ExportedServices, reported by the
// service-export controller or a Pull member's agent), it merges the
// exports (pkg/mcs), writes the verdict on each export into its status,
// and sends every member of the ClusterSet one Work holding the
// ServiceImport, its derived Service and the EndpointSlices of every
// exporting member. The execution controller (or a Pull member's agent)
// applies those Works like any other, under the same ownership rules.
//
// It also gives every member of the ClusterSet the APIs the MCS API needs
// there: the ServiceExport and ServiceImport CRDs, the About API's
// ClusterProperty CRD and the two ClusterProperties naming the cluster and
// the ClusterSet (memberapi.go).
//
// decide.go is pure; reconciler.go does the I/O; setup.go wires it.
package serviceimport
