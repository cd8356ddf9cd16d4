package simmember

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kwok/pkg/apis/internalversion"
	"sigs.k8s.io/kwok/pkg/utils/lifecycle"
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

// TestKwokStagesBuildConcurrently: once warmKwokCEL has run, kwok
// controllers of several members can build their stages' CEL environments
// at once. Before it, members starting together crashed the process
// ("concurrent map writes" in the CEL adapter's type caches); run with
// -race, this test reported that race.
func TestKwokStagesBuildConcurrently(t *testing.T) {
	const members = 8
	stageSets := make([]map[internalversion.StageResourceRef][]*internalversion.Stage, members)
	for i := range stageSets {
		s, err := loadKwokStages([][]byte{[]byte(podStage)})
		if err != nil {
			t.Fatal(err)
		}
		stageSets[i] = s
	}
	if err := warmKwokCEL(context.Background(), stageSets[0]); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2*members)
	for _, stages := range stageSets {
		for ref, obj := range map[internalversion.StageResourceRef]any{
			{APIGroup: "v1", Kind: "Node"}: &corev1.Node{},
			{APIGroup: "v1", Kind: "Pod"}:  &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Image: "bad"}}}},
		} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				lc, err := lifecycle.NewLifecycle(stages[ref])
				if err == nil {
					_, err = lc.Match(context.Background(), &lifecycle.Event{Data: obj})
				}
				if err != nil {
					errs <- fmt.Errorf("%s: %w", ref.Kind, err)
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
