// Package cli implements the `shepherd` command line: one cobra command per
// file, wired together here so the list of subcommands reads in one place.
package cli

import (
	"encoding/json"
	"io"

	"github.com/spf13/cobra"

	"github.com/shepherd-io/shepherd/pkg/cli/component"
)

// NewRootCommand builds the `shepherd` command tree.
func NewRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "shepherd",
		Short: "Shepherd schedules Kubernetes workloads across a fleet of clusters",
		Long: `Shepherd propagates resource templates (Deployments, Jobs, ...) from a hub
to member clusters according to propagation policies, and keeps them placed
through cluster and application failures.

Start a local hub with "shepherd up", then use kubectl against it.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(
		newVersionCommand(),
		newUpCommand(),
		newGetCommand(),
		component.NewControllerManagerCommand(),
		newInstallCommand(),
		newUninstallCommand(),
		newFailoverCommand(),
		newRescheduleCommand(),
		newRolloutCommand(),
		newPlanCommand(),
		newConvertCommand(),
		newDashboardCommand(),
		newBenchCommand(),
		newJoinCommand(),
		newUnjoinCommand(),
		newRegisterCommand(),
		component.NewAgentCommand(),
		newKubeSchedulerCommand(),
		newPodReschedulerCommand(),
	)
	return root
}

// printJSON writes v as indented JSON, the -o json of every command.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
