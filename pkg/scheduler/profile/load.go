package profile

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/shepherd-io/shepherd/pkg/scheduler"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// LoadFile reads and checks the configuration file at path; see Load.
func LoadFile(path string, outOfTree framework.Registry) (framework.Profile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return framework.Profile{}, err
	}
	p, err := Load(data, outOfTree)
	if err != nil {
		return framework.Profile{}, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// Load decodes a SchedulerConfiguration (YAML or JSON) and returns the
// profile it sets: scheduler.DefaultProfile changed as the file says, for
// the in-tree plugins plus outOfTree (may be nil). Decoding is strict (an
// unknown field is refused by its path), and the result is checked the way
// the scheduler will use it: every plugin is built with its args, so a
// profile Load accepts is one scheduler.New accepts.
func Load(data []byte, outOfTree framework.Registry) (framework.Profile, error) {
	reg := scheduler.InTreeRegistry()
	if err := reg.Merge(outOfTree); err != nil {
		return framework.Profile{}, err
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return framework.Profile{}, fmt.Errorf("not YAML: %w", err)
	}
	var cfg SchedulerConfiguration
	if err := framework.DecodeStrict(js, &cfg); err != nil {
		return framework.Profile{}, pathError("", err)
	}
	if cfg.APIVersion != APIVersion {
		return framework.Profile{}, fmt.Errorf("apiVersion: must be %s, got %q", APIVersion, cfg.APIVersion)
	}
	if cfg.Kind != Kind {
		return framework.Profile{}, fmt.Errorf("kind: must be %s, got %q", Kind, cfg.Kind)
	}
	switch len(cfg.Profiles) {
	case 0:
		return scheduler.DefaultProfile(), nil
	case 1:
		return build(&cfg.Profiles[0], "profiles[0]", reg)
	default:
		return framework.Profile{}, fmt.Errorf("profiles: %d given, but the scheduler serves one schedulerName; give one profile", len(cfg.Profiles))
	}
}

// pathError reports a FieldError of the document at prefix under its full
// path, and any other error at prefix.
func pathError(prefix string, err error) error {
	var fe *framework.FieldError
	if !errors.As(err, &fe) {
		if prefix == "" {
			return err
		}
		return fmt.Errorf("%s: %w", prefix, err)
	}
	path := fe.Field
	if prefix != "" && path != "" {
		path = prefix + "." + path
	} else if prefix != "" {
		path = prefix
	}
	if path == "" {
		return errors.New(fe.Message)
	}
	return fmt.Errorf("%s: %s", path, fe.Message)
}

// builder builds each plugin of a profile once, with its args, and
// remembers which args were given where (to report errors there).
type builder struct {
	reg     framework.Registry
	args    map[string]json.RawMessage
	argsAt  map[string]string // plugin name -> path of its pluginConfig entry
	plugins map[string]framework.Plugin
}

// get builds the plugin, reporting bad args at their pluginConfig entry,
// or at `at` (where the plugin is named) when it fails with default args.
func (b *builder) get(name, at string) (framework.Plugin, error) {
	if p, ok := b.plugins[name]; ok {
		return p, nil
	}
	p, err := b.reg[name](b.args[name])
	if err != nil {
		if where, ok := b.argsAt[name]; ok {
			return nil, pathError(where+".args", err)
		}
		return nil, fmt.Errorf("%s: plugin %q fails with default args: %w", at, name, err)
	}
	b.plugins[name] = p
	return p, nil
}

// build checks one profile and turns it into the framework's.
func build(in *Profile, path string, reg framework.Registry) (framework.Profile, error) {
	out := scheduler.DefaultProfile()
	if in.Name != "" {
		out.Name = in.Name
	}
	b := &builder{reg: reg, args: map[string]json.RawMessage{}, argsAt: map[string]string{}, plugins: map[string]framework.Plugin{}}
	for i, pc := range in.PluginConfig {
		at := fmt.Sprintf("%s.pluginConfig[%d]", path, i)
		if err := checkName(reg, pc.Name, at+".name"); err != nil {
			return framework.Profile{}, err
		}
		if prev, ok := b.argsAt[pc.Name]; ok {
			return framework.Profile{}, fmt.Errorf("%s.name: %q already has args at %s; merge them into one entry", at, pc.Name, prev)
		}
		b.args[pc.Name], b.argsAt[pc.Name] = pc.Args, at
	}
	filters := make([]framework.WeightedPlugin, len(out.Filters))
	for i, n := range out.Filters {
		filters[i] = framework.WeightedPlugin{Name: n}
	}
	filters, err := merge(b, filters, &in.Plugins.Filter, path+".plugins.filter", false)
	if err != nil {
		return framework.Profile{}, err
	}
	out.Scores, err = merge(b, out.Scores, &in.Plugins.Score, path+".plugins.score", true)
	if err != nil {
		return framework.Profile{}, err
	}
	out.Filters = out.Filters[:0]
	for _, f := range filters {
		out.Filters = append(out.Filters, f.Name)
	}
	return out, b.finish(&out, in.PluginConfig)
}

// finish builds every plugin the profile runs (checking the args of those
// enabled by default too) and refuses args for a plugin it does not run.
func (b *builder) finish(out *framework.Profile, config []PluginConfig) error {
	for _, n := range out.Filters {
		if _, err := b.get(n, "plugins.filter"); err != nil {
			return err
		}
	}
	for _, s := range out.Scores {
		if _, err := b.get(s.Name, "plugins.score"); err != nil {
			return err
		}
	}
	for _, pc := range config {
		if _, ok := b.plugins[pc.Name]; !ok {
			return fmt.Errorf("%s.name: args for %q, which the profile does not run; enable it under plugins.filter or plugins.score, or remove its args", b.argsAt[pc.Name], pc.Name)
		}
		if out.Args == nil {
			out.Args = map[string]json.RawMessage{}
		}
		out.Args[pc.Name] = pc.Args
	}
	return nil
}

// checkName refuses an empty or unregistered plugin name.
func checkName(reg framework.Registry, name, at string) error {
	if name == "" {
		return fmt.Errorf("%s: required: name a plugin", at)
	}
	if _, ok := reg[name]; !ok {
		return fmt.Errorf("%s: unknown plugin %q; registered plugins: %s", at, name, strings.Join(slices.Sorted(maps.Keys(reg)), ", "))
	}
	return nil
}
