package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shepherd-io/shepherd/pkg/scheme"
)

// hubFlags are the flags of commands that talk to a hub.
type hubFlags struct {
	kubeconfig string
	context    string
}

func (f *hubFlags) addTo(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.kubeconfig, "hub-kubeconfig", "", "kubeconfig of the hub (default: $KUBECONFIG, else the data dir of \"shepherd up\", else the pod's ServiceAccount when running in the hub)")
	cmd.Flags().StringVar(&f.context, "hub-context", "", "context in the hub kubeconfig (default: its current context)")
}

// addKubeconfigAlias adds --kubeconfig, the same flag as --hub-kubeconfig,
// for commands whose only cluster is the hub.
func (f *hubFlags) addKubeconfigAlias(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.kubeconfig, "kubeconfig", "", "the same as --hub-kubeconfig")
}

// defaultHubKubeconfig is $KUBECONFIG when set, else the kubeconfig that
// `shepherd up` writes in its default data dir.
func defaultHubKubeconfig() string {
	if kc := os.Getenv("KUBECONFIG"); kc != "" {
		return kc
	}
	return filepath.Join(defaultDataDir(), "kubeconfig")
}

// inClusterConfig is rest.InClusterConfig; tests replace it.
var inClusterConfig = rest.InClusterConfig

// restConfig loads the hub's client configuration, the first of:
// --hub-kubeconfig; $KUBECONFIG; the kubeconfig `shepherd up` writes in its
// default data dir, when it exists; the ServiceAccount of the pod this runs
// in (the controller manager deployed into the hub, see docs/install.md).
func (f *hubFlags) restConfig() (*rest.Config, error) {
	path := f.kubeconfig
	if path == "" {
		path = defaultHubKubeconfig()
		if os.Getenv("KUBECONFIG") == "" {
			if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
				return f.inCluster(path)
			}
		}
	}
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: path}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: f.context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading the hub kubeconfig %s: %w (start a hub with `shepherd up` or pass --hub-kubeconfig)", path, err)
	}
	return cfg, nil
}

// inCluster is the hub of a pod running in it, with the pod's
// ServiceAccount; missing is the default kubeconfig that was not found.
func (f *hubFlags) inCluster(missing string) (*rest.Config, error) {
	cfg, err := inClusterConfig()
	if err != nil {
		return nil, fmt.Errorf("no hub kubeconfig: --hub-kubeconfig is not set, $KUBECONFIG is empty, %s does not exist, and this is not a pod in the hub (%v): start a hub with `shepherd up` or pass --hub-kubeconfig", missing, err)
	}
	if f.context != "" {
		return nil, fmt.Errorf("--hub-context %q names a context of a kubeconfig, but there is none (the pod's ServiceAccount is used): pass --hub-kubeconfig too, or leave --hub-context out", f.context)
	}
	return cfg, nil
}

// client returns a controller-runtime client for the hub with Shepherd's scheme.
func (f *hubFlags) client() (client.Client, error) {
	cfg, err := f.restConfig()
	if err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: scheme.Scheme})
}
