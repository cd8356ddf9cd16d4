// Command shepherd-agent runs the agent of a Pull cluster: the same command
// as `shepherd agent`, in a binary that links only what the agent needs.
// Its image is built by hack/image.
package main

import "github.com/shepherd-io/shepherd/pkg/cli/component"

func main() {
	component.Main("shepherd-agent", component.NewAgentCommand())
}
