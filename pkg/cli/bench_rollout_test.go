package cli

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/shepherd-io/shepherd/internal/bench/fleetbench"
)

// TestBenchRolloutRefuses: a size that cannot run is refused before
// anything starts, with the flag named.
func TestBenchRolloutRefuses(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--clusters", "0"}, "--clusters 0: at least 1"},
		{[]string{"--stages", "0"}, "--stages 0: at least 1 and at most --clusters"},
		{[]string{"--clusters", "5", "--stages", "6"}, "--stages 6: at least 1 and at most --clusters (5)"},
		{[]string{"--min-success-seconds", "-1"}, "neither may be negative"},
		{[]string{"--min-success-seconds", "0", "--wait-seconds", "0"}, "both 0: the floor"},
		{[]string{"--timeout", "0s"}, "--timeout 0s: must be positive"},
		{[]string{"-o", "yaml"}, `--output "yaml" is not supported`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, err := execute(t, newBenchCommand(), append([]string{"rollout"}, tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to say %q", err, tc.want)
			}
		})
	}
}

func TestRolloutReport(t *testing.T) {
	rep := &fleetbench.RolloutReport{Clusters: 1000, Stages: 10, MinSuccessSeconds: 5, FloorSeconds: 50, CompleteSeconds: 62.5, RatioToFloor: 1.25,
		StageSeconds: []float64{6, 6, 7}, HubWrites: 4000, HubWritesPerCluster: 4, LeaseWrites: 6000, BindingBytes: 300000,
		Writes: []fleetbench.RequestRate{{Verb: "PATCH", Resource: "works", Subresource: "status", PerWorkload: 1.5}}}
	var text strings.Builder
	if err := printRollout(&text, rep); err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, line := range strings.Split(text.String(), "\n") {
		rows = append(rows, strings.Join(strings.Fields(line), " "))
	}
	for _, want := range []string{
		"rollout: one image change over 1000 simulated Pull clusters in 10 stages (minSuccessSeconds 5, waitSeconds 0)",
		"complete after 62.5 s; floor (the sum of the waits) 50 s; ratio 1.25",
		"stages took (s): 6 6 7",
		"hub writes: 4000, 4.00 per cluster (Lease renewals apart: 6000); the binding is 300000 bytes",
		"PATCH works/status 1.50",
	} {
		if !slices.Contains(rows, want) {
			t.Errorf("text report lacks the line %q:\n%s", want, text.String())
		}
	}
	data, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"ratioToFloor", "floorSeconds", "completeSeconds", "hubWritesPerCluster", "writesPerCluster"} {
		if _, ok := got[key]; !ok {
			t.Errorf("JSON lacks %q: %s", key, data)
		}
	}
}
