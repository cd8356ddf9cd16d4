package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

type failoverConfirmOptions struct {
	hub       hubFlags
	namespace string
	clusterRB bool
	cluster   string
}

// newFailoverCommand groups the failover commands.
func newFailoverCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "failover",
		Short: "Act on application and cluster failover",
	}
	cmd.AddCommand(newFailoverConfirmCommand())
	return cmd
}

// newFailoverConfirmCommand confirms the removal of an old copy that a
// purge mode Never eviction keeps.
func newFailoverConfirmCommand() *cobra.Command {
	o := &failoverConfirmOptions{}
	cmd := &cobra.Command{
		Use:   "confirm BINDING --cluster CLUSTER",
		Short: "Let the old copy of an evicted workload go (purge mode Never)",
		Long: `With failover purge mode Never, the copy on a cluster the workload was
evicted from stays until a person confirms. This sets confirmed: true on
the binding's graceful eviction task for the cluster; the failover
controller then drops the task and the copy is deleted.`,
		Example: `  shepherd failover confirm web-deployment -n shop --cluster member1
  shepherd failover confirm ops-clusterrole --cluster-scoped --cluster member1`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.hub.client()
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
			defer cancel()
			if err := o.confirm(ctx, c, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "confirmed the removal of %s's copy on %s\n", args[0], o.cluster)
			return nil
		},
	}
	o.hub.addTo(cmd)
	cmd.Flags().StringVarP(&o.namespace, "namespace", "n", "default", "namespace of the ResourceBinding")
	cmd.Flags().BoolVar(&o.clusterRB, "cluster-scoped", false, "the binding is a ClusterResourceBinding")
	cmd.Flags().StringVar(&o.cluster, "cluster", "", "the cluster the workload was evicted from")
	_ = cmd.MarkFlagRequired("cluster")
	return cmd
}

// confirm sets the task's confirmed flag under an optimistic lock, so a
// concurrent change of the tasks is not overwritten.
func (o *failoverConfirmOptions) confirm(ctx context.Context, c client.Client, name string) error {
	var b workv1alpha1.BindingObject = &workv1alpha1.ResourceBinding{}
	key := client.ObjectKey{Namespace: o.namespace, Name: name}
	if o.clusterRB {
		b, key = &workv1alpha1.ClusterResourceBinding{}, client.ObjectKey{Name: name}
	}
	if err := c.Get(ctx, key, b); err != nil {
		return err
	}
	orig := b.DeepCopyObject().(client.Object)
	tasks := b.GetBindingSpec().GracefulEvictionTasks
	for i := range tasks {
		if tasks[i].FromCluster != o.cluster {
			continue
		}
		if tasks[i].PurgeMode != policyv1alpha1.PurgeNever {
			return fmt.Errorf("the eviction from %s has purge mode %s: it needs no confirmation", o.cluster, tasks[i].PurgeMode)
		}
		if tasks[i].Confirmed {
			return nil
		}
		tasks[i].Confirmed = true
		return c.Patch(ctx, b, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}), client.FieldOwner("shepherd-cli"))
	}
	return fmt.Errorf("%s has no pending eviction from cluster %s", name, o.cluster)
}
