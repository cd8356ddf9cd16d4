package clusterstatus

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
)

// taintRule: a member whose Ready condition has not been True for `after`
// gets a taint of `effect` whose key says why (not ready or unreachable).
type taintRule struct {
	effect corev1.TaintEffect
	after  time.Duration
}

// managedKey reports whether a taint key is one this controller owns.
func managedKey(key string) bool {
	return key == clusterv1alpha1.TaintClusterNotReady || key == clusterv1alpha1.TaintClusterUnreachable
}

// wantedKey is the taint key that the Ready condition calls for, "" when
// none (Ready, or never probed).
func wantedKey(ready *metav1.Condition) string {
	switch {
	case ready == nil:
		return ""
	case ready.Status == metav1.ConditionFalse:
		return clusterv1alpha1.TaintClusterNotReady
	case ready.Status == metav1.ConditionUnknown:
		return clusterv1alpha1.TaintClusterUnreachable
	}
	return ""
}

// taintChange is what desiredTaints decided.
type taintChange struct {
	taints         []corev1.Taint
	added, removed []corev1.Taint
	// recheck, when positive, is when a pending taint falls due.
	recheck time.Duration
}

// desiredTaints computes the Cluster's taints from its current ones and its
// Ready condition, which has had its status since `since`. Taints with
// other keys (the user's) are kept in place and in order. For each rule:
//   - Ready (or not probed yet): the rule's taints go.
//   - not Ready for at least rule.after since `since`: the taint for the
//     current reason is added, replacing the one for the other reason. A
//     member already tainted for one reason switches keys at once (e.g.
//     NotReady then Unreachable): it has served its grace period already.
//   - otherwise nothing changes yet; recheck says when to look again.
//
// since and now are on one clock, the hub's. For a Push cluster since is
// the condition's lastTransitionTime, which the hub stamped and the API
// keeps, so a controller restart neither resets nor skips the grace (the
// API keeps that time to the second, so a taint may come up to a second
// early). For a Pull cluster the agent stamped it, on its own clock, so
// since is when the hub saw the transition (see readySince).
func desiredTaints(current []corev1.Taint, ready *metav1.Condition, since, now time.Time, rules []taintRule) taintChange {
	ch := taintChange{}
	want := wantedKey(ready)
	for _, t := range current {
		if !managedKey(t.Key) {
			ch.taints = append(ch.taints, t)
		}
	}
	for _, rule := range rules {
		var have []corev1.Taint
		for _, t := range current {
			if managedKey(t.Key) && t.Effect == rule.effect {
				have = append(have, t)
			}
		}
		keep, due := decide(have, want, since, now, rule)
		if keep != nil {
			ch.taints = append(ch.taints, *keep)
		}
		for _, t := range have {
			if keep == nil || t.Key != keep.Key {
				ch.removed = append(ch.removed, t)
			}
		}
		if keep != nil && !containsKey(have, keep.Key) {
			ch.added = append(ch.added, *keep)
		}
		if due > 0 && (ch.recheck == 0 || due < ch.recheck) {
			ch.recheck = due
		}
	}
	return ch
}

// decide returns the taint a rule keeps or adds (nil for none) and, when
// the taint is not due yet, how long until it is: rule.after from since.
func decide(have []corev1.Taint, want string, since, now time.Time, rule taintRule) (*corev1.Taint, time.Duration) {
	if want == "" {
		return nil, 0
	}
	for _, t := range have {
		if t.Key == want {
			return &t, 0
		}
	}
	if elapsed := now.Sub(since); len(have) == 0 && elapsed < rule.after {
		return nil, rule.after - elapsed
	}
	added := metav1.NewTime(now)
	return &corev1.Taint{Key: want, Effect: rule.effect, TimeAdded: &added}, 0
}

func containsKey(ts []corev1.Taint, key string) bool {
	for _, t := range ts {
		if t.Key == key {
			return true
		}
	}
	return false
}
