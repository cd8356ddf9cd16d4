package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shepherd-io/shepherd/pkg/scenario/scenariotest"
)

func TestBenchFleet20(t *testing.T) {
	file := scenariotest.BenchFile(t, scenariotest.Fleet20)
	profile := filepath.Join(t.TempDir(), "cpu.out")
	out, err := execute(t, newBenchCommand(), "--scenario", file, "-o", "json", "--cpuprofile", profile)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatalf("bench -o json is not JSON: %v\n%s", err, out)
	}
	for _, key := range []string{"workloads", "scheduled", "unschedulable", "workloadsPerSecond", "p50Micros", "p99Micros", "allocsPerWorkload"} {
		if _, ok := raw[key]; !ok {
			t.Errorf("bench JSON lacks %q", key)
		}
	}
	var r benchReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	unschedulable := 0
	for reason, n := range r.Unschedulable {
		if strings.ContainsAny(reason, "0123456789") && !strings.Contains(reason, "/v1") {
			t.Errorf("category %q carries counts", reason)
		}
		unschedulable += n
	}
	if r.Workloads != 200 || r.Scheduled+unschedulable != 200 || r.Scheduled == 0 {
		t.Errorf("counts: %+v", r)
	}
	if r.WorkloadsPerSecond <= 0 || r.P50Micros <= 0 || r.P99Micros < r.P50Micros || r.AllocsPerWorkload <= 0 {
		t.Errorf("measurements: %+v", r)
	}
	if st, err := os.Stat(profile); err != nil || st.Size() == 0 {
		t.Errorf("no CPU profile written: %v", err)
	}

	text, err := execute(t, newBenchCommand(), "--scenario", file)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"workloads            200", "workloads/s", "latency p99", "allocs per workload"} {
		if !strings.Contains(text, want) {
			t.Errorf("text output lacks %q:\n%s", want, text)
		}
	}
}

func TestBenchErrors(t *testing.T) {
	if _, err := execute(t, newBenchCommand(), "--scenario", "/nonexistent/fleet.json"); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing file: %v", err)
	}
	if _, err := execute(t, newBenchCommand(), "--scenario", "x.json", "-o", "table"); err == nil || !strings.Contains(err.Error(), `--output "table" is not supported`) {
		t.Errorf("bad output: %v", err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--simulated-pull-clusters", "-1"}, "neither may be negative"},
		{[]string{"--members", "0"}, "together they must be at least 1"},
		{[]string{"--timeout", "0s"}, "--timeout 0s must be positive"},
		{[]string{"--deployments", "0"}, "--deployments 0 and --policies 10 must each be at least 1"},
	} {
		if _, err := execute(t, newBenchE2ECommand(), tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("bench e2e %v: %v, want %q", tc.args, err, tc.want)
		}
	}
	for _, args := range [][]string{{"--objects", "0"}, {"--workers", "-1"}} {
		if _, err := execute(t, newBenchHubCommand(), args...); err == nil || !strings.Contains(err.Error(), "must be positive") {
			t.Errorf("bench hub %v: %v", args, err)
		}
	}
}

// bench --in-order schedules each workload on the room the earlier ones
// left: 12 of the 20 workloads of fillingFleet place.
func TestBenchInOrder(t *testing.T) {
	file := fillingFleet(t)
	for _, tc := range []struct {
		args      []string
		scheduled int
	}{
		{[]string{"--in-order"}, 12},
		{nil, 20},
	} {
		out, err := execute(t, newBenchCommand(), append([]string{"--scenario", file, "-o", "json"}, tc.args...)...)
		if err != nil {
			t.Fatal(err)
		}
		var r benchReport
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		unschedulable := 0
		for _, n := range r.Unschedulable {
			unschedulable += n
		}
		if r.Scheduled != tc.scheduled || unschedulable != 20-tc.scheduled || r.InOrder != (tc.args != nil) ||
			r.WorkloadsPerSecond <= 0 || r.AllocsPerWorkload <= 0 {
			t.Errorf("bench %v: %+v, want %d scheduled", tc.args, r, tc.scheduled)
		}
	}
	text, err := execute(t, newBenchCommand(), "--scenario", file, "--in-order")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"placed               in order", "scheduled            12", "unschedulable        8"} {
		if !strings.Contains(text, want) {
			t.Errorf("text output lacks %q:\n%s", want, text)
		}
	}
	if _, err := execute(t, newBenchCommand(), "--scenario", file, "--in-order=2"); err == nil || !strings.Contains(err.Error(), `invalid argument "2" for "--in-order" flag`) {
		t.Errorf("bad --in-order: %v", err)
	}
}

// get refuses arguments and flags that do not go together, before it
// contacts the hub.
func TestGetArguments(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"rendered"}, "rendered needs TYPE/NAME"},
		{[]string{"rendered", "deployment/web", "-A"}, "use --namespace, not --all-namespaces"},
		{[]string{"placements", "web"}, "placements takes no name"},
		{[]string{"placements", "--cluster", "member1"}, "--cluster applies to rendered only"},
	} {
		if _, err := execute(t, newGetCommand(), tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("get %v: %v, want %q", tc.args, err, tc.want)
		}
	}
}
