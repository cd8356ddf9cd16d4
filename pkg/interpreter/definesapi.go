package interpreter

import "k8s.io/apimachinery/pkg/runtime/schema"

// DefinesAPI reports whether an object of kind gk defines an API. Built in
// for CustomResourceDefinition only: an APIService's objects live in
// another server, which goes on serving them without it.
func (l *Layered) DefinesAPI(gk schema.GroupKind) bool {
	k := l.lookup(gk)
	return k != nil && k.definesAPI
}
