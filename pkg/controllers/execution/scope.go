package execution

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// A Work writes only what its binding names. The binding controller
// renders a Work's manifest from the binding's resource and refuses a
// rendering that is another object (see the override checks); the
// execution controller checks again, in the member's terms, before it
// writes anything: a ResourceBinding's Work may write only namespaced
// objects, in the binding's namespace, a ClusterResourceBinding's only
// cluster-scoped objects, and any Work only objects of its binding's
// resource kind. So whatever a tenant whose hub rights end at a
// namespace writes (policy, override, dependency), nothing outside that
// namespace changes in any member.

// ReasonOutOfScope is the Applied condition's reason (and the Warning
// event's) when a Work's manifest is outside what its binding names:
// nothing of the Work is applied or deleted.
const ReasonOutOfScope = "OutOfScope"

// scope is what a Work may write in its member.
type scope struct {
	// binding names the Work's binding in messages; empty for a Work no
	// binding wrote (one an administrator created), which is not limited.
	binding string
	// namespace is the only namespace a ResourceBinding's Work writes in;
	// empty for a ClusterResourceBinding's, which writes only cluster-scoped
	// objects (clusterScoped).
	namespace     string
	clusterScoped bool
	// kind is the binding's resource kind; nil when the Work does not say
	// (written before Works carried it).
	kind *schema.GroupKind
}

// scopeOf reads a Work's scope from the annotations the binding
// controller writes. A malformed annotation is an error: the Work is then
// refused rather than trusted.
func scopeOf(work *workv1alpha1.Work) (scope, error) {
	raw, ok := work.Annotations[workv1alpha1.AnnotationBinding]
	if !ok {
		return scope{}, nil
	}
	ref, ok := names.ParseBindingRef(raw)
	if !ok {
		return scope{}, fmt.Errorf("annotation %s=%q does not name a binding (<kind>/<namespace>/<name>)", workv1alpha1.AnnotationBinding, raw)
	}
	s := scope{binding: ref.Kind + " " + strings.TrimPrefix(ref.Namespace+"/"+ref.Name, "/")}
	switch ref.Kind {
	case workv1alpha1.KindResourceBinding:
		if ref.Namespace == "" {
			return scope{}, fmt.Errorf("annotation %s=%q names a ResourceBinding without a namespace", workv1alpha1.AnnotationBinding, raw)
		}
		s.namespace = ref.Namespace
	case workv1alpha1.KindClusterResourceBinding:
		s.clusterScoped = true
	default:
		return scope{}, fmt.Errorf("annotation %s=%q: unknown binding kind %q", workv1alpha1.AnnotationBinding, raw, ref.Kind)
	}
	if k, ok := work.Annotations[workv1alpha1.AnnotationResourceKind]; ok {
		gk := schema.ParseGroupKind(k)
		if gk.Kind == "" {
			return scope{}, fmt.Errorf("annotation %s=%q names no kind", workv1alpha1.AnnotationResourceKind, k)
		}
		s.kind = &gk
	}
	return s, nil
}

// permits checks one manifest's identifier, resolved against the member
// (a cluster-scoped object's namespace is empty; a namespaced object's
// defaulted), against the scope.
func (s scope) permits(id workv1alpha1.ResourceIdentifier) error {
	if s.binding == "" {
		return nil
	}
	gk := schema.GroupKind{Group: id.Group, Kind: id.Kind}
	if s.kind != nil && gk != *s.kind {
		return fmt.Errorf("%s is of kind %s, but %s places a %s: a Work writes only its binding's kind", describe(id), gk, s.binding, s.kind)
	}
	if s.clusterScoped {
		if id.Namespace != "" {
			return fmt.Errorf("%s is in namespace %s, but %s places a cluster-scoped template: a ClusterResourceBinding's Work writes only cluster-scoped objects", describe(id), id.Namespace, s.binding)
		}
		return nil
	}
	if id.Namespace == "" {
		return fmt.Errorf("%s is cluster-scoped in the member, but %s may write only in namespace %s", describe(id), s.binding, s.namespace)
	}
	if id.Namespace != s.namespace {
		return fmt.Errorf("%s is in namespace %s, but %s may write only in namespace %s", describe(id), id.Namespace, s.binding, s.namespace)
	}
	return nil
}
