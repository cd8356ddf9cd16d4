package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/shepherd-io/shepherd/pkg/version"
)

func newVersionCommand() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print Shepherd's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			info := version.Get()
			switch output {
			case "", "text":
				fmt.Fprintln(cmd.OutOrStdout(), info.String())
			case "json":
				return printJSON(cmd.OutOrStdout(), info)
			default:
				return fmt.Errorf("--output %q is not supported: use text or json", output)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}
