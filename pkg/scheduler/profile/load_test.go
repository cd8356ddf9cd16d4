package profile

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/shepherd-io/shepherd/pkg/scheduler"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// header opens every test file.
const header = "apiVersion: config.shepherd.io/v1alpha1\nkind: SchedulerConfiguration\n"

// TestDefaultProfileIsTodays pins the default profile: the plugins the
// scheduler has always run, in their order, with their weights. A change
// here changes every placement; make it on purpose.
func TestDefaultProfileIsTodays(t *testing.T) {
	want := framework.Profile{
		Name:    "default-scheduler",
		Filters: []string{"APIEnablement", "ClusterAffinity", "TaintToleration", "ClusterEviction", "WorkloadAffinity", "SpreadConstraint", "ResourceFit", "GangFit"},
		Scores:  []framework.WeightedPlugin{{Name: "Locality", Weight: 4}, {Name: "PreferredAffinity", Weight: 2}, {Name: "Capacity", Weight: 1}},
	}
	if got := scheduler.DefaultProfile(); !reflect.DeepEqual(got, want) {
		t.Errorf("DefaultProfile:\n got %+v\nwant %+v", got, want)
	}
	// A file that changes nothing runs the default profile.
	for _, doc := range []string{
		header,
		header + "profiles: []\n",
		header + "profiles:\n- name: default-scheduler\n",
		header + "profiles:\n- plugins: {filter: {}, score: {enabled: [{name: Locality}]}}\n",
		`{"apiVersion": "config.shepherd.io/v1alpha1", "kind": "SchedulerConfiguration"}`,
	} {
		got, err := Load([]byte(doc), nil)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s\ngot %+v, %v; want the default profile", doc, got, err)
		}
	}
}

func TestLoad(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      framework.Profile
	}{{
		name: "rename, drop a filter, reweigh and add",
		doc: header + `profiles:
- name: gpu-scheduler
  plugins:
    filter:
      disabled: [{name: SpreadConstraint}]
      enabled: [{name: MaxClusters}]
    score:
      disabled: [{name: Capacity}]
      enabled: [{name: PreferredAffinity, weight: 5}, {name: Cost}]
  pluginConfig:
  - name: MaxClusters
    args: {maxClusters: 7}
`,
		want: framework.Profile{
			Name:    "gpu-scheduler",
			Filters: []string{"APIEnablement", "ClusterAffinity", "TaintToleration", "ClusterEviction", "WorkloadAffinity", "ResourceFit", "GangFit", "MaxClusters"},
			Scores:  []framework.WeightedPlugin{{Name: "Locality", Weight: 4}, {Name: "PreferredAffinity", Weight: 5}, {Name: "Cost", Weight: 1}},
			Args:    map[string]json.RawMessage{"MaxClusters": json.RawMessage(`{"maxClusters":7}`)},
		},
	}, {
		name: "disable all scores, re-enable one last; disable and re-enable a filter moves it last",
		doc: header + `profiles:
- plugins:
    filter:
      disabled: [{name: APIEnablement}]
      enabled: [{name: APIEnablement}]
    score:
      disabled: [{name: "*"}]
      enabled: [{name: Capacity}, {name: Locality}]
`,
		want: framework.Profile{
			Name:    "default-scheduler",
			Filters: []string{"ClusterAffinity", "TaintToleration", "ClusterEviction", "WorkloadAffinity", "SpreadConstraint", "ResourceFit", "GangFit", "APIEnablement"},
			Scores:  []framework.WeightedPlugin{{Name: "Capacity", Weight: 1}, {Name: "Locality", Weight: 4}},
		},
	}} {
		got, err := Load([]byte(tc.doc), outOfTree())
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, tc.want)
		}
		if _, err := scheduler.New(got, outOfTree()); err != nil {
			t.Errorf("%s: the scheduler refuses the profile: %v", tc.name, err)
		}
	}
}

// TestLoadRefuses: one bad input per rule, each refused with the path of
// the field at fault.
func TestLoadRefuses(t *testing.T) {
	p := header + "profiles:\n- "
	for _, tc := range []struct{ doc, want string }{
		// The document.
		{"- a\n", "cannot unmarshal array into Go value of type profile.SchedulerConfiguration"},
		{"apiVersion: [\n", "not YAML"},
		{"kind: SchedulerConfiguration\n", `apiVersion: must be config.shepherd.io/v1alpha1, got ""`},
		{"apiVersion: config.shepherd.io/v1\nkind: SchedulerConfiguration\n", `apiVersion: must be config.shepherd.io/v1alpha1, got "config.shepherd.io/v1"`},
		{"apiVersion: config.shepherd.io/v1alpha1\nkind: KubeSchedulerConfiguration\n", `kind: must be SchedulerConfiguration, got "KubeSchedulerConfiguration"`},
		{header + "profile: []\n", "profile: unknown field"},
		{header + "profiles:\n- name: a\n- name: b\n", "profiles: 2 given, but the scheduler serves one schedulerName"},
		// Unknown fields, by path.
		{p + "plugin: {}\n", "profiles[0].plugin: unknown field"},
		{p + "plugins: {preFilter: {}}\n", "profiles[0].plugins.preFilter: unknown field"},
		{p + "plugins: {score: {enabled: [{name: Capacity, weigth: 2}]}}\n", "profiles[0].plugins.score.enabled[0].weigth: unknown field"},
		{p + "plugins: {score: {enabled: [{name: Capacity, weight: heavy}]}}\n", "profiles.plugins.score.enabled.weight: cannot take a JSON string; want int64"}, // encoding/json gives no index
		// Unknown plugin names.
		{p + "plugins: {filter: {enabled: [{name: GPU}]}}\n", `profiles[0].plugins.filter.enabled[0].name: unknown plugin "GPU"; registered plugins: APIEnablement, Capacity,`},
		{p + "plugins: {filter: {disabled: [{name: GPU}]}}\n", `profiles[0].plugins.filter.disabled[0].name: unknown plugin "GPU"`},
		{p + "pluginConfig: [{name: GPU, args: {}}]\n", `profiles[0].pluginConfig[0].name: unknown plugin "GPU"`},
		{p + "plugins: {filter: {enabled: [{weight: 1}]}}\n", "profiles[0].plugins.filter.enabled[0].name: required"},
		{p + "plugins: {score: {enabled: [{name: \"*\"}]}}\n", `profiles[0].plugins.score.enabled[0].name: "*" only disables`},
		// Plugins at the wrong extension point, or not there to disable.
		{p + "plugins: {score: {enabled: [{name: ResourceFit}]}}\n", `profiles[0].plugins.score.enabled[0].name: "ResourceFit" is not a score plugin`},
		{p + "plugins: {filter: {enabled: [{name: Capacity}]}}\n", `profiles[0].plugins.filter.enabled[0].name: "Capacity" is not a filter plugin`},
		{p + "plugins: {score: {disabled: [{name: ResourceFit}]}}\n", `profiles[0].plugins.score.disabled[0].name: "ResourceFit" is not a default score plugin`},
		// Duplicates.
		{p + "plugins: {filter: {enabled: [{name: MaxClusters}, {name: MaxClusters}]}}\n", `profiles[0].plugins.filter.enabled[1].name: "MaxClusters" is enabled twice`},
		{p + "plugins: {score: {disabled: [{name: Capacity}, {name: Capacity}]}}\n", `profiles[0].plugins.score.disabled[1].name: "Capacity" is disabled twice`},
		{p + "plugins: {filter: {enabled: [{name: MaxClusters}]}}\n  pluginConfig: [{name: MaxClusters}, {name: MaxClusters}]\n", `profiles[0].pluginConfig[1].name: "MaxClusters" already has args at profiles[0].pluginConfig[0]`},
		// Weights.
		{p + "plugins: {score: {enabled: [{name: Capacity, weight: 0}]}}\n", "profiles[0].plugins.score.enabled[0].weight: must be between 1 and 10000, got 0"},
		{p + "plugins: {score: {enabled: [{name: Cost, weight: -3}]}}\n", "profiles[0].plugins.score.enabled[0].weight: must be between 1 and 10000, got -3"},
		{p + "plugins: {score: {enabled: [{name: Cost, weight: 10001}]}}\n", "profiles[0].plugins.score.enabled[0].weight: must be between 1 and 10000, got 10001"},
		{p + "plugins: {filter: {enabled: [{name: ResourceFit, weight: 2}]}}\n", "profiles[0].plugins.filter.enabled[0].weight: a filter takes no weight"},
		{p + "plugins: {score: {disabled: [{name: Capacity, weight: 2}]}}\n", "profiles[0].plugins.score.disabled[0].weight: a disabled plugin takes no weight"},
		// Args for a plugin not enabled.
		{p + "pluginConfig: [{name: MaxClusters, args: {maxClusters: 3}}]\n", `profiles[0].pluginConfig[0].name: args for "MaxClusters", which the profile does not run`},
		{p + "plugins: {score: {disabled: [{name: Capacity}]}}\n  pluginConfig: [{name: Capacity}]\n", `profiles[0].pluginConfig[0].name: args for "Capacity", which the profile does not run`},
		// Invalid args.
		{p + "plugins: {filter: {enabled: [{name: MaxClusters}]}}\n  pluginConfig:\n  - name: ResourceFit\n  - name: MaxClusters\n    args: {maxClusters: 0}\n", "profiles[0].pluginConfig[1].args.maxClusters: must be positive"},
		{p + "plugins: {filter: {enabled: [{name: MaxClusters}]}}\n  pluginConfig: [{name: MaxClusters, args: {maxCluster: 3}}]\n", "profiles[0].pluginConfig[0].args.maxCluster: unknown field"},
		{p + "plugins: {filter: {enabled: [{name: MaxClusters}]}}\n  pluginConfig: [{name: MaxClusters, args: {maxClusters: many}}]\n", "profiles[0].pluginConfig[0].args.maxClusters: cannot take a JSON string; want int64"},
		{p + "pluginConfig: [{name: ResourceFit, args: {ignored: [gpu]}}]\n", "profiles[0].pluginConfig[0].args.ignored: unknown field; check its spelling, or remove it (the plugin takes no arguments)"},
	} {
		_, err := Load([]byte(tc.doc), outOfTree())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s\nwant an error with %q, got %v", tc.doc, tc.want, err)
		}
	}
}

func TestLoadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "scheduler.yaml")
	if err := os.WriteFile(path, []byte(header+"profiles:\n- plugins: {score: {enabled: [{name: Capacity, weight: 0}]}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadFile(path, nil)
	if err == nil || !strings.HasPrefix(err.Error(), path+": profiles[0].plugins.score.enabled[0].weight") {
		t.Errorf("want the file and the field named, got %v", err)
	}
	if _, err := LoadFile(filepath.Join(t.TempDir(), "missing.yaml"), nil); err == nil {
		t.Error("a missing file must be refused")
	}
}

// maxClustersArgs are the args of a test filter with one tunable, standing
// for an out-of-tree plugin.
type maxClustersArgs struct {
	MaxClusters int64 `json:"maxClusters"`
}

func (a maxClustersArgs) Validate() error {
	if a.MaxClusters < 1 {
		return &framework.FieldError{Field: "maxClusters", Message: "must be positive"}
	}
	return nil
}

type maxClusters struct{ framework.FilterPlugin }

type cost struct{ framework.ScorePlugin }

func (maxClusters) Name() string { return "MaxClusters" }
func (cost) Name() string        { return "Cost" }

func outOfTree() framework.Registry {
	return framework.Registry{
		"MaxClusters": func(raw json.RawMessage) (framework.Plugin, error) {
			if _, err := framework.DecodeArgs(raw, maxClustersArgs{MaxClusters: 10}); err != nil {
				return nil, err
			}
			return maxClusters{}, nil
		},
		"Cost": func(raw json.RawMessage) (framework.Plugin, error) { return cost{}, framework.NoArgs(raw) },
	}
}
