package reschedule

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	taskv1alpha1 "github.com/shepherd-io/shepherd/api/task/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
	"github.com/shepherd-io/shepherd/pkg/placement"
)

// maxReasonLen bounds a target's reason: it carries the scheduler's
// message, which names up to every cluster of the fleet.
const maxReasonLen = 1024

// bindingKey is a binding as written in TargetStatus.Binding:
// "namespace/name" for a ResourceBinding, "name" for a
// ClusterResourceBinding (a namespaced template always gets a
// ResourceBinding, so the namespace tells the kind).
func bindingKey(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// parseBindingKey returns the binding of a bindingKey, as an empty
// object of its kind with its namespace and name set.
func parseBindingKey(key string) workv1alpha1.BindingObject {
	ns, name, namespaced := strings.Cut(key, "/")
	if !namespaced {
		ns, name = "", key
	}
	b := bindingutil.NewForTemplate(namespaced)
	b.SetNamespace(ns)
	b.SetName(name)
	return b
}

// needsStamp reports whether b must be stamped for a request made at `at`:
// it carries no stamp, or an earlier one (re-created since, or stamped by
// an older task).
func needsStamp(b workv1alpha1.BindingObject, at metav1.Time) bool {
	t := b.GetBindingSpec().RescheduleTriggeredAt
	return t == nil || t.Before(&at)
}

// evaluate returns the phase of a target whose binding b (nil when gone)
// was stamped for a request made at `at`, and the reason when it failed.
//
// Successful: the scheduler served the request (placement.RescheduleServed)
// and the binding is Scheduled. Failed: the binding is gone or going, or
// the scheduler saw the binding as it is now (the Scheduled condition
// observed its current generation; the stamp is part of the spec, so it
// was seen) and could not schedule it.
func evaluate(b workv1alpha1.BindingObject, key string, at metav1.Time) (taskv1alpha1.TargetPhase, string) {
	if b == nil {
		return taskv1alpha1.TargetFailed, fmt.Sprintf("binding %s no longer exists", key)
	}
	if b.GetDeletionTimestamp() != nil {
		return taskv1alpha1.TargetFailed, fmt.Sprintf("binding %s is being deleted", key)
	}
	if needsStamp(b, at) {
		return taskv1alpha1.TargetPending, ""
	}
	cond := meta.FindStatusCondition(b.GetBindingStatus().Conditions, workv1alpha1.ConditionScheduled)
	switch {
	case cond == nil:
		return taskv1alpha1.TargetPending, ""
	case cond.Status == metav1.ConditionTrue && placement.RescheduleServed(b, at):
		return taskv1alpha1.TargetSuccessful, ""
	case cond.Status == metav1.ConditionFalse && cond.ObservedGeneration >= b.GetGeneration():
		return taskv1alpha1.TargetFailed, truncate(fmt.Sprintf("scheduling failed (%s): %s", cond.Reason, cond.Message))
	}
	return taskv1alpha1.TargetPending, ""
}

func truncate(s string) string {
	if len(s) <= maxReasonLen {
		return s
	}
	return s[:maxReasonLen-3] + "..."
}

// describeResource renders a target's resource for reasons and tables:
// "apps/v1 Deployment default/nginx".
func describeResource(r taskv1alpha1.ResourceSelector) string {
	return fmt.Sprintf("%s %s %s", r.APIVersion, r.Kind, bindingKey(r.Namespace, r.Name))
}
