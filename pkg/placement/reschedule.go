package placement

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// RescheduleServed reports whether the scheduler has served a reschedule
// requested at `at`: it scheduled b successfully in a later second, or in
// the same second and recorded a stamp not earlier than `at` as served
// (workv1alpha1.AnnotationRescheduleObserved). Both times are compared in whole seconds,
// the precision the API keeps. A failed cycle serves nothing: the request
// stays pending and is retried, Fresh, with back-off.
//
// Stamps only move forward, so serving a later stamp serves every earlier
// request too; the RescheduleTask controller uses this to tell when its
// own request was served.
func RescheduleServed(b workv1alpha1.BindingObject, at metav1.Time) bool {
	last := b.GetBindingStatus().LastScheduledTime
	if last == nil {
		return false
	}
	want, got := at.Truncate(time.Second), last.Truncate(time.Second)
	if !got.Equal(want) {
		return got.After(want)
	}
	observed, err := time.Parse(time.RFC3339, b.GetAnnotations()[workv1alpha1.AnnotationRescheduleObserved])
	return err == nil && !observed.Before(want)
}
