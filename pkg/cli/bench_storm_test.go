package cli

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/shepherd-io/shepherd/internal/bench/fleetbench"
)

// TestBenchStormRefuses: a size that cannot run is refused before anything
// starts, with the flag named.
func TestBenchStormRefuses(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--clusters", "1"}, "--clusters 1: at least 2"},
		{[]string{"--works", "0"}, "--works 0: at least 1"},
		{[]string{"--writers", "-3"}, "--writers -3: at least 1"},
		{[]string{"--workloads", "0"}, "--workloads 0: at least 1"},
		{[]string{"--timeout", "0s"}, "--timeout 0s: must be positive"},
		{[]string{"--hub-max-in-flight", "2"}, "--hub-max-in-flight 2: at least 3"},
		{[]string{"-o", "yaml"}, `--output "yaml" is not supported`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, err := execute(t, newBenchCommand(), append([]string{"storm"}, tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to say %q", err, tc.want)
			}
		})
	}
}

func TestStormReport(t *testing.T) {
	rep := &fleetbench.StormReport{Clusters: 3, Works: 1000, Writers: 64, Workloads: 100, HubMaxInFlight: 60,
		Without: fleetbench.StormPhase{StatusFlowSchema: "service-accounts", StatusPriorityLevel: "workload-low",
			SchedulingP50Seconds: 1.5, SchedulingP99Seconds: 4, ScheduledSeconds: 6, StatusWritesPerSecond: 900},
		With: fleetbench.StormPhase{StatusFlowSchema: "shepherd-status", StatusPriorityLevel: "shepherd-status",
			SchedulingP50Seconds: 0.25, SchedulingP99Seconds: 0.5, ScheduledSeconds: 1.5, StatusWritesPerSecond: 400}}
	var text strings.Builder
	if err := printStorm(&text, rep); err != nil {
		t.Fatal(err)
	}
	// Each phase's row, whatever the column widths.
	var rows []string
	for _, line := range strings.Split(text.String(), "\n") {
		rows = append(rows, strings.Join(strings.Fields(line), " "))
	}
	for _, want := range []string{
		"storm: 1000 Works flapping, 64 writers, 3 simulated clusters, hub serving 60 requests at once; 100 workloads scheduled per phase",
		"without service-accounts/workload-low 1.50 s 4.00 s 6.0 s 900 0",
		"with shepherd-status/shepherd-status 0.25 s 0.50 s 1.5 s 400 0",
		"scheduling p99 without / with: 8.0x",
	} {
		if !slices.Contains(rows, want) {
			t.Errorf("text report lacks the line %q:\n%s", want, text.String())
		}
	}

	data, err := json.Marshal(stormJSON{StormReport: rep, P99Ratio: rep.P99Ratio()})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if got["p99Ratio"] != 8.0 {
		t.Errorf("p99Ratio = %v, want 8", got["p99Ratio"])
	}
	for _, phase := range []string{"without", "with"} {
		p, _ := got[phase].(map[string]any)
		for _, key := range []string{"schedulingP50Seconds", "schedulingP99Seconds", "statusPriorityLevel", "statusWritesPerSecond"} {
			if _, ok := p[key]; !ok {
				t.Errorf("JSON %s lacks %q: %s", phase, key, data)
			}
		}
	}
	if (fleetbench.StormReport{}).P99Ratio() != 0 {
		t.Error("the ratio of an unmeasured report is not 0")
	}
}
