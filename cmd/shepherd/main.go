// Command shepherd is Shepherd's single binary: the local fleet (`up`), the
// controllers, and the tools that plan, benchmark and operate placements.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/shepherd-io/shepherd/pkg/cli"
)

func main() {
	// Embedded Kubernetes packages register process-wide flags (such as
	// --version) at init; cobra would show them on every command. Shepherd's
	// commands declare all their flags themselves.
	pflag.CommandLine = pflag.NewFlagSet(os.Args[0], pflag.ExitOnError)
	if err := cli.NewRootCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
