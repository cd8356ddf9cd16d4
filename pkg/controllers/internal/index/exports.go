package index

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	mcv1alpha1 "github.com/shepherd-io/shepherd/api/multicluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/mcs"
)

// ExportsByService indexes ExportedServices by the Service they export,
// keyed "<namespace>/<name>": the service import controller merges every
// member's export of one Service.
const ExportsByService = "multicluster.shepherd.io/exports-by-service"

// SetupExportsByService registers ExportsByService, once.
func SetupExportsByService(d controllerdeps.Deps) error {
	return register(d, ExportsByService, &mcv1alpha1.ExportedService{}, ExportsByService, exportedService)
}

// ImportWorksByService indexes the import Works (one per member of the
// ClusterSet and exported Service) by the Service they import, keyed as
// ExportsByService: the service import controller finds a Service's Works
// without reading every Work of the hub.
const ImportWorksByService = "multicluster.shepherd.io/import-works-by-service"

// SetupImportWorksByService registers ImportWorksByService, once.
func SetupImportWorksByService(d controllerdeps.Deps) error {
	return register(d, ImportWorksByService, &workv1alpha1.Work{}, ImportWorksByService, importedService)
}

func importedService(o client.Object) []string {
	l := o.GetLabels()
	if l[mcs.LabelServiceName] == "" {
		return nil
	}
	return []string{ServiceKey(l[mcs.LabelServiceNamespace], l[mcs.LabelServiceName])}
}

// ServiceKey is an ExportsByService and ImportWorksByService key.
func ServiceKey(namespace, name string) string { return namespace + "/" + name }

func exportedService(o client.Object) []string {
	es := o.(*mcv1alpha1.ExportedService)
	return []string{ServiceKey(es.Spec.Namespace, es.Spec.Name)}
}
