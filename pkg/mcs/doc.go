// Package mcs merges the exports of one Service from the members of a
// ClusterSet into what every member imports, as the Multi-Cluster Services
// API (sigs.k8s.io/mcs-api v1beta1) describes it. It is pure: it reads
// ExportedService specs and returns objects, and never talks to an API
// server, so the hub's controller and its tests share the same rules.
//
// # Merge (merge.go)
//
// The oldest export (by ExportedAt, ties by cluster name) decides every
// property of the ServiceImport: type, session affinity (and its config),
// internal traffic policy, traffic distribution, IP families, labels and
// annotations. Ports are the exception: the import carries the union of
// every export's ports, and the oldest export's definition wins a clash.
// Any export that disagrees makes the whole Service conflicted: every
// export of it gets Conflict=True with the reason of the first conflicting
// property, so each member's ServiceExport shows the problem, not only the
// newcomer's.
//
// # Render (render.go)
//
// Every member receives the same manifests for a Service:
//
//   - the ServiceImport, without IPs: each member fills them in from
//     its own derived Service, whose cluster IP is only known there;
//   - for ClusterSetIP, a selector-less derived Service (DerivedServiceName)
//     that gives the clusterset IP, and that kube-proxy routes to the
//     imported EndpointSlices;
//   - the EndpointSlices of every exporting cluster, regrouped so that a
//     Service with many source slices still yields few objects, and
//     stripped of fields that name things of the source cluster (nodes,
//     pods, topology hints).
//
// The total stays within one Work (MaxManifests), or Render says so.
package mcs
