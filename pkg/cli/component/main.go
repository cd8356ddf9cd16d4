package component

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/shepherd-io/shepherd/pkg/version"
)

// Main runs cmd as the root of the binary called name (its usage line
// starting with name instead of the subcommand's, and --version printing
// the build's version), and exits 1 with the error on stderr when it
// fails.
func Main(name string, cmd *cobra.Command) {
	// Kubernetes packages may register process-wide flags at init; cobra
	// would show them. The command declares all its flags itself.
	pflag.CommandLine = pflag.NewFlagSet(name, pflag.ExitOnError)
	cmd.Use = name + strings.TrimPrefix(cmd.Use, cmd.Name())
	// cobra's default version template, not a custom one: a custom
	// template links text/template, whose calls by method name stop the
	// linker from dropping unused methods (20 MB more binary).
	cmd.Version = version.Get().String()
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	if err := cmd.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
