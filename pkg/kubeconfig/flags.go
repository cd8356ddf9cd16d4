package kubeconfig

import (
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// DataDir is where `shepherd up` keeps its hub, and the kubeconfig of it
// that hub commands fall back to: $SHEPHERD_DATA_DIR, else ~/.shepherd.
func DataDir() string {
	if dir := os.Getenv("SHEPHERD_DATA_DIR"); dir != "" {
		return dir
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ".shepherd"
	}
	return filepath.Join(home, ".shepherd")
}

// HubFlags are the flags of every command that talks to a hub.
type HubFlags struct {
	Kubeconfig string
	Context    string
}

// AddTo adds --hub-kubeconfig and --hub-context to cmd.
func (f *HubFlags) AddTo(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.Kubeconfig, "hub-kubeconfig", "", `kubeconfig of the hub, or a list of files as in $KUBECONFIG (default: $KUBECONFIG, else the data dir of "shepherd up", else the pod's ServiceAccount when running in the hub)`)
	cmd.Flags().StringVar(&f.Context, "hub-context", "", "context in the hub kubeconfig (default: its current context)")
}

// AddKubeconfigAlias adds --kubeconfig and --context, the same flags as
// --hub-kubeconfig and --hub-context, for commands whose only cluster is
// the hub.
func (f *HubFlags) AddKubeconfigAlias(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.Kubeconfig, "kubeconfig", "", "the same as --hub-kubeconfig")
	cmd.Flags().StringVar(&f.Context, "context", "", "the same as --hub-context")
}

// RestConfig loads the hub's client configuration (see Hub).
func (f *HubFlags) RestConfig() (*rest.Config, error) {
	return Hub(f.Kubeconfig, f.Context, DataDir()).Load()
}

// Local is the loader of the one cluster a command runs against, found as
// kubectl finds it: --kubeconfig, $KUBECONFIG, ~/.kube/config, the pod's
// ServiceAccount.
func Local(kubeconfig, context string) Loader {
	return Loader{Cluster: "cluster", KubeconfigFlag: "--kubeconfig", ContextFlag: "--context",
		Kubeconfig: kubeconfig, Context: context, UseEnv: true, Default: clientcmd.RecommendedHomeFile, InCluster: true}
}
