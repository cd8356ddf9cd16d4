// Package cronfederatedhpa scales workloads at the times of cron
// schedules (Karmada's CronFederatedHPA): each rule of a CronFederatedHPA
// sets a workload template's spec.replicas (through its scale
// subresource) or a FederatedHPA's minReplicas and maxReplicas, at the
// minute its schedule names in its time zone.
//
// # What it decides (decide.go, pure)
//
// The latest scheduled time passed since the last one the rule handled,
// read from status.executionHistories[].lastScheduleTime (or the newest
// execution), runs once: a controller that was not running catches the
// missed times up as one late run, and a scheduled time recorded as
// handled is never run again, a restart included. A suspended rule's
// times are marked handled without running, so resuming it does not run
// what passed meanwhile. Times before the object was created never run.
//
// # What it writes (reconciler.go)
//
// The target's replicas or the FederatedHPA's bounds (merge patches, field
// manager shepherd-cronfederatedhpa); the rule's history in the status,
// newest first within successfulHistoryLimit and failedHistoryLimit;
// events ScheduledScale, FailedScheduledScale and InvalidRule.
package cronfederatedhpa
