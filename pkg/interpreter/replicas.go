package interpreter

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	resourcehelper "k8s.io/component-helpers/resource"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// Replicas reads how many replicas a template asks for and what one
// replica needs: 0 and nil for kinds without replicas.
//
//   - Deployment, StatefulSet, ReplicaSet: spec.replicas (1 when unset, the
//     API default).
//   - Job: spec.parallelism (default 1), capped by spec.completions when set,
//     since no more pods than completions ever run at once.
//   - Pod: 1.
//
// One replica's request is what kube-scheduler would reserve for its pod:
// the containers' requests summed, init containers taken at their maximum
// (restartable sidecars add up), plus the pod overhead; a container that
// sets a limit but no request requests its limit, as the API server's pod
// defaulting does.
func (l *Layered) Replicas(obj *unstructured.Unstructured) (int32, *workv1alpha1.ReplicaRequirements, error) {
	k := l.lookup(obj.GroupVersionKind().GroupKind())
	if k == nil || (k.replicas == nil && k.replicasFn == nil && !k.pod) {
		return 0, nil, nil
	}
	replicas := int64(1)
	if k.replicasFn != nil {
		n, err := k.replicasFn(obj)
		if err != nil {
			return 0, nil, fmt.Errorf("%s %s: replicas: %w", obj.GetKind(), obj.GetName(), err)
		}
		replicas = n
	} else if k.replicas != nil {
		n, found, err := nestedInt(obj, k.replicas...)
		if err != nil {
			return 0, nil, err
		}
		if found {
			replicas = n
		}
	}
	if k.job {
		if c, found, err := nestedInt(obj, "spec", "completions"); err != nil {
			return 0, nil, err
		} else if found {
			replicas = min(replicas, c)
		}
	}
	replicas = max(0, min(replicas, 1<<31-1))
	req, err := requirements(obj, k.podSpec)
	return int32(replicas), req, err
}

// PodSpecPath is where the kind keeps the pod spec its replicas run (nil
// for kinds without one), as a field path.
func (l *Layered) PodSpecPath(gk schema.GroupKind) []string {
	if k := l.lookup(gk); k != nil {
		return slices.Clone(k.podSpec)
	}
	return nil
}

func requirements(obj *unstructured.Unstructured, field []string) (*workv1alpha1.ReplicaRequirements, error) {
	pod, err := podSpec(obj, field)
	if err != nil || pod == nil {
		return nil, err
	}
	return podRequirements(pod), nil
}

// podRequirements is what one replica running pod needs (see Replicas);
// nil when it asks for nothing. pod's requests are changed: a limit
// without a request becomes one.
func podRequirements(pod *corev1.Pod) *workv1alpha1.ReplicaRequirements {
	for _, cs := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range cs {
			requestLimits(&cs[i].Resources)
		}
	}
	request := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	for name, q := range request {
		if q.IsZero() {
			delete(request, name)
		}
	}
	if len(request) == 0 && pod.Spec.PriorityClassName == "" {
		return nil
	}
	if len(request) == 0 {
		request = nil
	}
	return &workv1alpha1.ReplicaRequirements{ResourceRequest: request, PriorityClassName: pod.Spec.PriorityClassName}
}

// podSpec decodes the pod spec at field; nil when there is none.
func podSpec(obj *unstructured.Unstructured, field []string) (*corev1.Pod, error) {
	if field == nil {
		return nil, nil
	}
	m, found, err := unstructured.NestedMap(obj.Object, field...)
	if err != nil || !found {
		return nil, err
	}
	pod, err := decodePodSpec(m)
	if err != nil {
		return nil, fmt.Errorf("reading the pod spec of %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	return pod, nil
}

// decodePodSpec decodes a pod spec held as an unstructured map, which it
// does not change, into a pod.
func decodePodSpec(m map[string]any) (*corev1.Pod, error) {
	pod := &corev1.Pod{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &pod.Spec); err != nil {
		return nil, err
	}
	return pod, nil
}

// nestedInt reads an integer field. Objects decoded from JSON by
// client-go hold int64; objects built from YAML or by hand may hold a
// whole float64, which is accepted too.
func nestedInt(obj *unstructured.Unstructured, fields ...string) (int64, bool, error) {
	n, found, err := intAt(obj.Object, "", fields...)
	if err != nil {
		return 0, false, fmt.Errorf("%s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	return n, found, nil
}

// intAt reads the integer field at fields of m, as nestedInt does; where
// is m's own place in the object, for the message ("" for the object).
func intAt(m map[string]any, where string, fields ...string) (int64, bool, error) {
	v, found, err := unstructured.NestedFieldNoCopy(m, fields...)
	if err != nil || !found || v == nil {
		return 0, false, err
	}
	switch n := v.(type) {
	case int64:
		return n, true, nil
	case float64:
		if n == float64(int64(n)) {
			return int64(n), true, nil
		}
	}
	return 0, false, fmt.Errorf("%s.%s is %v, not an integer", where, strings.Join(fields, "."), v)
}

// requestLimits makes a limit without a request a request, as Kubernetes
// defaults container requests.
func requestLimits(r *corev1.ResourceRequirements) {
	for name, q := range r.Limits {
		if _, ok := r.Requests[name]; !ok {
			if r.Requests == nil {
				r.Requests = corev1.ResourceList{}
			}
			r.Requests[name] = q
		}
	}
}
