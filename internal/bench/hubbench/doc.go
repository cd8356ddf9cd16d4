// Package hubbench measures what a write to the hub costs: first the floor,
// a minimal custom resource (no schema beyond "anything goes", no
// validation rules, a ~500-byte spec) created, merge-patched and
// status-patched; then Shepherd's own objects as the pipeline writes them
// (a ResourceBinding as the detector creates it, the scheduler's spec
// patch and status patch, a Work as the binding controller writes it, the
// execution controller's status patch). Each case reports the process CPU
// per write (the hub runs in this process, so the client's share is in
// every case alike and the ratio to the floor is the hub's extra cost),
// writes per second, and what is stored: bytes and managedFields entries.
//
// `shepherd bench hub` runs it.
package hubbench
