package cli

import (
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/shepherd-io/shepherd/internal/bench/hubbench"
	"github.com/shepherd-io/shepherd/pkg/logging"
)

func newBenchHubCommand() *cobra.Command {
	var (
		o       hubbench.Options
		output  string
		verbose int
	)
	cmd := &cobra.Command{
		Use:   "hub",
		Short: "Measure what one write costs the hub, against the floor",
		Long: `Start an embedded hub in a temporary directory and measure, case by case,
the process CPU per write and the writes per second: first the floor, a
minimal custom resource (no validation, ~500 bytes) created, created by
server-side apply, spec-patched and status-patched; then Shepherd's own
objects as the pipeline writes them (a ResourceBinding as the detector
applies it, the scheduler's spec and status patches, a Work as the binding
controller applies it, the execution controller's status patch). Each of
those is compared with the floor case of the same verb (ratio), and the
stored size and managedFields entries of one object are shown.

The hub runs in this process, so the CPU includes the client's share, alike
in every case: the ratio to the floor is what Shepherd's objects cost on top.`,
		Example: `  shepherd bench hub
  shepherd bench hub --objects 2000 -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "text" && output != "json" {
				return fmt.Errorf("--output %q is not supported: use text or json", output)
			}
			if o.Objects <= 0 || o.Workers <= 0 {
				return fmt.Errorf("--objects (%d) and --workers (%d) must be positive", o.Objects, o.Workers)
			}
			log := logging.New(cmd.ErrOrStderr(), verbose)
			logging.Route(log, 1)
			o.Logger = log
			dir, err := os.MkdirTemp("", "shepherd-bench-hub-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			o.DataDir = dir
			rep, err := hubbench.Run(cmd.Context(), o)
			if err != nil {
				return err
			}
			if output == "json" {
				return printJSON(cmd.OutOrStdout(), rep)
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			defer w.Flush()
			fmt.Fprintf(w, "%d objects per case, %d workers\n", rep.Objects, rep.Workers)
			fmt.Fprintln(w, "CASE\tCPU µs/WRITE\tWRITES/S\tx FLOOR\tBYTES\tMANAGED FIELDS")
			for _, c := range rep.Cases {
				ratio := "-"
				if c.RatioToFloor > 0 {
					ratio = fmt.Sprintf("%.2f", c.RatioToFloor)
				}
				fmt.Fprintf(w, "%s\t%.0f\t%.0f\t%s\t%d\t%d\n", c.Name, c.CPUMicrosPerWrite, c.WritesPerSecond, ratio, c.Bytes, c.ManagedFields)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.Objects, "objects", 1000, "objects per case")
	f.IntVar(&o.Workers, "workers", 8, "concurrent writers")
	f.StringVarP(&output, "output", "o", "text", "output format: text or json")
	f.IntVarP(&verbose, "verbose", "v", 0, "log verbosity")
	return cmd
}
