package execution

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/clusterclient"
)

// serverFields are metadata fields that belong to the hub's copy of an
// object and must not travel: resourceVersion would make the apply a
// conditional update, and owner references name hub UIDs that the member's
// garbage collector would treat as missing owners.
var serverFields = []string{
	"resourceVersion", "uid", "creationTimestamp", "generation", "managedFields", "selfLink",
	"deletionTimestamp", "deletionGracePeriodSeconds", "ownerReferences",
}

// manifest is one decoded manifest of a Work.
type manifest struct {
	id  workv1alpha1.ResourceIdentifier
	obj *unstructured.Unstructured
	err error // decoding failed; id holds the ordinal only
}

// decodeManifests decodes the Work's manifests and fills their identifiers
// (all but the resource, which needs the member's discovery).
func decodeManifests(work *workv1alpha1.Work) []manifest {
	out := make([]manifest, 0, len(work.Spec.Workload.Manifests))
	for i, m := range work.Spec.Workload.Manifests {
		mf := manifest{id: workv1alpha1.ResourceIdentifier{Ordinal: int32(i)}}
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(m.Raw); err != nil {
			mf.err = fmt.Errorf("manifest %d cannot be decoded: %w", i, err)
			out = append(out, mf)
			continue
		}
		gvk := obj.GroupVersionKind()
		mf.id.Group, mf.id.Version, mf.id.Kind = gvk.Group, gvk.Version, gvk.Kind
		mf.id.Namespace, mf.id.Name = obj.GetNamespace(), obj.GetName()
		mf.obj = obj
		out = append(out, mf)
	}
	return out
}

// describe names an identifier in messages: "apps/v1 Deployment web/nginx".
func describe(id workv1alpha1.ResourceIdentifier) string {
	gv := schema.GroupVersion{Group: id.Group, Version: id.Version}.String()
	name := id.Name
	if id.Namespace != "" {
		name = id.Namespace + "/" + id.Name
	}
	return fmt.Sprintf("%s %s %s", gv, id.Kind, name)
}

// resourceFor maps an identifier to the member's resource, recording the
// resource name in the identifier and defaulting the namespace of a
// namespaced object without one to "default", as kubectl would.
func resourceFor(c *clusterclient.Clients, id *workv1alpha1.ResourceIdentifier) (dynamic.ResourceInterface, error) {
	gvk := schema.GroupVersionKind{Group: id.Group, Version: id.Version, Kind: id.Kind}
	m, err := c.RESTMapping(gvk)
	if err != nil {
		return nil, err
	}
	id.Resource = m.Resource.Resource
	if m.Scope.Name() != meta.RESTScopeNameNamespace {
		id.Namespace = ""
		return c.Dynamic.Resource(m.Resource), nil
	}
	if id.Namespace == "" {
		id.Namespace = metav1.NamespaceDefault
	}
	return c.Dynamic.Resource(m.Resource).Namespace(id.Namespace), nil
}

// applyManifest server-side applies one manifest to the member with force,
// so Shepherd's intent wins over edits made in the member, and returns the
// object as the member stored it. A missing namespace is created and the
// apply retried once.
func applyManifest(ctx context.Context, c *clusterclient.Clients, workKey string, mf *manifest) (*unstructured.Unstructured, error) {
	ri, err := resourceFor(c, &mf.id)
	if err != nil {
		return nil, err
	}
	obj := mf.obj.DeepCopy()
	for _, f := range serverFields {
		unstructured.RemoveNestedField(obj.Object, "metadata", f)
	}
	unstructured.RemoveNestedField(obj.Object, "status")
	obj.SetNamespace(mf.id.Namespace)
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[workv1alpha1.LabelManagedBy] = workv1alpha1.ManagedByShepherd
	obj.SetLabels(labels)
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[workv1alpha1.AnnotationWork] = workKey
	obj.SetAnnotations(annotations)
	data, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, err
	}
	force := true
	opts := metav1.PatchOptions{FieldManager: workv1alpha1.FieldManager, Force: &force}
	applied, err := ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, opts)
	if isMissingNamespace(err, mf.id.Namespace) {
		if err := createNamespace(ctx, c, mf.id.Namespace); err != nil {
			return nil, err
		}
		applied, err = ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, opts)
	}
	return applied, err
}

// isMissingNamespace recognizes the NamespaceLifecycle admission refusal.
func isMissingNamespace(err error, ns string) bool {
	if ns == "" || !apierrors.IsNotFound(err) {
		return false
	}
	status, ok := err.(apierrors.APIStatus)
	if !ok || status.Status().Details == nil {
		return false
	}
	d := status.Status().Details
	return d.Kind == "namespaces" && d.Name == ns
}

// createNamespace creates a namespace the Work's objects need. It is
// labelled as Shepherd's but never deleted by it: other Works or the user
// may have put things there.
func createNamespace(ctx context.Context, c *clusterclient.Clients, ns string) error {
	obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:   ns,
		Labels: map[string]string{workv1alpha1.LabelManagedBy: workv1alpha1.ManagedByShepherd},
	}}
	_, err := c.Kubernetes.CoreV1().Namespaces().Create(ctx, obj, metav1.CreateOptions{FieldManager: workv1alpha1.FieldManager})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", ns, err)
	}
	return nil
}

// deleteObject deletes the member object of id if the Work applied it
// (its annotation names workKey). Gone, or owned by someone else, is fine.
func deleteObject(ctx context.Context, c *clusterclient.Clients, workKey string, id workv1alpha1.ResourceIdentifier) error {
	ri, err := resourceFor(c, &id)
	if meta.IsNoMatchError(err) {
		return nil // the kind is no longer served, so neither is the object
	}
	if err != nil {
		return err
	}
	obj, err := ri.Get(ctx, id.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if obj.GetAnnotations()[workv1alpha1.AnnotationWork] != workKey || obj.GetDeletionTimestamp() != nil {
		return nil
	}
	background := metav1.DeletePropagationBackground
	uid := obj.GetUID()
	err = ri.Delete(ctx, id.Name, metav1.DeleteOptions{PropagationPolicy: &background, Preconditions: &metav1.Preconditions{UID: &uid}})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // gone, or replaced by a new object since the Get
	}
	return err
}

// sameObject compares identifiers by what names the member object; the
// ordinal and version may change without the object changing.
func sameObject(a, b workv1alpha1.ResourceIdentifier) bool {
	return a.Group == b.Group && a.Kind == b.Kind && a.Namespace == b.Namespace && a.Name == b.Name
}
