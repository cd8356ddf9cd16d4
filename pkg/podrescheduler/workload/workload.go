// Package workload finds the workload a pod belongs to: the object whose
// annotations opt its pods into rescheduling and hold their retry state.
//
// Supported, as in the design: Deployment (through its ReplicaSet),
// StatefulSet, Job and a ReplicaSet without a Deployment. DaemonSet pods
// are out of scope (a DaemonSet pod belongs to its node), as are pods of
// custom controllers, whose recreation behaviour is unknown.
//
// Only metadata is read (metav1.PartialObjectMetadata): owner references,
// UIDs and annotations are all the rescheduler needs, and a cache of
// metadata (see Cache) holds far less than one of whole workloads.
package workload

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The workload kinds.
var (
	replicaSet  = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ReplicaSet"}
	deployment  = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	statefulSet = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "StatefulSet"}
	job         = schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}
)

// PodOwners are the kinds a pod's controller reference names when its
// workload is supported.
func PodOwners() []schema.GroupVersionKind {
	return []schema.GroupVersionKind{replicaSet, statefulSet, job}
}

// kinds are every kind Of reads.
func kinds() []schema.GroupVersionKind { return append(PodOwners(), deployment) }

// Of returns the workload of pod, or nil when pod has no controller or its
// controller is not a supported kind or no longer exists.
//
// Each object is read from the first of readers that holds it with the
// UID the reference names; a miss (not found, another UID) or an error
// falls through to the next reader, and the last one's answer counts. With
// a cache first and the API server last, the API is read only for what
// the cache does not have yet: a ReplicaSet created a moment before its
// first pod, an object deleted and created again under the same name. A
// miss is never taken for "no workload" while a reader is left.
func Of(ctx context.Context, pod *corev1.Pod, readers ...client.Reader) (*metav1.PartialObjectMetadata, error) {
	ref := metav1.GetControllerOf(pod)
	if ref == nil || !slices.Contains(PodOwners(), gvkOf(ref)) {
		return nil, nil
	}
	obj, err := get(ctx, pod.Namespace, ref, readers)
	if obj == nil || err != nil || gvkOf(ref) != replicaSet {
		return obj, err
	}
	// A ReplicaSet's workload is its Deployment if it has one, else the
	// ReplicaSet itself.
	dref := metav1.GetControllerOf(obj)
	if dref == nil {
		return obj, nil
	}
	if gvkOf(dref) != deployment {
		return nil, nil
	}
	return get(ctx, pod.Namespace, dref, readers)
}

// Reread reads wl again through reader, e.g. the API server for the retry
// state a cache may not have yet; nil when wl is gone or was replaced by
// another object of the same name.
func Reread(ctx context.Context, reader client.Reader, wl *metav1.PartialObjectMetadata) (*metav1.PartialObjectMetadata, error) {
	ref := &metav1.OwnerReference{APIVersion: wl.APIVersion, Kind: wl.Kind, Name: wl.Name, UID: wl.UID}
	return get(ctx, wl.Namespace, ref, []client.Reader{reader})
}

// get reads the object ref names from the first of readers that has it
// (see Of); nil when the last one does not.
func get(ctx context.Context, ns string, ref *metav1.OwnerReference, readers []client.Reader) (*metav1.PartialObjectMetadata, error) {
	var (
		obj *metav1.PartialObjectMetadata
		err error
	)
	for _, r := range readers {
		if obj, err = read(ctx, r, ns, ref); obj != nil && err == nil {
			return obj, nil
		}
	}
	return obj, err
}

// read reads the object ref names through reader; nil when it is gone or
// has been replaced by another object of the same name (a different UID).
func read(ctx context.Context, reader client.Reader, ns string, ref *metav1.OwnerReference) (*metav1.PartialObjectMetadata, error) {
	obj := metadataOf(gvkOf(ref))
	if err := reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading %s %s/%s: %w", ref.Kind, ns, ref.Name, err)
	}
	if obj.UID != ref.UID {
		return nil, nil
	}
	return obj, nil
}

// metadataOf is an empty object of kind gvk to read metadata into.
func metadataOf(gvk schema.GroupVersionKind) *metav1.PartialObjectMetadata {
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(gvk)
	return obj
}

func gvkOf(ref *metav1.OwnerReference) schema.GroupVersionKind {
	return schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
}

// Describe names obj for logs and events: "Deployment default/web".
func Describe(obj client.Object) string {
	kind := obj.GetObjectKind().GroupVersionKind().Kind
	if kind == "" {
		kind = "object"
	}
	return kind + " " + obj.GetNamespace() + "/" + obj.GetName()
}
