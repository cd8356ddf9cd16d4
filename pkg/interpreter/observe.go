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
	Status     *runtime.RawExtension
	Health     policyv1alpha1.ResourceHealth
	Generation int64
}

// Observe returns in's observation of obj; a missing object (nil) has no
// status, Unknown health and generation 0.
func Observe(in Interpreter, obj *unstructured.Unstructured) (Observation, error) {
	if obj == nil {
		return Observation{Health: policyv1alpha1.ResourceUnknown}, nil
	}
	o := Observation{Health: in.Health(obj).Health, Generation: obj.GetGeneration()}
	if st, ok := obj.Object["status"]; ok && st != nil {
		b, err := json.Marshal(st)
		if err != nil {
			return Observation{}, fmt.Errorf("encoding the status of %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
		o.Status = &runtime.RawExtension{Raw: b}
	}
	return o, nil
}
