package serviceexport

import (
	"cmp"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/client-go/tools/cache"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/shepherd-io/shepherd/pkg/mcs"
)

// A member's reconcile looks only at the exports and imports that changed
// since the last one: with a thousand imports in a member, going through
// all of them at every endpoint change anywhere in the ClusterSet (each
// changes an imported slice in every member) would cost each member
// thousands of comparisons per change. A full pass over everything runs
// when the member's watches start, after an error, and every
// fullPassEvery as a backstop.

// fullPassEvery is how often a member's exports and imports are all looked
// at, whatever changed.
const fullPassEvery = 5 * time.Minute

// change names what a member object's event concerns: one export (its
// ServiceExport, its Service, its EndpointSlices) or one import (its
// ServiceImport, its derived Service, its imported EndpointSlices).
type change struct {
	export          bool
	namespace, name string
}

// changesOf maps a watched member object (or the tombstone of a deleted
// one) to the exports and imports it concerns.
func changesOf(obj any) []change {
	switch o := obj.(type) {
	case cache.DeletedFinalStateUnknown:
		return changesOf(o.Obj)
	case *mcsv1beta1.ServiceExport:
		return []change{{export: true, namespace: o.Namespace, name: o.Name}}
	case *mcsv1beta1.ServiceImport:
		return []change{{namespace: o.Namespace, name: o.Name}}
	case *corev1.Service:
		out := []change{{export: true, namespace: o.Namespace, name: o.Name}}
		if imported := o.Labels[mcsv1beta1.LabelServiceName]; imported != "" {
			// An import's derived Service: its IPs are the import's.
			out = append(out, change{namespace: o.Namespace, name: imported})
		}
		return out
	case *discoveryv1.EndpointSlice:
		if o.Labels[discoveryv1.LabelManagedBy] == mcs.ManagedBy {
			if imported := o.Labels[mcsv1beta1.LabelServiceName]; imported != "" {
				return []change{{namespace: o.Namespace, name: imported}}
			}
			return nil
		}
		if svc := o.Labels[discoveryv1.LabelServiceName]; svc != "" {
			return []change{{export: true, namespace: o.Namespace, name: svc}}
		}
	}
	return nil
}

// pending is a member's changes not looked at yet.
type pending struct {
	mu      sync.Mutex
	changes map[change]struct{}
	// full asks for a pass over everything; lastFull is when the last one
	// was taken.
	full     bool
	lastFull time.Time
}

func newPending() *pending { return &pending{changes: map[change]struct{}{}, full: true} }

// mark records changes; it reports whether nothing was pending before, so
// that the member's reconcile is asked for once, not at every event.
func (p *pending) mark(cs ...change) bool {
	if len(cs) == 0 {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	was := len(p.changes) == 0 && !p.full
	for _, c := range cs {
		p.changes[c] = struct{}{}
	}
	return was
}

// markFull asks for a pass over everything.
func (p *pending) markFull() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.full = true
}

// take returns what is pending and clears it: a full pass (then the
// changes do not matter) when one was asked for or the last is older than
// fullPassEvery, otherwise the changes, in a fixed order.
func (p *pending) take(now time.Time) (full bool, changes []change) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.full || now.Sub(p.lastFull) >= fullPassEvery {
		p.full, p.lastFull = false, now
		clear(p.changes)
		return true, nil
	}
	changes = make([]change, 0, len(p.changes))
	for c := range p.changes {
		changes = append(changes, c)
	}
	clear(p.changes)
	slices.SortFunc(changes, func(a, b change) int {
		if a.export != b.export {
			if a.export {
				return -1
			}
			return 1
		}
		return cmp.Or(strings.Compare(a.namespace, b.namespace), strings.Compare(a.name, b.name))
	})
	return false, changes
}
