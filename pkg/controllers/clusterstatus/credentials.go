package clusterstatus

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/clusterclient"
)

// Reasons of the Authorized condition, and the event of a renewal.
const (
	ReasonRightsGranted  = "RightsGranted"
	ReasonRightsMissing  = "RightsMissing"
	EventTokenRenewed    = "CredentialsRenewed"
	EventTokenRenewError = "CredentialsRenewFailed"
)

// checkCredentials renews the member's ServiceAccount token when it nears
// its expiry, and every RightsCheckInterval sets the Authorized condition
// from SelfSubjectAccessReviews. It runs for a member that answers, and
// its failures are reported, not returned: the probe's result stands.
func (r *Reconciler) checkCredentials(ctx context.Context, log logr.Logger, cluster *clusterv1alpha1.Cluster, status *clusterv1alpha1.ClusterStatus, now time.Time) {
	ctx, cancel := context.WithTimeout(ctx, r.Options.ProbeTimeout)
	defer cancel()
	clients, err := r.clients.ForCluster(ctx, cluster)
	if err != nil {
		return
	}
	if err := r.renewToken(ctx, cluster, clients, now); err != nil {
		log.Error(err, "renewing the member's token", "cluster", cluster.Name)
		r.Recorder.Eventf(cluster, nil, corev1.EventTypeWarning, EventTokenRenewError, "RenewCredentials", "%s", truncate(err.Error()))
	}
	if last, ok := r.rightsChecked.Load(cluster.Name); ok && now.Sub(last.(time.Time)) < r.Options.RightsCheckInterval &&
		meta.FindStatusCondition(status.Conditions, clusterv1alpha1.ClusterConditionAuthorized) != nil {
		return
	}
	missing, err := clusterclient.MissingRights(ctx, clients.Kubernetes, clusterclient.RequiredRights)
	if err != nil {
		log.V(1).Info("cannot check the hub's rights in the member", "cluster", cluster.Name, "err", err.Error())
		return
	}
	r.rightsChecked.Store(cluster.Name, now)
	c := metav1.Condition{Type: clusterv1alpha1.ClusterConditionAuthorized, Status: metav1.ConditionTrue, Reason: ReasonRightsGranted,
		Message: "The hub's credentials hold the rights Works need.", ObservedGeneration: cluster.Generation}
	if len(missing) > 0 {
		names := make([]string, len(missing))
		for i, m := range missing {
			names[i] = m.String()
		}
		c.Status, c.Reason = metav1.ConditionFalse, ReasonRightsMissing
		c.Message = truncate(fmt.Sprintf("The hub's credentials lack rights Works need: %s. Grant them (e.g. bind the ClusterRole %s that `shepherd join` creates) or join again.",
			strings.Join(names, ", "), clusterclient.MemberClusterRole))
	}
	meta.SetStatusCondition(&status.Conditions, c)
}

// renewToken replaces the ServiceAccount token of the cluster's credentials
// Secret once less than TokenRenewBefore is left, with a new one the
// ServiceAccount requests for itself. Secrets without the expiry
// annotation (credentials not issued by join) are left alone.
func (r *Reconciler) renewToken(ctx context.Context, cluster *clusterv1alpha1.Cluster, clients *clusterclient.Clients, now time.Time) error {
	ref := cluster.Spec.SecretRef
	if ref == nil {
		return nil
	}
	secret := &corev1.Secret{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, secret); err != nil {
		return client.IgnoreNotFound(err)
	}
	at := secret.Annotations[clusterv1alpha1.AnnotationTokenExpiry]
	if at == "" {
		return nil
	}
	expiry, err := time.Parse(time.RFC3339, at)
	if err == nil && expiry.Sub(now) > r.Options.TokenRenewBefore {
		return nil
	}
	kc, err := clientcmd.Load(secret.Data[clusterclient.SecretKeyKubeconfig])
	if err != nil {
		return fmt.Errorf("credentials Secret %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	kctx, ok := kc.Contexts[kc.CurrentContext]
	if !ok || kc.AuthInfos[kctx.AuthInfo] == nil {
		return fmt.Errorf("credentials Secret %s/%s: the kubeconfig has no current user", ref.Namespace, ref.Name)
	}
	token, newExpiry, err := clusterclient.RequestToken(ctx, clients.Kubernetes, clusterclient.DefaultTokenLifetime)
	if err != nil {
		return err
	}
	kc.AuthInfos[kctx.AuthInfo].Token = token
	data, err := clientcmd.Write(*kc)
	if err != nil {
		return err
	}
	orig := secret.DeepCopy()
	secret.Data[clusterclient.SecretKeyKubeconfig] = data
	secret.Annotations[clusterv1alpha1.AnnotationTokenExpiry] = newExpiry.UTC().Format(time.RFC3339)
	if err := r.Client.Patch(ctx, secret, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}), client.FieldOwner(workv1alpha1.FieldManager)); err != nil {
		return fmt.Errorf("storing the renewed token in Secret %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	r.Recorder.Eventf(cluster, nil, corev1.EventTypeNormal, EventTokenRenewed, "RenewCredentials",
		"Renewed the hub's ServiceAccount token in the member; it expires at %s", newExpiry.UTC().Format(time.RFC3339))
	return nil
}
