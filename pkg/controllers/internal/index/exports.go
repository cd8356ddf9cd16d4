package index

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	mcv1alpha1 "github.com/shepherd-io/shepherd/api/multicluster/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
)

// ExportsByService indexes ExportedServices by the Service they export,
// keyed "<namespace>/<name>": the service import controller merges every
// member's export of one Service.
const ExportsByService = "multicluster.shepherd.io/exports-by-service"

// SetupExportsByService registers ExportsByService, once.
func SetupExportsByService(d controllerdeps.Deps) error {
	return register(d, ExportsByService, &mcv1alpha1.ExportedService{}, ExportsByService, exportedService)
}

// ServiceKey is an ExportsByService key.
func ServiceKey(namespace, name string) string { return namespace + "/" + name }

func exportedService(o client.Object) []string {
	es := o.(*mcv1alpha1.ExportedService)
	return []string{ServiceKey(es.Spec.Namespace, es.Spec.Name)}
}
