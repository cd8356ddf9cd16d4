package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/shepherd-io/shepherd/config/crd"
	"github.com/shepherd-io/shepherd/pkg/controlplane"
)

// shutdownBudget is how long `shepherd up` may take to stop after a signal.
const shutdownBudget = 5 * time.Second

type upOptions struct {
	dataDir string
	port    int
	verbose int
}

func defaultDataDir() string {
	if dir := os.Getenv("SHEPHERD_DATA_DIR"); dir != "" {
		return dir
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ".shepherd"
	}
	return filepath.Join(home, ".shepherd")
}

func newUpCommand() *cobra.Command {
	o := upOptions{}
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start a local Shepherd hub (embedded etcd and kube-apiserver) in this process",
		Long: `Start a local Shepherd hub: etcd and a real kube-apiserver run in this
process on loopback, with Shepherd's CRDs installed. The hub's kubeconfig is
written to DATA_DIR/kubeconfig. Everything is kept in DATA_DIR, so running
"shepherd up" again with the same --data-dir brings back every object.

Stop it with Ctrl-C or SIGTERM; it shuts down within 5 seconds.`,
		Example: `  # start the hub with the default data dir ($HOME/.shepherd)
  shepherd up

  # in another terminal
  export KUBECONFIG=$HOME/.shepherd/kubeconfig
  kubectl get clusters,propagationpolicies`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runUp(cmd, o)
		},
	}
	cmd.Flags().StringVar(&o.dataDir, "data-dir", defaultDataDir(), "directory holding the hub's etcd data, certificates and kubeconfig (env SHEPHERD_DATA_DIR)")
	cmd.Flags().IntVar(&o.port, "port", 0, "port of the hub's kube-apiserver on 127.0.0.1 (0 picks a free port)")
	cmd.Flags().IntVarP(&o.verbose, "verbose", "v", 0, "log verbosity (0 quiet; 2 shows the components' own logs)")
	return cmd
}

func runUp(cmd *cobra.Command, o upOptions) error {
	if o.port < 0 || o.port > 65535 {
		return fmt.Errorf("--port %d is out of range: use 0..65535", o.port)
	}
	dataDir, err := filepath.Abs(o.dataDir)
	if err != nil {
		return fmt.Errorf("--data-dir %q: %w", o.dataDir, err)
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return fmt.Errorf("--data-dir %q cannot be created: %w", dataDir, err)
	}
	crds, err := crd.CRDs()
	if err != nil {
		return err
	}
	log := newLogger(cmd.ErrOrStderr(), o.verbose)
	controlplane.RedirectKlog(log)

	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	started := time.Now()
	cp, err := controlplane.Start(ctx, controlplane.Options{
		DataDir:       dataDir,
		CRDs:          crds,
		Logger:        log.WithName("hub"),
		APIServerPort: o.port,
	})
	if err != nil {
		return fmt.Errorf("starting the hub: %w", err)
	}
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "Shepherd hub is up at %s (started in %s)\n\n", cp.URL(), time.Since(started).Round(100*time.Millisecond))
	fmt.Fprintf(out, "  export KUBECONFIG=%s\n  kubectl get clusters,propagationpolicies\n\n", cp.KubeconfigPath())
	fmt.Fprintln(out, "Press Ctrl-C to stop.")

	<-ctx.Done()
	fmt.Fprintln(out, "Stopping...")
	return waitStopped(cp, shutdownBudget)
}

// waitStopped waits for the control plane to finish shutting down, but no
// longer than budget: a stuck component must not keep the process alive.
func waitStopped(cp *controlplane.ControlPlane, budget time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- cp.Wait() }()
	select {
	case err := <-done:
		if err != nil && err != context.Canceled {
			return fmt.Errorf("hub stopped with an error: %w", err)
		}
		return nil
	case <-time.After(budget):
		return fmt.Errorf("hub did not stop within %s", budget)
	}
}
