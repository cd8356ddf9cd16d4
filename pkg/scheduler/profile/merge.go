package profile

import (
	"fmt"
	"slices"
	"strings"

	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// merge applies set to the defaults of one extension point (see
// PluginSet). Filters carry weight 0.
func merge(b *builder, defaults []framework.WeightedPlugin, set *PluginSet, path string, score bool) ([]framework.WeightedPlugin, error) {
	kept, err := disable(b.reg, defaults, set.Disabled, path, score)
	if err != nil {
		return nil, err
	}
	out := slices.Clone(kept)
	for i, p := range set.Enabled {
		at := fmt.Sprintf("%s.enabled[%d]", path, i)
		if err := checkEnabled(b, set.Enabled[:i], p, at, score); err != nil {
			return nil, err
		}
		k := slices.IndexFunc(out, func(w framework.WeightedPlugin) bool { return w.Name == p.Name })
		switch {
		case k >= 0 && p.Weight != nil:
			out[k].Weight = *p.Weight
		case k >= 0: // already running, in its default place and weight
		case score:
			out = append(out, framework.WeightedPlugin{Name: p.Name, Weight: weightOr(p.Weight, defaults, p.Name)})
		default:
			out = append(out, framework.WeightedPlugin{Name: p.Name})
		}
	}
	return out, nil
}

// weightOr is the weight given, else the plugin's default weight, else 1.
func weightOr(w *int64, defaults []framework.WeightedPlugin, name string) int64 {
	if w != nil {
		return *w
	}
	if k := slices.IndexFunc(defaults, func(d framework.WeightedPlugin) bool { return d.Name == name }); k >= 0 {
		return defaults[k].Weight
	}
	return 1
}

// disable removes the disabled plugins from the defaults.
func disable(reg framework.Registry, defaults []framework.WeightedPlugin, disabled []Plugin, path string, score bool) ([]framework.WeightedPlugin, error) {
	kept := slices.Clone(defaults)
	point := pointName(score)
	for i, p := range disabled {
		at := fmt.Sprintf("%s.disabled[%d]", path, i)
		if p.Weight != nil {
			return nil, fmt.Errorf("%s.weight: a disabled plugin takes no weight; remove it", at)
		}
		if slices.ContainsFunc(disabled[:i], func(q Plugin) bool { return q.Name == p.Name }) {
			return nil, fmt.Errorf("%s.name: %q is disabled twice; remove one", at, p.Name)
		}
		if p.Name == "*" {
			kept = kept[:0]
			continue
		}
		if err := checkName(reg, p.Name, at+".name"); err != nil {
			return nil, err
		}
		if !slices.ContainsFunc(defaults, func(d framework.WeightedPlugin) bool { return d.Name == p.Name }) {
			return nil, fmt.Errorf("%s.name: %q is not a default %s plugin, so there is nothing to disable; default %s plugins: %s",
				at, p.Name, point, point, names(defaults))
		}
		kept = slices.DeleteFunc(kept, func(d framework.WeightedPlugin) bool { return d.Name == p.Name })
	}
	return kept, nil
}

// checkEnabled checks one enabled plugin: known, not listed before, of the
// extension point's kind, with a weight only for a score plugin and then
// within 1..MaxWeight.
func checkEnabled(b *builder, before []Plugin, p Plugin, at string, score bool) error {
	if p.Name == "*" {
		return fmt.Errorf("%s.name: \"*\" only disables; enable plugins by name", at)
	}
	if err := checkName(b.reg, p.Name, at+".name"); err != nil {
		return err
	}
	if slices.ContainsFunc(before, func(q Plugin) bool { return q.Name == p.Name }) {
		return fmt.Errorf("%s.name: %q is enabled twice; remove one", at, p.Name)
	}
	if p.Weight != nil && !score {
		return fmt.Errorf("%s.weight: a filter takes no weight; remove it (weights are for plugins.score)", at)
	}
	if p.Weight != nil && (*p.Weight < 1 || *p.Weight > MaxWeight) {
		return fmt.Errorf("%s.weight: must be between 1 and %d, got %d", at, MaxWeight, *p.Weight)
	}
	pl, err := b.get(p.Name, at+".name")
	if err != nil {
		return err
	}
	ok := false
	if score {
		_, ok = pl.(framework.ScorePlugin)
	} else {
		_, ok = pl.(framework.FilterPlugin)
	}
	if !ok {
		return fmt.Errorf("%s.name: %q is not a %s plugin; enable it under the extension point it implements", at, p.Name, pointName(score))
	}
	return nil
}

func pointName(score bool) string {
	if score {
		return "score"
	}
	return "filter"
}

func names(ws []framework.WeightedPlugin) string {
	var s []string
	for _, w := range ws {
		s = append(s, w.Name)
	}
	return strings.Join(s, ", ")
}
