package framework

import (
	"encoding/json"
	"fmt"
)

// Factory builds a plugin from its arguments: JSON, nil when the profile
// gives none, which must mean the plugin's defaults. A plugin with
// tunables decodes them with DecodeArgs into its own Args type; one with
// none checks them with NoArgs, so a misplaced field is refused rather than
// ignored. Plugins are built once per Framework and shared by all its
// cycles, so they must keep per-workload data in the CycleState.
type Factory func(args json.RawMessage) (Plugin, error)

// Registry maps plugin names to factories. The in-tree plugins are
// registered by package scheduler; out-of-tree plugins are merged in.
type Registry map[string]Factory

// NewRegistry returns an empty registry.
func NewRegistry() Registry { return Registry{} }

// Register adds a factory; a name can be registered once.
func (r Registry) Register(name string, f Factory) error {
	if _, ok := r[name]; ok {
		return fmt.Errorf("plugin %q is already registered", name)
	}
	r[name] = f
	return nil
}

// Merge registers every factory of in.
func (r Registry) Merge(in Registry) error {
	for name, f := range in {
		if err := r.Register(name, f); err != nil {
			return err
		}
	}
	return nil
}
