package interpreter

import "k8s.io/apimachinery/pkg/runtime/schema"

// Sensitive reports whether the kind's values are secret: a drift or a
// difference of one of its member objects is shown in the binding's and
// the Work's status, which people read who may not read the member
// object, so its values are shown hashed, never as they are. Secrets are
// sensitive built in; a customization may mark any other kind, and never
// unmarks one.
func (l *Layered) Sensitive(gk schema.GroupKind) bool {
	k := l.lookup(gk)
	return k != nil && k.sensitive
}
