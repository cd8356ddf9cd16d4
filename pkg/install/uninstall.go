package install

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// UninstallOptions configure Uninstall.
type UninstallOptions struct {
	// DeleteCRDs deletes Shepherd's CRDs too, and with them every policy,
	// binding, Work and Cluster on the hub.
	DeleteCRDs bool
	// DeleteNamespace deletes shepherd-system too, and with it the
	// members' credentials Secrets.
	DeleteNamespace bool
	// Force uninstalls even while bindings exist (see BindingsExistError).
	Force bool
	// Wait until every deleted object is gone, for at most Timeout
	// (default DefaultTimeout).
	Wait    bool
	Timeout time.Duration
	// Out receives a line per object deleted or kept (nil: none).
	Out io.Writer
}

// BindingsExistError refuses an uninstall while bindings exist: each owns
// Works that carry the execution controller's finalizer, which only the
// controller manager removes (after deleting the Work's objects in the
// member). Without it, deleting a binding, a Work or the CRDs never
// finishes and the members keep the workloads.
type BindingsExistError struct {
	ResourceBindings, ClusterResourceBindings int
}

func (e *BindingsExistError) Error() string {
	return fmt.Sprintf("refusing to uninstall: %d ResourceBindings and %d ClusterResourceBindings exist, and only the controller manager "+
		"releases their Works (and the workloads in members). Delete the PropagationPolicies and ClusterPropagationPolicies "+
		"(or the templates they propagate), wait until `kubectl get resourcebindings,clusterresourcebindings -A` lists nothing, "+
		"and uninstall again; or pass --force to uninstall anyway and leave them as they are",
		e.ResourceBindings, e.ClusterResourceBindings)
}

// CountBindings counts the hub's ResourceBindings and
// ClusterResourceBindings; none when their CRDs are not installed.
func CountBindings(ctx context.Context, c client.Reader) (rbs, crbs int, err error) {
	count := func(kind string) (int, error) {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(workv1alpha1.SchemeGroupVersion.WithKind(kind + "List"))
		err := c.List(ctx, list)
		if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
			return 0, nil
		}
		return len(list.Items), err
	}
	if rbs, err = count("ResourceBinding"); err != nil {
		return 0, 0, fmt.Errorf("listing ResourceBindings: %w", err)
	}
	if crbs, err = count("ClusterResourceBinding"); err != nil {
		return 0, 0, fmt.Errorf("listing ClusterResourceBindings: %w", err)
	}
	return rbs, crbs, nil
}

// ToDelete returns what Uninstall deletes of objs (as Manifests returns
// them), in order: the reverse of the install order, so the webhook
// configuration goes first (nothing is held up by a webhook that is gone)
// and the CRDs and the namespace, when asked for, last. The admission
// policy guarding agents' Works stays with the CRDs: Works and agents
// outlive the controller manager.
func ToDelete(objs []*unstructured.Unstructured, o UninstallOptions) (del, kept []*unstructured.Unstructured) {
	for _, obj := range slices.Backward(objs) {
		guard := obj.GetKind() == "ValidatingAdmissionPolicy" || obj.GetKind() == "ValidatingAdmissionPolicyBinding"
		switch {
		case obj.GetKind() == "CustomResourceDefinition" && !o.DeleteCRDs,
			guard && !o.DeleteCRDs,
			obj.GetKind() == "Namespace" && !o.DeleteNamespace:
			kept = append(kept, obj)
		default:
			del = append(del, obj)
		}
	}
	slices.Reverse(kept) // in install order
	return del, kept
}

// Uninstall deletes what Install applied (objs, as Manifests returns
// them), except the CRDs and the namespace unless asked to; it refuses
// with a *BindingsExistError while bindings exist, unless forced.
func Uninstall(ctx context.Context, c client.Client, objs []*unstructured.Unstructured, o UninstallOptions) error {
	out := o.Out
	if out == nil {
		out = io.Discard
	}
	if !o.Force {
		rbs, crbs, err := CountBindings(ctx, c)
		if err != nil {
			return err
		}
		if rbs+crbs > 0 {
			return &BindingsExistError{ResourceBindings: rbs, ClusterResourceBindings: crbs}
		}
	}
	del, kept := ToDelete(objs, o)
	var deleted []*unstructured.Unstructured
	for _, obj := range del {
		err := c.Delete(ctx, obj.DeepCopy(), client.PropagationPolicy(metav1.DeletePropagationBackground))
		switch {
		case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
			fmt.Fprintf(out, "%s not found\n", describe(obj))
		case apierrors.IsForbidden(err):
			return fmt.Errorf("deleting %s: %w: uninstalling needs the rights installing needed (e.g. cluster-admin); use such a kubeconfig with --hub-kubeconfig", describe(obj), err)
		case err != nil:
			return fmt.Errorf("deleting %s: %w", describe(obj), err)
		default:
			fmt.Fprintf(out, "%s deleted\n", describe(obj))
			deleted = append(deleted, obj)
		}
	}
	if len(kept) > 0 {
		fmt.Fprintf(out, "kept %s: they hold users' policies and members' credentials (--delete-crds, --delete-namespace remove them)\n", names(kept))
	}
	if !o.Wait {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, cmp.Or(o.Timeout, DefaultTimeout))
	defer cancel()
	for _, obj := range deleted {
		err := poll(ctx, func(ctx context.Context) (bool, error) {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(obj.GroupVersionKind())
			err := c.Get(ctx, client.ObjectKeyFromObject(obj), u)
			if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
				return true, nil
			}
			return false, err
		})
		if err != nil {
			return fmt.Errorf("%s is still there: %w; objects with finalizers no controller removes any longer hold it (`kubectl get %s -o yaml`), or pass --wait=false",
				describe(obj), err, strings.ToLower(obj.GetKind()))
		}
	}
	return nil
}

// names lists objects for a message: "Namespace shepherd-system, 13 CustomResourceDefinitions".
func names(objs []*unstructured.Unstructured) string {
	byKind := map[string][]string{}
	var kinds []string
	for _, o := range objs {
		if _, ok := byKind[o.GetKind()]; !ok {
			kinds = append(kinds, o.GetKind())
		}
		byKind[o.GetKind()] = append(byKind[o.GetKind()], o.GetName())
	}
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		if n := len(byKind[k]); n > 1 {
			parts[i] = fmt.Sprintf("%d %ss", n, k)
		} else {
			parts[i] = k + " " + byKind[k][0]
		}
	}
	return strings.Join(parts, ", ")
}
