package interpreter

import "k8s.io/apimachinery/pkg/runtime/schema"

// ObservesGeneration reports whether the kind's status carries
// observedGeneration, which `kubectl rollout status` compares with the
// generation before it looks at the replica counters: the hub writes it
// on the template once every member runs the template's generation.
func (l *Layered) ObservesGeneration(gk schema.GroupKind) bool {
	k := l.lookup(gk)
	return k != nil && k.observesGeneration
}
