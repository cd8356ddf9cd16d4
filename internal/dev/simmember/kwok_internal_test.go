package simmember

import (
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/kwok/pkg/apis/internalversion"
)

const podStage = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata: {name: pod-unready}
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - {key: '.spec.containers.[].image', operator: In, values: [bad]}
  weight: 1
  next: {statusTemplate: "phase: Running"}
`

// TestLoadKwokStages: extra stages join kwok's defaults under their
// resource; a stream that is not kwok stages is refused naming what is
// wrong, before a member starts.
func TestLoadKwokStages(t *testing.T) {
	shipped, err := os.ReadFile("../../../test/e2e/testdata/kwok-unready-image.yaml")
	if err != nil {
		t.Fatal(err)
	}
	podRef := internalversion.StageResourceRef{APIGroup: "v1", Kind: "Pod"}
	base, err := loadKwokStages(nil)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		extra   [][]byte
		pods    int    // extra Pod stages loaded
		wantErr string // substring; "" for none
	}{
		{name: "none", pods: 0},
		{name: "one stage", extra: [][]byte{[]byte(podStage)}, pods: 1},
		{name: "two documents in one stream", extra: [][]byte{[]byte(podStage + "---\n" + strings.Replace(podStage, "pod-unready", "pod-unready-2", 1))}, pods: 2},
		{name: "the stage the end-to-end tests ship", extra: [][]byte{shipped}, pods: 1},
		{name: "not YAML", extra: [][]byte{[]byte("kind: [")}, wantErr: "kwok stages[0]: document 0"},
		{name: "empty", extra: [][]byte{[]byte("# nothing\n")}, wantErr: "kwok stages[0]: no kwok Stage in it"},
		{name: "another kind", extra: [][]byte{[]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")}, wantErr: "document 0 is v1 ConfigMap: want apiVersion kwok.x-k8s.io/v1alpha1, kind Stage"},
		{name: "misspelt field", extra: [][]byte{[]byte(strings.Replace(podStage, "weight:", "wieght:", 1))}, wantErr: `unknown field "wieght"`},
		{name: "no name", extra: [][]byte{[]byte(strings.Replace(podStage, "{name: pod-unready}", "{}", 1))}, wantErr: "metadata.name is required"},
		{name: "no resource", extra: [][]byte{[]byte(strings.Replace(podStage, "{apiGroup: v1, kind: Pod}", "{apiGroup: v1}", 1))}, wantErr: "stage pod-unready: spec.resourceRef.kind is required"},
		{name: "no selector", extra: [][]byte{[]byte(strings.Replace(podStage, "  selector:\n    matchExpressions:\n    - {key: '.spec.containers.[].image', operator: In, values: [bad]}\n", "", 1))}, wantErr: "stage pod-unready: spec.selector is required"},
		{name: "In without values", extra: [][]byte{[]byte(strings.Replace(podStage, "operator: In, values: [bad]", "operator: In", 1))}, wantErr: `spec.selector.matchExpressions[0] (key ".spec.containers.[].image")`},
		{name: "a bad second stream names it", extra: [][]byte{[]byte(podStage), []byte("kind: [")}, wantErr: "kwok stages[1]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := loadKwokStages(tc.extra)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want an error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if n := len(got[podRef]) - len(base[podRef]); n != tc.pods {
				t.Fatalf("%d extra Pod stages, want %d", n, tc.pods)
			}
		})
	}
}
