package integration

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/shepherd-io/shepherd/test/testenv"
)

// TestRolloutRejectsBadInput feeds each rule of spec.rollout bad input: the
// API server refuses it with a message naming the field.
func TestRolloutRejectsBadInput(t *testing.T) {
	suite.Hub(t)
	cases := []struct {
		name    string
		rollout string
		want    []string
	}{
		{"maxConcurrency zero", "type: Progressive\nmaxConcurrency: 0",
			[]string{"spec.rollout.maxConcurrency", "at least 1"}},
		{"maxConcurrency over 100%", "type: Progressive\nmaxConcurrency: 150%",
			[]string{"spec.rollout.maxConcurrency", "from 1% to 100%"}},
		{"maxConcurrency 0%", "type: Progressive\nmaxConcurrency: 0%",
			[]string{"spec.rollout.maxConcurrency", "from 1% to 100%"}},
		{"maxConcurrency not a percentage", "type: Progressive\nmaxConcurrency: half",
			[]string{"spec.rollout.maxConcurrency"}},
		{"maxConcurrency with type All", "type: All\nmaxConcurrency: 2",
			[]string{"spec.rollout.maxConcurrency", "type All sends every cluster at once"}},
		{"maxFailures negative", "type: Progressive\nmaxFailures: -1",
			[]string{"spec.rollout.maxFailures", "at least 0"}},
		{"maxFailures over 100%", "type: Progressive\nmaxFailures: 101%",
			[]string{"spec.rollout.maxFailures", "from 0% to 100%"}},
		{"unknown type", "type: Canary",
			[]string{"spec.rollout.type", `Unsupported value: "Canary"`}},
		{"Staged without stages", "type: Staged",
			[]string{"spec.rollout.stages", "a Staged rollout needs at least one stage"}},
		{"stages on a Progressive rollout", "type: Progressive\nstages:\n- {name: canary, clusterSelector: {matchLabels: {ring: canary}}}",
			[]string{"spec.rollout.stages", "type Staged only"}},
		{"stage without a selector", "type: Staged\nstages:\n- {name: canary}",
			[]string{"spec.rollout.stages[0].clusterSelector", "Required value"}},
		{"stage with an empty selector", "type: Staged\nstages:\n- {name: canary, clusterSelector: {}}",
			[]string{"spec.rollout.stages[0].clusterSelector", "needs matchLabels or matchExpressions"}},
		{"approval outside the enum", "type: Staged\nstages:\n- {name: canary, clusterSelector: {matchLabels: {ring: canary}}, approval: Maybe}",
			[]string{"spec.rollout.stages[0].approval", `Unsupported value: "Maybe"`}},
		{"two stages of one name", "type: Staged\nstages:\n- {name: canary, clusterSelector: {matchLabels: {ring: a}}}\n- {name: canary, clusterSelector: {matchLabels: {ring: b}}}",
			[]string{"spec.rollout.stages[1]", "Duplicate value"}},
		{"negative minSuccessSeconds", "type: Progressive\nminSuccessSeconds: -1",
			[]string{"spec.rollout.minSuccessSeconds", "greater than or equal to 0"}},
		{"zero progressDeadlineSeconds", "type: Progressive\nprogressDeadlineSeconds: 0",
			[]string{"spec.rollout.progressDeadlineSeconds", "greater than or equal to 1"}},
	}
	ctx := context.Background()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			yaml := policy("bad-rollout", selectNginx+"rollout:\n"+indent(tc.rollout, "  "))
			_, err := hub.Create(ctx, []byte(yaml))
			if err == nil {
				t.Fatalf("the API server accepted an invalid rollout:\n%s", yaml)
			}
			if !testenv.IsInvalid(unwrapStatus(err)) {
				t.Fatalf("want an Invalid error, got %v (reason %s)", err, apierrors.ReasonForError(unwrapStatus(err)))
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not mention %q:\n%v", w, err)
				}
			}
		})
	}
}
