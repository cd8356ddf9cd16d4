// Package charts loads the Helm chart of this directory (charts/shepherd)
// with Helm's Go SDK and renders or installs it, as `helm template` and
// `helm install` do, for the tests that compare it with config/default
// and install it into a hub.
package charts

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/strvals"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// Name is the chart's directory under charts/ and its name.
const Name = "shepherd"

// RenderKubeVersion is the Kubernetes version Render renders for, as
// `helm template --kube-version`: that of the embedded hub.
const RenderKubeVersion = "v1.36.0"

// Dir is the chart's directory in the checkout.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), Name)
}

// Load reads the chart from Dir.
func Load() (*chart.Chart, error) {
	return loader.Load(Dir())
}

// Values parses `--set` assignments (a=b,c.d=e) into chart values.
func Values(sets ...string) (map[string]any, error) {
	vals := map[string]any{}
	for _, s := range sets {
		if err := strvals.ParseInto(s, vals); err != nil {
			return nil, fmt.Errorf("--set %s: %w", s, err)
		}
	}
	return vals, nil
}

// Render renders the chart into namespace with vals as `helm template
// --include-crds` does: the CRDs of crds/, then the templates' objects.
// A value the schema refuses or a template's fail() is an error.
func Render(namespace string, vals map[string]any) ([]*unstructured.Unstructured, error) {
	c, err := Load()
	if err != nil {
		return nil, err
	}
	in := action.NewInstall(&action.Configuration{})
	in.DryRun, in.ClientOnly = true, true
	in.ReleaseName, in.Namespace = Name, namespace
	in.Replace = true
	in.IncludeCRDs = true
	if in.KubeVersion, err = chartutil.ParseKubeVersion(RenderKubeVersion); err != nil {
		return nil, err
	}
	rel, err := in.Run(c, vals)
	if err != nil {
		return nil, err
	}
	return Decode(rel.Manifest)
}

// Decode reads the objects of a YAML stream.
func Decode(manifest string) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader([]byte(manifest)), 4096)
	for {
		o := &unstructured.Unstructured{}
		if err := dec.Decode(&o.Object); errors.Is(err, io.EOF) {
			return objs, nil
		} else if err != nil {
			return nil, err
		}
		if len(o.Object) > 0 {
			objs = append(objs, o)
		}
	}
}

// Client runs Helm's actions against the cluster of a kubeconfig file, in
// namespace, with releases stored in Secrets (Helm's default) and the
// discovery cache in cacheDir.
func Client(kubeconfig, namespace, cacheDir string) (*action.Configuration, error) {
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig, flags.Namespace, flags.CacheDir = &kubeconfig, &namespace, &cacheDir
	cfg := &action.Configuration{}
	if err := cfg.Init(flags, namespace, "secret", func(string, ...any) {}); err != nil {
		return nil, err
	}
	return cfg, nil
}

// Install installs the chart as release Name into namespace (which must
// exist, as with `helm install` without --create-namespace), without
// waiting for the Deployment (a hub without nodes never runs it). With
// takeOwnership, objects that exist already (e.g. the agent guard that
// `shepherd register` applies) join the release, as with `helm install
// --take-ownership`.
func Install(cfg *action.Configuration, namespace string, vals map[string]any, takeOwnership bool, timeout time.Duration) (*release.Release, error) {
	c, err := Load()
	if err != nil {
		return nil, err
	}
	in := action.NewInstall(cfg)
	in.ReleaseName, in.Namespace = Name, namespace
	in.TakeOwnership = takeOwnership
	in.Timeout = timeout
	return in.Run(c, vals)
}

// Upgrade upgrades release Name to the chart with vals (not reusing the
// previous values, as `helm upgrade` without --reuse-values).
func Upgrade(cfg *action.Configuration, namespace string, vals map[string]any, timeout time.Duration) (*release.Release, error) {
	c, err := Load()
	if err != nil {
		return nil, err
	}
	up := action.NewUpgrade(cfg)
	up.Namespace = namespace
	up.Timeout = timeout
	return up.Run(Name, c, vals)
}

// Uninstall uninstalls release Name (CRDs stay: Helm never deletes those
// of crds/).
func Uninstall(cfg *action.Configuration, timeout time.Duration) error {
	un := action.NewUninstall(cfg)
	un.Timeout = timeout
	_, err := un.Run(Name)
	return err
}
