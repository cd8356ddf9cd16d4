// Command shepherd-controller-manager runs Shepherd's controllers against a
// hub: the same command as `shepherd controller-manager`, in a binary that
// links only what the controllers need (no embedded control plane, no
// kube-scheduler, no kwok). Its image is built by hack/image.
package main

import "github.com/shepherd-io/shepherd/pkg/cli/component"

func main() {
	component.Main("shepherd-controller-manager", component.NewControllerManagerCommand())
}
