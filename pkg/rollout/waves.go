package rollout

import (
	"cmp"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
)

// Wave is a group of clusters a change reaches together when every
// cluster before it is done at once: the most a rollout can send at a time.
type Wave struct {
	// Stage names the wave's stage (Staged rollouts).
	Stage string `json:"stage,omitempty"`
	// Clusters of the wave, by name.
	Clusters []string `json:"clusters"`
	// Approval the wave waits for before it starts: Before (of its
	// stage), After (of the stage before), or "".
	Approval policyv1alpha1.ApprovalMode `json:"approval,omitempty"`
	// WaitSeconds the wave waits, after the wave before it, for the stage
	// before's waitSeconds.
	WaitSeconds int32 `json:"waitSeconds,omitempty"`
}

// Waves lists the waves a change would go out in under s, the fastest it
// can: each wave after the one before is done. Decide sends clusters as
// soon as a slot is free, so a real rollout may mix waves; the number of
// waves and their order hold. Clusters selected by several stages are
// left out (the rollout would stop; Decide says so).
func Waves(s *policyv1alpha1.RolloutStrategy, clusters []Cluster) []Wave {
	sorted := slices.Clone(clusters)
	slices.SortFunc(sorted, func(a, b Cluster) int { return cmp.Compare(a.Name, b.Name) })
	if !s.Gated() {
		w := Wave{}
		for _, c := range sorted {
			w.Clusters = append(w.Clusters, c.Name)
		}
		return []Wave{w}
	}
	d := &decider{s: s}
	var out []Wave
	prev := -1
	for i := 0; i <= len(s.Stages); i++ {
		var names []string
		for _, c := range sorted {
			if d.stageOf(c) == i {
				names = append(names, c.Name)
			}
		}
		if len(names) == 0 {
			continue
		}
		slots := len(names)
		if s.Type == policyv1alpha1.RolloutProgressive || s.MaxConcurrency != nil {
			def := len(names)
			if s.Type == policyv1alpha1.RolloutProgressive {
				def = defaultProgressiveSlots
			}
			slots = max(scaled(s.MaxConcurrency, len(sorted), def), 1)
		}
		for start := 0; start < len(names); start += slots {
			w := Wave{Stage: d.stageName(i), Clusters: names[start:min(start+slots, len(names))]}
			if s.Type != policyv1alpha1.RolloutStaged {
				w.Stage = ""
			}
			if start == 0 && s.Type == policyv1alpha1.RolloutStaged {
				if prev >= 0 {
					w.WaitSeconds = s.Stages[prev].WaitSeconds
					if s.Stages[prev].Approval == policyv1alpha1.ApprovalAfter {
						w.Approval = policyv1alpha1.ApprovalAfter
					}
				}
				if i < len(s.Stages) && s.Stages[i].Approval == policyv1alpha1.ApprovalBefore {
					w.Approval = policyv1alpha1.ApprovalBefore
				}
			}
			out = append(out, w)
		}
		prev = i
	}
	return out
}

// StageSelectors are the selectors of a strategy's stages, compiled once.
type StageSelectors []labels.Selector

// Selectors compiles the stages' cluster selectors; an error names the stage.
func Selectors(s *policyv1alpha1.RolloutStrategy) (StageSelectors, error) {
	if s == nil || s.Type != policyv1alpha1.RolloutStaged {
		return nil, nil
	}
	out := make(StageSelectors, len(s.Stages))
	for i, st := range s.Stages {
		sel, err := metav1.LabelSelectorAsSelector(&st.ClusterSelector)
		if err != nil {
			return nil, fmt.Errorf("spec.rollout.stages[%d].clusterSelector: %w", i, err)
		}
		out[i] = sel
	}
	return out, nil
}

// Of returns the indexes of the stages selecting a cluster of these labels.
func (ss StageSelectors) Of(clusterLabels map[string]string) []int {
	var out []int
	for i, sel := range ss {
		if sel.Matches(labels.Set(clusterLabels)) {
			out = append(out, i)
		}
	}
	return out
}
