package framework

import (
	"context"
	"fmt"
)

// score runs PreScore, then one pass over the feasible clusters computing
// every plugin's raw score and the candidate (in parallel chunks on large
// fleets), then each plugin's normalization, then the weighted totals.
func (f *Framework) score(ctx context.Context, c *Cycle, w *Workload) error {
	state, buf := c.buf.state, c.buf
	nf := len(c.Feasible)
	if nf == 0 {
		return nil
	}
	for p, pre := range f.preScores {
		if pre != nil {
			st := pre.PreScore(ctx, state, w)
			if st.IsSkip() {
				continue
			}
			if !st.IsSuccess() {
				return fmt.Errorf("PreScore plugin %s: %w", pre.Name(), st.AsError())
			}
		}
		buf.scorers = append(buf.scorers, p)
		c.ScorePlugins = append(c.ScorePlugins, f.scoreNames[p])
	}
	if err := buf.compileWeights(state, w); err != nil {
		return err
	}
	if err := buf.compileTiers(state, w); err != nil {
		return err
	}
	np := len(buf.scorers)
	buf.lists = resize(buf.lists, np)
	for col := range buf.lists {
		buf.lists[col] = resize(buf.lists[col], nf)
	}
	c.Candidates = resize(c.Candidates, nf)
	err := parallelize(ctx, nf, 1, func(lo, hi int) error {
		prev := state.previousFrom(c.Feasible[lo])
		for j := lo; j < hi; j++ {
			idx := int(c.Feasible[j])
			ci := state.snap.At(idx)
			for col, p := range buf.scorers {
				s, st := f.scores[p].Score(ctx, state, w, ci)
				if !st.IsSuccess() {
					return fmt.Errorf("score plugin %s on cluster %s: %w", f.scoreNames[p], ci.Name, st.AsError())
				}
				buf.lists[col][j] = ClusterScore{Index: idx, Score: s}
			}
			prev = buf.fillCandidate(&c.Candidates[j], state, ci, prev)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for col, p := range buf.scorers {
		if ext := f.scores[p].ScoreExtensions(); ext != nil {
			if st := ext.NormalizeScore(ctx, state, w, buf.lists[col]); !st.IsSuccess() {
				return fmt.Errorf("normalizing scores of plugin %s: %w", f.scoreNames[p], st.AsError())
			}
		}
	}
	c.Scores, c.Totals = resize(c.Scores, nf*np), resize(c.Totals, nf)
	for j := range nf {
		var total int64
		for col, p := range buf.scorers {
			cs := buf.lists[col][j]
			if cs.Index != int(c.Feasible[j]) {
				return fmt.Errorf("score plugin %s reordered the scores it normalized", f.scoreNames[p])
			}
			if cs.Score < MinClusterScore || cs.Score > MaxClusterScore {
				return fmt.Errorf("score plugin %s gave cluster %s score %d, outside %d..%d",
					f.scoreNames[p], state.snap.At(cs.Index).Name, cs.Score, MinClusterScore, MaxClusterScore)
			}
			c.Scores[j*np+col] = cs.Score
			total += f.weights[p] * cs.Score
		}
		c.Totals[j] = total
		c.Candidates[j].Score = total
	}
	return nil
}
