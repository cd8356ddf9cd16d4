package core

import (
	"fmt"
	"sync"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// Strategy assigns replicas to the clusters selection chose. Implementations
// must be pure and deterministic. selected is read-only and in no particular
// order, so a strategy that needs one sorts it itself; the targets may come
// in any order (Schedule sorts them and takes the slice over).
type Strategy interface {
	Name() string
	Assign(selected []Candidate, req Request) ([]workv1alpha1.TargetCluster, error)
}

// Shape tells selection how a strategy uses the clusters it is given, so one
// search serves every strategy. The zero Shape is Duplicated's: every cluster
// the spread constraints allow, with no capacity requirement.
type Shape struct {
	// Divided strategies split Replicas over the clusters. A cluster given
	// none is not a target, so selection never picks more clusters than
	// there are replicas, and caps every minGroups at Replicas.
	Divided bool
	// Capacity strategies never give a cluster more replicas than fit there
	// (Available + Previous), so the selected clusters must fit them all and
	// selection stops adding clusters once they do.
	Capacity bool
	// Fewest asks selection for the fewest clusters that fit the replicas
	// instead of the best-scored ones in order (Aggregated).
	Fewest bool
}

// Shaped is implemented by strategies whose Shape is not the zero Shape.
type Shaped interface {
	Shape() Shape
}

// The registry is written by init functions only and read by Schedule, so
// strategies can live one per file and register in any order.
var (
	registryMu sync.RWMutex
	registry   = map[string]Strategy{}
)

// Register adds a strategy. It panics on a duplicate name: two strategies
// answering to one name is a programming error that must not pass silently.
func Register(s Strategy) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[s.Name()]; dup {
		panic(fmt.Sprintf("core: strategy %q registered twice", s.Name()))
	}
	registry[s.Name()] = s
}

// Lookup returns the strategy registered under name.
func Lookup(name string) (Strategy, bool) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	s, ok := registry[name]
	return s, ok
}

// shapeOf returns s's Shape, the zero Shape when it declares none.
func shapeOf(s Strategy) Shape {
	if sh, ok := s.(Shaped); ok {
		return sh.Shape()
	}
	return Shape{}
}

// staticWeighted reports whether p divides by a static weight list, which
// ignores spread constraints (a constraint of the design: the list already
// says where replicas go).
func staticWeighted(p *policyv1alpha1.Placement) bool {
	return p != nil && p.ReplicaScheduling != nil && p.ReplicaScheduling.WeightPreference != nil &&
		len(p.ReplicaScheduling.WeightPreference.StaticWeightList) > 0
}
