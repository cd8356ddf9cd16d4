package membership

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// DefaultUnjoinTimeout is how long Unjoin waits for the Cluster to go.
const DefaultUnjoinTimeout = 30 * time.Second

// ErrNotJoined is returned by Unjoin when there is neither a Cluster nor a
// credentials Secret of that name.
var ErrNotJoined = errors.New("not joined")

// UnjoinOptions tune Unjoin.
type UnjoinOptions struct {
	// Namespace of the credentials Secret when the Cluster is already gone
	// (default shepherd-system); otherwise the Cluster's secretRef is used.
	Namespace string
	// Timeout bounds the wait for the Cluster's finalizers (default 30 s).
	Timeout time.Duration
	// Force gives up on a member that cannot be cleaned up (unreachable)
	// once Timeout has passed: the Cluster and its Works are removed from
	// the hub without reaching the member, and what may remain there is
	// recorded in a ConfigMap (see UnjoinResult.Record).
	Force bool
	// Progress, if set, is told how the cleanup goes while Unjoin waits.
	Progress func(string)
}

// UnjoinResult says what Unjoin removed.
type UnjoinResult struct {
	ClusterDeleted bool
	// SecretDeleted names the Secret deleted, if any.
	SecretDeleted string
	// SecretKept explains why an existing Secret was left, if one was.
	SecretKept string
	// Record names the ConfigMap (namespace/name) listing the objects that
	// may remain in a member a forced unjoin gave up on; Remaining lists them.
	Record    string
	Remaining []string
}

// Unjoin removes a member from the fleet: it deletes the Cluster (the
// scheduler then moves its workloads elsewhere), waits until the Cluster is
// gone, and then deletes the credentials Secret that join created. The
// Secret goes last because cleanup running under the Cluster's finalizers
// may still need to reach the member. A Secret not labelled as Shepherd's
// is left alone: the user brought it. Running Unjoin again finishes an
// interrupted unjoin.
func Unjoin(ctx context.Context, hub client.Client, name string, opts UnjoinOptions) (*UnjoinResult, error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	if opts.Namespace == "" {
		opts.Namespace = DefaultNamespace
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultUnjoinTimeout
	}
	res := &UnjoinResult{}
	ref := types.NamespacedName{Namespace: opts.Namespace, Name: name}
	cluster := &clusterv1alpha1.Cluster{}
	err := hub.Get(ctx, types.NamespacedName{Name: name}, cluster)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return nil, fmt.Errorf("reading Cluster %q: %w", name, err)
	default:
		if r := cluster.Spec.SecretRef; r != nil {
			ref = types.NamespacedName{Namespace: r.Namespace, Name: r.Name}
		}
		if err := hub.Delete(ctx, cluster); err != nil && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("deleting Cluster %q: %w", name, err)
		}
		res.ClusterDeleted = true
		err := waitGone(ctx, hub, name, opts.Timeout, opts.Progress)
		if err != nil && opts.Force && ctx.Err() == nil {
			err = forceRemove(ctx, hub, name, opts.Namespace, res)
		}
		if err != nil {
			return res, err
		}
	}

	secret := &corev1.Secret{}
	err = hub.Get(ctx, ref, secret)
	switch {
	case apierrors.IsNotFound(err):
		if !res.ClusterDeleted {
			return nil, fmt.Errorf("cluster %q: %w (no Cluster and no Secret %s)", name, ErrNotJoined, ref)
		}
	case err != nil:
		return res, fmt.Errorf("reading Secret %s: %w", ref, err)
	case secret.Labels[workv1alpha1.LabelManagedBy] != workv1alpha1.ManagedByShepherd:
		res.SecretKept = fmt.Sprintf("Secret %s was not created by shepherd join (no %s=%s label); delete it yourself if it is no longer needed",
			ref, workv1alpha1.LabelManagedBy, workv1alpha1.ManagedByShepherd)
	default:
		if err := hub.Delete(ctx, secret); err != nil && !apierrors.IsNotFound(err) {
			return res, fmt.Errorf("deleting Secret %s: %w", ref, err)
		}
		res.SecretDeleted = ref.String()
	}
	return res, nil
}

// waitGone polls until the Cluster is gone, or says which finalizers hold
// it, telling progress how many Works are still being removed.
func waitGone(ctx context.Context, hub client.Client, name string, timeout time.Duration, progress func(string)) error {
	var finalizers []string
	lastWorks := -1
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		c := &clusterv1alpha1.Cluster{}
		err := hub.Get(ctx, types.NamespacedName{Name: name}, c)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		if err != nil {
			// A failed read (or one cut short by the poll's own deadline)
			// is not an answer: keep waiting until the timeout says so.
			return false, nil
		}
		finalizers = c.Finalizers
		works := &workv1alpha1.WorkList{}
		if progress != nil && hub.List(ctx, works, client.InNamespace(names.ExecutionNamespace(name))) == nil && len(works.Items) != lastWorks {
			lastWorks = len(works.Items)
			progress(fmt.Sprintf("%d Works left: their objects are being removed from the member", lastWorks))
		}
		return false, nil
	})
	switch {
	case err == nil:
		return nil
	case wait.Interrupted(err) && ctx.Err() == nil:
		return fmt.Errorf("cluster %q is still being deleted after %s (finalizers: %s); its credentials Secret is kept so that cleanup can reach the member: "+
			"run unjoin again later, or with --force to give up on a member that cannot be reached", name, timeout, strings.Join(finalizers, ", "))
	}
	return fmt.Errorf("waiting for Cluster %q to be deleted: %w", name, err)
}

// forceRemove gives up on cleaning up a member: it records in a ConfigMap
// what the Cluster's Works had applied there (those objects may remain),
// then removes the Works' and the Cluster's finalizers so they go without
// reaching the member.
func forceRemove(ctx context.Context, hub client.Client, name, namespace string, res *UnjoinResult) error {
	works := &workv1alpha1.WorkList{}
	if err := hub.List(ctx, works, client.InNamespace(names.ExecutionNamespace(name))); err != nil {
		return fmt.Errorf("listing the Works of cluster %q: %w", name, err)
	}
	for _, w := range works.Items {
		for _, ms := range w.Status.ManifestStatuses {
			id := ms.Identifier
			obj := id.Name
			if id.Namespace != "" {
				obj = id.Namespace + "/" + id.Name
			}
			gv := id.Version
			if id.Group != "" {
				gv = id.Group + "/" + id.Version
			}
			res.Remaining = append(res.Remaining, fmt.Sprintf("%s %s %s (Work %s)", gv, id.Kind, obj, w.Name))
		}
	}
	sort.Strings(res.Remaining)
	record := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "shepherd-unjoined-" + name,
			Labels: map[string]string{workv1alpha1.LabelManagedBy: workv1alpha1.ManagedByShepherd}},
		Data: map[string]string{
			"cluster":   name,
			"unjoined":  time.Now().UTC().Format(time.RFC3339),
			"remaining": strings.Join(res.Remaining, "\n"),
			"note":      "shepherd unjoin --force removed this cluster without reaching it: these objects, applied by Shepherd, may still run there. Remove them from the member by hand.",
		},
	}
	err := hub.Create(ctx, record)
	if apierrors.IsAlreadyExists(err) { // an earlier forced unjoin of the same name
		prev := &corev1.ConfigMap{}
		if err = hub.Get(ctx, client.ObjectKeyFromObject(record), prev); err == nil {
			prev.Data = record.Data
			err = hub.Update(ctx, prev)
		}
	}
	if err != nil {
		return fmt.Errorf("recording what may remain in cluster %q: %w", name, err)
	}
	res.Record = namespace + "/" + record.Name
	for i := range works.Items {
		w := &works.Items[i]
		if err := dropFinalizers(ctx, hub, w); err != nil {
			return fmt.Errorf("releasing Work %s/%s: %w", w.Namespace, w.Name, err)
		}
		if err := hub.Delete(ctx, w); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting Work %s/%s: %w", w.Namespace, w.Name, err)
		}
	}
	c := &clusterv1alpha1.Cluster{}
	if err := hub.Get(ctx, types.NamespacedName{Name: name}, c); err != nil {
		return client.IgnoreNotFound(err)
	}
	return dropFinalizers(ctx, hub, c)
}

// dropFinalizers removes every finalizer of obj.
func dropFinalizers(ctx context.Context, hub client.Client, obj client.Object) error {
	if len(obj.GetFinalizers()) == 0 {
		return nil
	}
	patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))
	return client.IgnoreNotFound(hub.Patch(ctx, obj, patch))
}
