package cli

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/shepherd-io/shepherd/pkg/install"
)

func newInstallCommand() *cobra.Command {
	var (
		hub     hubFlags
		image   string
		opts    install.Options
		dryRun  bool
		timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "install",
		Short: "Install Shepherd's controller manager into a hub cluster",
		Long: `Install Shepherd into a hub cluster: the namespace shepherd-system, the CRDs,
the controller manager's ServiceAccount and least-privilege RBAC, its
Deployment (two replicas with leader election) and the validating webhooks
it serves. These are the manifests of config/default, embedded in this
binary; "kubectl apply --server-side -k config/default" applies the same.

Objects are server-side applied with field manager shepherd-install, the
namespace first, then the CRDs, then the rest; running install again
updates them. With --wait (the default) it waits until the CRDs are
Established and the Deployment is Available.

Installing needs rights to create CRDs, ClusterRoles and their bindings
(e.g. cluster-admin). See docs/install.md for what the controller manager
may do and why.`,
		Example: `  # into the cluster of the current kubeconfig context
  shepherd install --kubeconfig ~/.kube/config

  # your own build of the image (make image REGISTRY=... TAG=...)
  shepherd install --hub-kubeconfig hub.kubeconfig --image registry.example.com/shepherd-controller-manager:v0.1.0

  # print the manifests instead of applying them
  shepherd install --dry-run > shepherd.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.Wait && timeout <= 0 {
				return fmt.Errorf("--timeout %s must be positive (or pass --wait=false)", timeout)
			}
			opts.Timeout = timeout
			objs, err := install.Manifests(image)
			if err != nil {
				return err
			}
			if dryRun {
				return install.WriteYAML(cmd.OutOrStdout(), objs)
			}
			c, err := hub.client()
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			opts.Out = cmd.OutOrStdout()
			if err := install.Install(ctx, c, objs, opts); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Shepherd is installed in namespace %s. Next: shepherd join NAME --kubeconfig MEMBER.kubeconfig --hub-kubeconfig ...\n", install.Namespace)
			return nil
		},
	}
	hub.AddTo(cmd)
	hub.AddKubeconfigAlias(cmd)
	f := cmd.Flags()
	f.StringVar(&image, "image", "", "the controller manager's image (default: config/default's, ghcr.io/shepherd-io/shepherd-controller-manager:latest)")
	f.BoolVar(&opts.Wait, "wait", true, "wait until the CRDs are Established and the controller manager is Available")
	f.DurationVar(&timeout, "timeout", install.DefaultTimeout, "how long --wait waits")
	f.BoolVar(&dryRun, "dry-run", false, "print the manifests (YAML) instead of applying them; needs no hub")
	return cmd
}

func newUninstallCommand() *cobra.Command {
	var (
		hub     hubFlags
		opts    install.UninstallOptions
		dryRun  bool
		timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "uninstall",
		Short: "Remove Shepherd's controller manager from a hub cluster",
		Long: `Remove what "shepherd install" applied, in reverse order: the webhooks, the
Deployment, its Services, the RBAC and the ServiceAccount.

The CRDs and the namespace shepherd-system stay: the CRDs hold the users'
policies, the bindings and the Clusters, and shepherd-system the members'
credentials. --delete-crds and --delete-namespace remove them too.

Uninstall refuses while any ResourceBinding or ClusterResourceBinding
exists: their Works carry a finalizer that only the controller manager
removes, after deleting the workloads in the members. Delete the
PropagationPolicies (or the templates) first and wait until no binding is
left, or pass --force to uninstall anyway.`,
		Example: `  # after "kubectl delete propagationpolicies,clusterpropagationpolicies -A --all"
  shepherd uninstall --kubeconfig ~/.kube/config

  # everything, CRDs and credentials included
  shepherd uninstall --delete-crds --delete-namespace

  # what would be deleted
  shepherd uninstall --dry-run`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.Wait && timeout <= 0 {
				return fmt.Errorf("--timeout %s must be positive (or pass --wait=false)", timeout)
			}
			opts.Timeout = timeout
			objs, err := install.Manifests("")
			if err != nil {
				return err
			}
			if dryRun {
				del, kept := install.ToDelete(objs, opts)
				for _, o := range del {
					fmt.Fprintf(cmd.OutOrStdout(), "would delete %s %s\n", o.GetKind(), describeNamespaced(o.GetNamespace(), o.GetName()))
				}
				for _, o := range kept {
					fmt.Fprintf(cmd.OutOrStdout(), "would keep %s %s\n", o.GetKind(), describeNamespaced(o.GetNamespace(), o.GetName()))
				}
				return nil
			}
			c, err := hub.client()
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			opts.Out = cmd.OutOrStdout()
			return install.Uninstall(ctx, c, objs, opts)
		},
	}
	hub.AddTo(cmd)
	hub.AddKubeconfigAlias(cmd)
	f := cmd.Flags()
	f.BoolVar(&opts.DeleteCRDs, "delete-crds", false, "delete Shepherd's CRDs too, and with them every policy, binding, Work and Cluster")
	f.BoolVar(&opts.DeleteNamespace, "delete-namespace", false, "delete the namespace shepherd-system too, and with it the members' credentials")
	f.BoolVar(&opts.Force, "force", false, "uninstall even while bindings exist (their Works and the workloads in members stay)")
	f.BoolVar(&opts.Wait, "wait", true, "wait until the deleted objects are gone")
	f.DurationVar(&timeout, "timeout", install.DefaultTimeout, "how long --wait waits")
	f.BoolVar(&dryRun, "dry-run", false, "list what would be deleted and kept; needs no hub")
	return cmd
}

// describeNamespaced is namespace/name, or name for a cluster-scoped object.
func describeNamespaced(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}
