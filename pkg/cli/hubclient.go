package cli

import (
	"fmt"
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
	cmd.Flags().StringVar(&f.kubeconfig, "hub-kubeconfig", "", "kubeconfig of the hub (default: $KUBECONFIG, else the data dir of `shepherd up`)")
	cmd.Flags().StringVar(&f.context, "hub-context", "", "context in the hub kubeconfig (default: its current context)")
}

// defaultHubKubeconfig is $KUBECONFIG when set, else the kubeconfig that
// `shepherd up` writes in its default data dir.
func defaultHubKubeconfig() string {
	if kc := os.Getenv("KUBECONFIG"); kc != "" {
		return kc
	}
	return filepath.Join(defaultDataDir(), "kubeconfig")
}

// restConfig loads the hub's client configuration.
func (f *hubFlags) restConfig() (*rest.Config, error) {
	path := f.kubeconfig
	if path == "" {
		path = defaultHubKubeconfig()
	}
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: path}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: f.context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading the hub kubeconfig %s: %w (start a hub with `shepherd up` or pass --hub-kubeconfig)", path, err)
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
