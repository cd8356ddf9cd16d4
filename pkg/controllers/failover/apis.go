package failover

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// apiDefiners is what failover asks the interpreter about a kind.
type apiDefiners interface {
	DefinesAPI(gk schema.GroupKind) bool
}

// taintEvictable says whether a NoExecute taint may evict the binding of
// res from a cluster. Not when res defines an API (a
// CustomResourceDefinition): the eviction would remove it from the member
// once the member answers again, and every object of its API with it,
// Shepherd's and everyone else's, while the workloads of that API fail
// over, or not, by their own policies. Application failover never applies
// to such a kind: it has no health to judge.
func taintEvictable(in apiDefiners, res workv1alpha1.ObjectReference) bool {
	gv, err := schema.ParseGroupVersion(res.APIVersion)
	if err != nil {
		return true
	}
	return !in.DefinesAPI(gv.WithKind(res.Kind).GroupKind())
}
