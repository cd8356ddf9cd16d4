package interpreter

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
)

// Observation is what Shepherd records of a member object in its Work: the
// raw status, the health, and the generation the status belongs to.
type Observation struct {
	Status *runtime.RawExtension
	Health policyv1alpha1.ResourceHealth
	// HealthReason says why the health is Unknown (a rule that failed or
	// returned no health, a status not yet observed), cut to
	// MaxHealthReason; empty for Healthy and Unhealthy.
	HealthReason string
	Generation   int64
	// ResourceVersion is the object's, for a kind without a generation
	// (empty otherwise): its changes are how edits of such an object show.
	ResourceVersion string
}

// MaxHealthReason bounds Observation.HealthReason (and the status fields
// it is recorded in).
const MaxHealthReason = 256

// Observe returns in's observation of obj; a missing object (nil) has no
// status, Unknown health and generation 0.
func Observe(in Interpreter, obj *unstructured.Unstructured) (Observation, error) {
	if obj == nil {
		return Observation{Health: policyv1alpha1.ResourceUnknown}, nil
	}
	h := in.Health(obj)
	o := Observation{Health: h.Health, Generation: obj.GetGeneration()}
	if o.Generation == 0 {
		o.ResourceVersion = obj.GetResourceVersion()
	}
	if h.Health == policyv1alpha1.ResourceUnknown {
		o.HealthReason = h.Reason
		if len(o.HealthReason) > MaxHealthReason {
			o.HealthReason = o.HealthReason[:MaxHealthReason-3] + "..."
		}
	}
	if st, ok := obj.Object["status"]; ok && st != nil {
		b, err := json.Marshal(st)
		if err != nil {
			return Observation{}, fmt.Errorf("encoding the status of %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
		o.Status = &runtime.RawExtension{Raw: b}
	}
	return o, nil
}
