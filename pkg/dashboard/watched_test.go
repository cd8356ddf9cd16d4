package dashboard

import (
	"testing"

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
