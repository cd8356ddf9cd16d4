// Command shepherd is Shepherd's single binary: the embedded hub (`up`), the
// controllers, and the tools that plan, benchmark and operate placements.
package main

import (
	"fmt"
	"os"

	"github.com/shepherd-io/shepherd/pkg/cli"
)

func main() {
	if err := cli.NewRootCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
