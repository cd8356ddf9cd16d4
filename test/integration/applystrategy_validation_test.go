package integration

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shepherd-io/shepherd/test/testenv"
)

// TestApplyStrategyRejectsBadInput feeds each rule of spec.applyStrategy
// bad input: the API server refuses it with a message naming the field.
func TestApplyStrategyRejectsBadInput(t *testing.T) {
	suite.Hub(t)
	cases := []struct {
		name string
		spec string
		want []string
	}{
		{"unknown type", "applyStrategy: {type: ClientSideApply}",
			[]string{"spec.applyStrategy.type", `Unsupported value: "ClientSideApply"`}},
		{"unknown whenToApply", "applyStrategy: {whenToApply: Never}",
			[]string{"spec.applyStrategy.whenToApply", `Unsupported value: "Never"`}},
		{"unknown whenToTakeOver", "applyStrategy: {whenToTakeOver: Sometimes}",
			[]string{"spec.applyStrategy.whenToTakeOver", `Unsupported value: "Sometimes"`}},
		{"IfNoDiff with Overwrite", "conflictResolution: Overwrite\napplyStrategy: {whenToTakeOver: IfNoDiff}",
			[]string{"spec.applyStrategy.whenToTakeOver: IfNoDiff", "conflictResolution: Overwrite"}},
		{"unknown takeOverFrom", "applyStrategy: {whenToTakeOver: IfNoDiff, takeOverFrom: OCM}",
			[]string{"spec.applyStrategy.takeOverFrom", `Unsupported value: "OCM"`}},
		{"takeOverFrom without IfNoDiff", "applyStrategy: {takeOverFrom: Karmada}",
			[]string{"spec.applyStrategy", "takeOverFrom", "set applyStrategy.whenToTakeOver: IfNoDiff"}},
		{"takeOverFrom with whenToTakeOver: Always", "applyStrategy: {whenToTakeOver: Always, takeOverFrom: Karmada}",
			[]string{"spec.applyStrategy", "set applyStrategy.whenToTakeOver: IfNoDiff"}},
	}
	ctx := context.Background()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			yaml := policy("bad-apply", selectNginx+tc.spec+"\n")
			_, err := hub.Create(ctx, []byte(yaml))
			if err == nil {
				t.Fatalf("the API server accepted an invalid applyStrategy:\n%s", yaml)
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
	// The strategies that make sense are accepted.
	for _, spec := range []string{
		"applyStrategy: {type: ReportDiff}",
		"applyStrategy: {whenToApply: IfNotDrifted}",
		"applyStrategy: {whenToTakeOver: IfNoDiff}",
		"applyStrategy: {whenToTakeOver: IfNoDiff, takeOverFrom: Karmada}",
	} {
		yaml := policy("good-apply", selectNginx+spec+"\n")
		objs, err := hub.Create(ctx, []byte(yaml))
		if err != nil {
			t.Errorf("refused %s: %v", spec, err)
			continue
		}
		ri, err := hub.Resource(objs[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := ri.Delete(ctx, objs[0].GetName(), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}
