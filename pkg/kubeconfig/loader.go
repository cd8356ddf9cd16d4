// Package kubeconfig finds a cluster's client configuration the one way
// every Shepherd command does: a kubeconfig flag (one file or a list, as
// $KUBECONFIG spells it), else $KUBECONFIG, else a default file when it
// exists, else the ServiceAccount of the pod the command runs in. A list
// is merged as kubectl merges it (the first file to set a value wins); a
// context flag picks a context of the result.
//
// Hub builds the loader of the hub, Member the loader of a member.
package kubeconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Loader loads one cluster's client configuration.
type Loader struct {
	// Cluster names the cluster in messages ("hub", "member").
	Cluster string
	// KubeconfigFlag and ContextFlag are the flags' names, for messages.
	KubeconfigFlag, ContextFlag string
	// Kubeconfig is the flag's value: a file, or files joined by the
	// path-list separator (":" on Linux) as in $KUBECONFIG.
	Kubeconfig string
	// Context is the context to use (default: the current context).
	Context string
	// UseEnv takes $KUBECONFIG when Kubeconfig is empty.
	UseEnv bool
	// Default is the file tried after the flag and $KUBECONFIG, only when
	// it exists ("" for none).
	Default string
	// InCluster uses the pod's ServiceAccount when nothing else is given.
	InCluster bool
	// Fix is the advice of an error that found no configuration
	// (default: pass KubeconfigFlag).
	Fix string
	// inClusterConfig is rest.InClusterConfig; tests replace it.
	inClusterConfig func() (*rest.Config, error)
}

// Hub is the loader of the hub: --hub-kubeconfig (or --kubeconfig where
// the hub is the command's only cluster), $KUBECONFIG, the kubeconfig
// `shepherd up` writes in dataDir, the pod's ServiceAccount.
func Hub(kubeconfig, context, dataDir string) Loader {
	return Loader{Cluster: "hub", KubeconfigFlag: "--hub-kubeconfig", ContextFlag: "--hub-context",
		Kubeconfig: kubeconfig, Context: context, UseEnv: true, Default: filepath.Join(dataDir, "kubeconfig"), InCluster: true,
		Fix: `start a hub with "shepherd up" or pass --hub-kubeconfig`}
}

// Member is the loader of a member cluster seen from inside it: its
// --kubeconfig, else the pod's ServiceAccount. $KUBECONFIG is not read: in
// a command that also talks to the hub it names the hub.
func Member(kubeconfig, context string) Loader {
	return Loader{Cluster: "member", KubeconfigFlag: "--kubeconfig", ContextFlag: "--context",
		Kubeconfig: kubeconfig, Context: context, InCluster: true}
}

// Load returns the client configuration, or an error that names where it
// looked and what to pass.
func (l Loader) Load() (*rest.Config, error) {
	files, source := l.files()
	if len(files) == 0 {
		return l.inCluster()
	}
	var existing []string
	for _, f := range files {
		if _, err := os.Stat(f); err == nil {
			existing = append(existing, f)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("loading the %s kubeconfig %s: %w", l.Cluster, f, err)
		}
	}
	if len(existing) == 0 {
		return nil, fmt.Errorf("loading the %s kubeconfig %s: %s does not exist: %s", l.Cluster, source, strings.Join(files, ", "), l.fix())
	}
	rules := &clientcmd.ClientConfigLoadingRules{Precedence: existing}
	raw, err := rules.Load()
	if err != nil {
		return nil, fmt.Errorf("loading the %s kubeconfig %s: %w", l.Cluster, source, err)
	}
	if err := l.checkContext(raw, source); err != nil {
		return nil, err
	}
	cfg, err := clientcmd.NewDefaultClientConfig(*raw, &clientcmd.ConfigOverrides{CurrentContext: l.Context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading the %s kubeconfig %s: %w", l.Cluster, source, err)
	}
	return cfg, nil
}

// files are the kubeconfig files to merge and how they were chosen; none
// means the pod's ServiceAccount.
func (l Loader) files() ([]string, string) {
	switch env := os.Getenv(clientcmd.RecommendedConfigPathEnvVar); {
	case l.Kubeconfig != "":
		return split(l.Kubeconfig), l.Kubeconfig + " (" + l.KubeconfigFlag + ")"
	case l.UseEnv && env != "":
		return split(env), env + " ($KUBECONFIG)"
	case l.Default != "":
		if _, err := os.Stat(l.Default); err == nil || !l.InCluster {
			return []string{l.Default}, l.Default
		}
	}
	return nil, ""
}

// checkContext refuses a context the files do not have, and files with no
// context to use, listing the contexts there are.
func (l Loader) checkContext(raw *clientcmdapi.Config, source string) error {
	names := make([]string, 0, len(raw.Contexts))
	for n := range raw.Contexts {
		names = append(names, n)
	}
	slices.Sort(names)
	list := strings.Join(names, ", ")
	if list == "" {
		list = "none"
	}
	switch {
	case l.Context != "" && raw.Contexts[l.Context] == nil:
		return fmt.Errorf("%s %q is not a context of the %s kubeconfig %s: use one of: %s", l.ContextFlag, l.Context, l.Cluster, source, list)
	case l.Context == "" && raw.CurrentContext == "":
		return fmt.Errorf("the %s kubeconfig %s has no current context: pass %s (contexts: %s)", l.Cluster, source, l.ContextFlag, list)
	case l.Context == "" && raw.Contexts[raw.CurrentContext] == nil:
		return fmt.Errorf("the current context %q of the %s kubeconfig %s does not exist: pass %s (contexts: %s)", raw.CurrentContext, l.Cluster, source, l.ContextFlag, list)
	}
	return nil
}

// inCluster is the cluster of the pod this runs in, with its
// ServiceAccount.
func (l Loader) inCluster() (*rest.Config, error) {
	tried := l.KubeconfigFlag + " is not set"
	if l.UseEnv {
		tried += ", $KUBECONFIG is empty"
	}
	if l.Default != "" {
		tried += ", " + l.Default + " does not exist"
	}
	if !l.InCluster {
		return nil, fmt.Errorf("no %s kubeconfig: %s: %s", l.Cluster, tried, l.fix())
	}
	get := l.inClusterConfig
	if get == nil {
		get = rest.InClusterConfig
	}
	cfg, err := get()
	if err != nil {
		return nil, fmt.Errorf("no %s kubeconfig: %s, and this is not a pod in the %s (%v): %s", l.Cluster, tried, l.Cluster, err, l.fix())
	}
	if l.Context != "" {
		return nil, fmt.Errorf("%s %q names a context of a kubeconfig, but there is none (the pod's ServiceAccount is used): pass %s too, or leave %s out", l.ContextFlag, l.Context, l.KubeconfigFlag, l.ContextFlag)
	}
	return cfg, nil
}

func (l Loader) fix() string {
	if l.Fix != "" {
		return l.Fix
	}
	return "pass " + l.KubeconfigFlag
}

// split is a path list as $KUBECONFIG spells it, without empty items.
func split(list string) []string {
	var out []string
	for _, f := range filepath.SplitList(list) {
		if f != "" {
			out = append(out, f)
		}
	}
	return out
}
