// Package profile reads the scheduler's configuration file, a
// SchedulerConfiguration modelled on kube-scheduler's
// KubeSchedulerConfiguration and cut down to Shepherd's extension points
// (filter and score): which plugins a profile runs, their score weights and
// their args. The file changes the default profile (scheduler.DefaultProfile)
// rather than replacing it, so a file that says nothing runs exactly what
// the scheduler runs without one.
//
// Everything is checked when the file is read, before any controller
// starts, and each error names the path of the field at fault
// ("profiles[0].pluginConfig[1].args.maxClusters: must be positive").
package profile

import "encoding/json"

// The file's apiVersion and kind.
const (
	APIVersion = "config.shepherd.io/v1alpha1"
	Kind       = "SchedulerConfiguration"
)

// MaxWeight bounds a score weight: far beyond any useful ratio (the
// default profile's largest weight is 4), and small enough that no sum of
// weighted 0..100 scores can overflow.
const MaxWeight = 10000

// SchedulerConfiguration is the file.
type SchedulerConfiguration struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Profiles holds at most one profile: the scheduling controller serves
	// one schedulerName. None means the default profile.
	Profiles []Profile `json:"profiles,omitempty"`
}

// Profile changes the default profile.
type Profile struct {
	// Name is the schedulerName the profile serves (policies naming
	// another scheduler are left alone); default "default-scheduler".
	Name string `json:"name,omitempty"`
	// Plugins enables and disables plugins per extension point.
	Plugins Plugins `json:"plugins,omitempty"`
	// PluginConfig gives plugins their args.
	PluginConfig []PluginConfig `json:"pluginConfig,omitempty"`
}

// Plugins are the profile's extension points.
type Plugins struct {
	// Filter plugins, run in order; a cluster stops at the first failure.
	Filter PluginSet `json:"filter,omitempty"`
	// Score plugins with their weights.
	Score PluginSet `json:"score,omitempty"`
}

// PluginSet changes the default plugins of one extension point, as in
// kube-scheduler: Disabled ones are removed ("*" removes them all), then
// each Enabled one already among the remaining defaults keeps its place
// (taking the weight given, if any) and the others are appended in the
// order given. Disabling a default and enabling it again moves it last.
type PluginSet struct {
	Enabled  []Plugin `json:"enabled,omitempty"`
	Disabled []Plugin `json:"disabled,omitempty"`
}

// Plugin names a plugin, with its weight for a score plugin (default: its
// weight in the default profile, or 1).
type Plugin struct {
	Name   string `json:"name"`
	Weight *int64 `json:"weight,omitempty"`
}

// PluginConfig gives one plugin its args (the plugin's Args type, in YAML
// or JSON); a plugin without an entry gets its defaults.
type PluginConfig struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}
