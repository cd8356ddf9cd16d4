package binding

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/names"
	"github.com/shepherd-io/shepherd/pkg/resourceselector"
)

// ReasonResourceRefused is the Warning event on a binding whose
// spec.resource is not what Shepherd would have written for it: the
// binding controller writes no Work for it. Bindings are Shepherd's: the
// detector and the dependencies controller create them and an admission
// policy keeps everyone else from changing their spec, but a Work would
// send whatever the binding names to its clusters, so the controller
// checks the reference itself before it reads the template.
const ReasonResourceRefused = "ResourceRefused"

// checkResource reports why a binding of kind bindingKind named
// namespace/name may not place res, nil when it may. A binding places only
// the template it is named for, in its own namespace (a
// ClusterResourceBinding: only a cluster-scoped template), identified by
// UID, and never a template the detector excludes (Shepherd's own kinds,
// the system namespaces, the hub's credentials in shepherd-system). Every
// rule compares stored fields only: nothing here trusts the manifest.
func checkResource(bindingKind, namespace, name string, res workv1alpha1.ObjectReference) error {
	gv, err := schema.ParseGroupVersion(res.APIVersion)
	if err != nil {
		return fmt.Errorf("spec.resource.apiVersion %q: %w", res.APIVersion, err)
	}
	if res.UID == "" {
		return fmt.Errorf("spec.resource.uid is empty: a binding names its template by UID, so that a template deleted and created again under the same name is not placed by the old binding")
	}
	switch bindingKind {
	case workv1alpha1.KindClusterResourceBinding:
		if res.Namespace != "" {
			return fmt.Errorf("spec.resource.namespace is %q: a ClusterResourceBinding places only a cluster-scoped template; namespaced templates are placed by ResourceBindings in their namespace", res.Namespace)
		}
	default:
		if res.Namespace != namespace {
			return fmt.Errorf("spec.resource.namespace is %q: a ResourceBinding places only a template of its own namespace %q", res.Namespace, namespace)
		}
	}
	if want := names.BindingName(res.Kind, res.Name); name != want {
		return fmt.Errorf("spec.resource names %s %s, whose binding is named %q, not %q: a binding places only the template it is named for", res.Kind, res.Name, want, name)
	}
	if resourceselector.Excluded(gv.WithKind(res.Kind).GroupKind(), res.Namespace, res.Name) {
		return fmt.Errorf("spec.resource names %s %s, which Shepherd never propagates (its own kinds, the system namespaces and shepherd-system stay on the hub)", res.Kind, strings.TrimPrefix(res.Namespace+"/"+res.Name, "/"))
	}
	return nil
}

// resourceKind is the group and kind of the binding's resource, as the
// Work's AnnotationResourceKind says it: the execution controller lets the
// Work write only that kind. It comes from the verified binding, never
// from the rendered manifest.
func resourceKind(res workv1alpha1.ObjectReference) string {
	gv, _ := schema.ParseGroupVersion(res.APIVersion)
	return schema.GroupKind{Group: gv.Group, Kind: res.Kind}.String()
}
