// Package serviceexport is the member side of multi-cluster Services: it
// reads a member's ServiceExports, the Services they export and those
// Services' EndpointSlices, and reports each valid export to the hub as an
// ExportedService in the member's execution namespace. The hub's verdict on
// an export (conflicts, readiness) comes back the same way and is written
// to the ServiceExport's conditions. It also completes, in the member, the
// ServiceImports the hub sends: their IPs are the cluster IPs of the
// derived Service the member received with them, and their status lists
// the exporting clusters.
//
// On the hub it serves Push members; in a Pull cluster's agent, its own
// member, writing only to its own execution namespace. decide.go is pure;
// reconciler.go does the I/O; informers.go watches members; setup.go wires
// it.
package serviceexport
