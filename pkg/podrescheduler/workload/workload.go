// Package workload finds the workload a pod belongs to: the object whose
// annotations opt its pods into rescheduling and hold their retry state.
//
// Supported, as in the design: Deployment (through its ReplicaSet),
// StatefulSet, Job and a ReplicaSet without a Deployment. DaemonSet pods
// are out of scope (a DaemonSet pod belongs to its node), as are pods of
// custom controllers, whose recreation behaviour is unknown.
package workload

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Of returns the workload of pod, or nil when pod has no controller or its
// controller is not a supported kind or no longer exists. Reads go
// through reader: the controller passes its cache, the webhook an uncached
// client so that it sees the state the controller has just written.
func Of(ctx context.Context, reader client.Reader, pod *corev1.Pod) (client.Object, error) {
	ref := metav1.GetControllerOf(pod)
	if ref == nil {
		return nil, nil
	}
	var obj client.Object
	switch {
	case ref.APIVersion == "apps/v1" && ref.Kind == "ReplicaSet":
		return replicaSetOwner(ctx, reader, pod.Namespace, ref)
	case ref.APIVersion == "apps/v1" && ref.Kind == "StatefulSet":
		obj = &appsv1.StatefulSet{}
	case ref.APIVersion == "batch/v1" && ref.Kind == "Job":
		obj = &batchv1.Job{}
	default:
		return nil, nil
	}
	return get(ctx, reader, pod.Namespace, ref, obj)
}

// replicaSetOwner returns the ReplicaSet's Deployment if it has one, else
// the ReplicaSet itself.
func replicaSetOwner(ctx context.Context, reader client.Reader, ns string, ref *metav1.OwnerReference) (client.Object, error) {
	rs, err := get(ctx, reader, ns, ref, &appsv1.ReplicaSet{})
	if rs == nil || err != nil {
		return nil, err
	}
	dref := metav1.GetControllerOf(rs)
	if dref == nil {
		return rs, nil
	}
	if dref.APIVersion != "apps/v1" || dref.Kind != "Deployment" {
		return nil, nil
	}
	return get(ctx, reader, ns, dref, &appsv1.Deployment{})
}

// get reads the object ref names into obj; nil when it is gone or has been
// replaced by another object of the same name (a different UID).
func get(ctx context.Context, reader client.Reader, ns string, ref *metav1.OwnerReference, obj client.Object) (client.Object, error) {
	if err := reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading %s %s/%s: %w", ref.Kind, ns, ref.Name, err)
	}
	if obj.GetUID() != ref.UID {
		return nil, nil
	}
	return obj, nil
}

// Describe names obj for logs and events: "Deployment default/web".
func Describe(obj client.Object) string {
	kind := "object"
	switch obj.(type) {
	case *appsv1.Deployment:
		kind = "Deployment"
	case *appsv1.ReplicaSet:
		kind = "ReplicaSet"
	case *appsv1.StatefulSet:
		kind = "StatefulSet"
	case *batchv1.Job:
		kind = "Job"
	}
	return kind + " " + obj.GetNamespace() + "/" + obj.GetName()
}
