package membership

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// memberKubeconfig is the member's kubeconfig reduced to one context with
// every file it references embedded, ready to be stored on the hub.
type memberKubeconfig struct {
	config  *clientcmdapi.Config
	context string
	server  string
}

// loadKubeconfig reads the member's kubeconfig (bytes win over path) and
// minimizes it to the chosen context (default: its current context).
// Certificates, keys and token files are embedded, because the hub cannot
// read the joining user's files later. Exec and auth-provider plugins are
// refused: the hub would have to run them.
func loadKubeconfig(data []byte, path, context string) (*memberKubeconfig, error) {
	source := "--kubeconfig"
	var cfg *clientcmdapi.Config
	var err error
	switch {
	case len(data) > 0:
		cfg, err = clientcmd.Load(data)
	case path != "":
		source = fmt.Sprintf("--kubeconfig %s", path)
		cfg, err = clientcmd.LoadFromFile(path)
		if err == nil {
			// Relative file references are relative to the kubeconfig.
			err = clientcmd.ResolveLocalPaths(cfg)
		}
	default:
		return nil, errors.New("--kubeconfig is required: the member cluster's kubeconfig file")
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	if context != "" {
		cfg.CurrentContext = context
	}
	if cfg.CurrentContext == "" {
		return nil, fmt.Errorf("%s has no current context: pass --context (contexts: %s)", source, contextNames(cfg))
	}
	ctx, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok {
		return nil, fmt.Errorf("--context %q not found in %s (contexts: %s)", cfg.CurrentContext, source, contextNames(cfg))
	}
	user := cfg.AuthInfos[ctx.AuthInfo]
	if user != nil && (user.Exec != nil || user.AuthProvider != nil) {
		return nil, fmt.Errorf("%s context %q authenticates with an exec or auth-provider plugin, which the hub cannot run: use a kubeconfig with a token or client certificate (e.g. of a ServiceAccount)", source, cfg.CurrentContext)
	}
	if err := clientcmdapi.MinifyConfig(cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	if err := clientcmdapi.FlattenConfig(cfg); err != nil {
		return nil, fmt.Errorf("%s: embedding certificate files: %w", source, err)
	}
	if err := embedTokenFiles(cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	cluster := cfg.Clusters[cfg.Contexts[cfg.CurrentContext].Cluster]
	if cluster == nil || cluster.Server == "" {
		return nil, fmt.Errorf("%s context %q has no cluster server URL", source, cfg.CurrentContext)
	}
	return &memberKubeconfig{config: cfg, context: cfg.CurrentContext, server: cluster.Server}, nil
}

// embedTokenFiles replaces tokenFile references by the token itself;
// FlattenConfig embeds certificates but not tokens.
func embedTokenFiles(cfg *clientcmdapi.Config) error {
	for name, u := range cfg.AuthInfos {
		if u.TokenFile == "" {
			continue
		}
		b, err := os.ReadFile(u.TokenFile)
		if err != nil {
			return fmt.Errorf("user %q token file: %w", name, err)
		}
		u.Token, u.TokenFile = strings.TrimSpace(string(b)), ""
	}
	return nil
}

func contextNames(cfg *clientcmdapi.Config) string {
	names := make([]string, 0, len(cfg.Contexts))
	for n := range cfg.Contexts {
		names = append(names, n)
	}
	if len(names) == 0 {
		return "none"
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// bytes serializes the minimized kubeconfig for the credentials Secret.
func (k *memberKubeconfig) bytes() ([]byte, error) { return clientcmd.Write(*k.config) }
