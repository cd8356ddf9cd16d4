package framework

import (
	"encoding/json"
	"maps"
	"slices"
)

// WeightedPlugin is a score plugin and how much its 0..100 score counts.
type WeightedPlugin struct {
	Name   string
	Weight int64
}

// Profile fixes which plugins run and in which order. Lists, not maps: the
// order of filters decides which reason a cluster reports (and how fast
// cheap filters drop clusters), and must never depend on map iteration.
type Profile struct {
	// Name of the profile (a policy's schedulerName).
	Name string
	// Filters in the order they run; a cluster stops at the first failure.
	Filters []string
	// Scores in the order they are reported.
	Scores []WeightedPlugin
	// Args are the plugins' arguments by plugin name (a plugin missing
	// here gets its defaults). Only looked up by name, never iterated, so
	// the map cannot make the profile's behaviour depend on its order.
	Args map[string]json.RawMessage
}

// WithArgs returns a copy of the profile giving the named plugin args.
func (p Profile) WithArgs(name string, args json.RawMessage) Profile {
	m := maps.Clone(p.Args)
	if m == nil {
		m = map[string]json.RawMessage{}
	}
	m[name] = args
	p.Args = m
	return p
}

// Disable returns a copy of the profile without the named plugins.
func (p Profile) Disable(names ...string) Profile {
	p.Filters = slices.DeleteFunc(slices.Clone(p.Filters), func(n string) bool { return slices.Contains(names, n) })
	p.Scores = slices.DeleteFunc(slices.Clone(p.Scores), func(w WeightedPlugin) bool { return slices.Contains(names, w.Name) })
	return p
}

// WithFilter returns a copy of the profile with a filter appended (an
// out-of-tree filter runs after the in-tree ones).
func (p Profile) WithFilter(name string) Profile {
	p.Filters = append(slices.Clone(p.Filters), name)
	return p
}

// WithScore returns a copy of the profile with a weighted score plugin appended.
func (p Profile) WithScore(name string, weight int64) Profile {
	p.Scores = append(slices.Clone(p.Scores), WeightedPlugin{Name: name, Weight: weight})
	return p
}
