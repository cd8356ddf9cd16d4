package dashboard

import (
	"reflect"
	"slices"
	"testing"

	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/shepherd-io/shepherd/api/autoscaling/v1alpha1"
	mcv1alpha1 "github.com/shepherd-io/shepherd/api/multicluster/v1alpha1"
)

// The Services page updates live: ExportedServices are watched like every
// other kind the pages read, so a change to one is pushed to open tabs.
func TestExportedServicesWatched(t *testing.T) {
	for _, obj := range watched() {
		if _, ok := obj.(*mcv1alpha1.ExportedService); ok {
			return
		}
	}
	t.Error("ExportedServices are not watched: the Services page would not update live")
}

// The Autoscalers page updates live, and its history is read from what the
// cache holds: FederatedHPAs, CronFederatedHPAs and events are watched.
func TestAutoscalersWatched(t *testing.T) {
	for _, want := range []client.Object{&autoscalingv1alpha1.FederatedHPA{}, &autoscalingv1alpha1.CronFederatedHPA{}, &eventsv1.Event{}} {
		if !slices.ContainsFunc(watched(), func(o client.Object) bool { return reflect.TypeOf(o) == reflect.TypeOf(want) }) {
			t.Errorf("%T is not watched: the Autoscalers page would not show it or not update live", want)
		}
	}
}
