package membership

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
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
}

// UnjoinResult says what Unjoin removed.
type UnjoinResult struct {
	ClusterDeleted bool
	// SecretDeleted names the Secret deleted, if any.
	SecretDeleted string
	// SecretKept explains why an existing Secret was left, if one was.
	SecretKept string
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
		if err := waitGone(ctx, hub, name, opts.Timeout); err != nil {
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

// waitGone polls until the Cluster is gone, or says which finalizers hold it.
func waitGone(ctx context.Context, hub client.Client, name string, timeout time.Duration) error {
	var finalizers []string
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
		return false, nil
	})
	switch {
	case err == nil:
		return nil
	case wait.Interrupted(err) && ctx.Err() == nil:
		return fmt.Errorf("cluster %q is still being deleted after %s (finalizers: %s); its credentials Secret is kept so that cleanup can reach the member: run unjoin again later",
			name, timeout, strings.Join(finalizers, ", "))
	}
	return fmt.Errorf("waiting for Cluster %q to be deleted: %w", name, err)
}
