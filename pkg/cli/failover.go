package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shepherd-io/shepherd/pkg/actions"
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
	o.hub.AddTo(cmd)
	cmd.Flags().StringVarP(&o.namespace, "namespace", "n", "default", "namespace of the ResourceBinding")
	cmd.Flags().BoolVar(&o.clusterRB, "cluster-scoped", false, "the binding is a ClusterResourceBinding")
	cmd.Flags().StringVar(&o.cluster, "cluster", "", "the cluster the workload was evicted from")
	_ = cmd.MarkFlagRequired("cluster")
	return cmd
}

// confirm confirms the eviction of the binding name from --cluster.
func (o *failoverConfirmOptions) confirm(ctx context.Context, c client.Client, name string) error {
	key := actions.BindingKey{Cluster: o.clusterRB, Namespace: o.namespace, Name: name}
	if o.clusterRB {
		key.Namespace = ""
	}
	return actions.ConfirmEviction(ctx, c, key, o.cluster, "shepherd-cli")
}
