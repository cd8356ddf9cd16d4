// Package clusterstatus probes every member cluster periodically and
// records what it finds in the Cluster's status: the Ready condition, the
// Kubernetes version, the APIs the member serves and a summary of its
// nodes and resources, which the scheduler filters and scores on. A member
// that stays not ready or unreachable past a grace period is tainted, so
// the scheduler stops placing new work there; the taint goes when it
// recovers.
//
// # Node and pod summaries: informers, not periodic lists
//
// Summaries come from a per-member informer on nodes and pods, started on
// the first probe and stopped when the Cluster goes. Re-listing every pod
// of a large member every probe interval (say 50k pods, 100 pages of 500,
// every 10 s) loads the member's API server and etcd and the hub's network
// in proportion to the member's size, forever; an informer lists once and
// then receives only changes, so a probe costs no member request for the
// summary at all and the summary is at most one watch event stale. The
// cost is memory on the hub, which a transform keeps small: the cached
// pods and nodes keep only the fields the summary reads (a few hundred
// bytes per pod instead of several kilobytes).
package clusterstatus

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Defaults of Options.
const (
	DefaultProbeInterval        = 10 * time.Second
	DefaultProbeTimeout         = 5 * time.Second
	DefaultNotReadyGracePeriod  = 40 * time.Second
	DefaultNoExecuteGracePeriod = 5 * time.Minute
	DefaultProbeTimeRefresh     = time.Minute
	DefaultWorkers              = 8
	DefaultTokenRenewBefore     = 8 * time.Hour
	DefaultRightsCheckInterval  = 10 * time.Minute
)

// Options configure the Reconciler. Zero values take the defaults.
type Options struct {
	// ProbeInterval is how often each member is probed (default 10 s).
	ProbeInterval time.Duration
	// ProbeTimeout bounds the readiness probe and the wait for the
	// summary informers to sync (default 5 s).
	ProbeTimeout time.Duration
	// NotReadyGracePeriod is how long a member stays NotReady or
	// Unreachable before it gets a NoSchedule taint (default 40 s), so
	// that a blip does not move scheduling decisions.
	NotReadyGracePeriod time.Duration
	// NoExecuteGracePeriod is how long a member stays NotReady or
	// Unreachable before it also gets a NoExecute taint (default 5 min),
	// which makes cluster failover move the workloads that do not
	// tolerate it. Longer than NotReadyGracePeriod: evicting is more
	// drastic than not placing new work. Negative disables it.
	NoExecuteGracePeriod time.Duration
	// ProbeTimeRefresh is how often status.lastProbeTime is written when
	// nothing else changed (default 1 min): writing it on every probe of
	// every member would be a constant stream of hub writes. A probe
	// after a workload's report in a Work's status writes it at once, as
	// the scheduler's accounting of replicas in flight waits for it.
	ProbeTimeRefresh time.Duration
	// Workers is the number of members probed concurrently (default 8);
	// an unreachable member holds a worker for up to ProbeTimeout.
	Workers int
	// TokenRenewBefore is how long before its expiry a member's
	// ServiceAccount token (stored by `shepherd join`) is renewed
	// (default 8 h, a third of its 24 h lifetime).
	TokenRenewBefore time.Duration
	// RightsCheckInterval is how often a Ready member is asked whether the
	// hub's credentials hold the rights Works need (default 10 min); the
	// answer is the Cluster's Authorized condition.
	RightsCheckInterval time.Duration
}

func (o Options) withDefaults() Options {
	if o.ProbeInterval <= 0 {
		o.ProbeInterval = DefaultProbeInterval
	}
	if o.TokenRenewBefore <= 0 {
		o.TokenRenewBefore = DefaultTokenRenewBefore
	}
	if o.RightsCheckInterval <= 0 {
		o.RightsCheckInterval = DefaultRightsCheckInterval
	}
	if o.ProbeTimeout <= 0 {
		o.ProbeTimeout = DefaultProbeTimeout
	}
	if o.NotReadyGracePeriod <= 0 {
		o.NotReadyGracePeriod = DefaultNotReadyGracePeriod
	}
	if o.NoExecuteGracePeriod == 0 {
		o.NoExecuteGracePeriod = DefaultNoExecuteGracePeriod
	}
	if o.ProbeTimeRefresh <= 0 {
		o.ProbeTimeRefresh = DefaultProbeTimeRefresh
	}
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	return o
}

// taintRules are the taints the controller manages: NoSchedule after
// NotReadyGracePeriod and, for cluster failover, NoExecute after its own,
// longer NoExecuteGracePeriod (unless disabled).
func (o Options) taintRules() []taintRule {
	rules := []taintRule{{effect: corev1.TaintEffectNoSchedule, after: o.NotReadyGracePeriod}}
	if o.NoExecuteGracePeriod > 0 {
		rules = append(rules, taintRule{effect: corev1.TaintEffectNoExecute, after: o.NoExecuteGracePeriod})
	}
	return rules
}
