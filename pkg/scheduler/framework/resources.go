package framework

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/shepherd-io/shepherd/pkg/scheduler/core"
)

// ScalarResource is an amount of a resource other than cpu, memory and pods
// (extended resources such as nvidia.com/gpu, ephemeral-storage), in the
// resource's base unit.
type ScalarResource struct {
	Name  corev1.ResourceName
	Value int64
}

// Resources is an amount of resources as plain integers, so estimating how
// many replicas fit is a few divisions rather than resource.Quantity math.
type Resources struct {
	// MilliCPU is cpu in millicores.
	MilliCPU int64
	// Memory in bytes.
	Memory int64
	// Pods is a pod count. In a per-replica request it is ignored: every
	// replica is one pod.
	Pods int64
	// Scalars are the other resources, sorted by name.
	Scalars []ScalarResource
}

// ResourcesFromList converts a ResourceList.
func ResourcesFromList(l corev1.ResourceList) Resources {
	var r Resources
	for name, q := range l {
		switch name {
		case corev1.ResourceCPU:
			r.MilliCPU = q.MilliValue()
		case corev1.ResourceMemory:
			r.Memory = q.Value()
		case corev1.ResourcePods:
			r.Pods = q.Value()
		default:
			r.Scalars = append(r.Scalars, ScalarResource{Name: name, Value: q.Value()})
		}
	}
	r.sortScalars()
	return r
}

func (r *Resources) sortScalars() {
	slices.SortFunc(r.Scalars, func(a, b ScalarResource) int { return strings.Compare(string(a.Name), string(b.Name)) })
}

// availableFrom returns allocatable - allocated - allocating, floored at 0.
func availableFrom(allocatable, allocated, allocating corev1.ResourceList) Resources {
	r := ResourcesFromList(allocatable)
	for _, used := range []Resources{ResourcesFromList(allocated), ResourcesFromList(allocating)} {
		r.MilliCPU = max(0, r.MilliCPU-used.MilliCPU)
		r.Memory = max(0, r.Memory-used.Memory)
		r.Pods = max(0, r.Pods-used.Pods)
		for i := range r.Scalars {
			r.Scalars[i].Value = max(0, r.Scalars[i].Value-used.scalar(r.Scalars[i].Name))
		}
	}
	return r
}

// IsZero is true when nothing is requested.
func (r *Resources) IsZero() bool {
	return r.MilliCPU == 0 && r.Memory == 0 && len(r.Scalars) == 0
}

func (r *Resources) scalar(name corev1.ResourceName) int64 {
	for _, s := range r.Scalars {
		if s.Name == name {
			return s.Value
		}
	}
	return 0
}

// Resource names reported by Fit as the limiting resource.
const (
	ResourcePods   = corev1.ResourcePods
	ResourceCPU    = corev1.ResourceCPU
	ResourceMemory = corev1.ResourceMemory
	// ResourceNodeRoom: the cluster's sums would hold more replicas than
	// its nodes, each replica on one node, do.
	ResourceNodeRoom corev1.ResourceName = "room on any one node"
)

// Fit returns how many replicas, each requesting req, fit in r, and the
// resource that limits the number. It is core.Unlimited (and limiting is "")
// when req requests nothing: a template without requests has no resource
// model, so capacity must not decide where it goes. Otherwise every replica
// also takes one pod slot, so the cluster's free pods bound the result. A
// requested resource the cluster does not report counts as none available.
func (r *Resources) Fit(req *Resources) (n int64, limiting corev1.ResourceName) {
	if req.IsZero() {
		return core.Unlimited, ""
	}
	n, limiting = r.Pods, ResourcePods
	if req.MilliCPU > 0 {
		if m := r.MilliCPU / req.MilliCPU; m < n {
			n, limiting = m, ResourceCPU
		}
	}
	if req.Memory > 0 {
		if m := r.Memory / req.Memory; m < n {
			n, limiting = m, ResourceMemory
		}
	}
	j := 0
	for _, s := range req.Scalars {
		if s.Value <= 0 {
			continue
		}
		// Both lists are sorted by name: walk them together.
		for j < len(r.Scalars) && r.Scalars[j].Name < s.Name {
			j++
		}
		var have int64
		if j < len(r.Scalars) && r.Scalars[j].Name == s.Name {
			have = r.Scalars[j].Value
		}
		if m := have / s.Value; m < n {
			n, limiting = m, s.Name
		}
	}
	return min(max(n, 0), core.Unlimited), limiting
}
