package cli

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shepherd-io/shepherd/pkg/kubeconfig"
	"github.com/shepherd-io/shepherd/pkg/scheme"
)

// hubFlags are the flags of commands that talk to a hub; package
// kubeconfig loads them.
type hubFlags struct{ kubeconfig.HubFlags }

// client returns a controller-runtime client for the hub with Shepherd's scheme.
func (f *hubFlags) client() (client.Client, error) {
	cfg, err := f.RestConfig()
	if err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: scheme.Scheme})
}
