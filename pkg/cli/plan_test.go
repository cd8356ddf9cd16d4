package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/shepherd-io/shepherd/pkg/scenario/scenariotest"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// execute runs a command with args and returns its stdout.
func execute(t *testing.T, cmd *cobra.Command, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.Execute()
	return out.String(), err
}

func TestPlanFleet20JSON(t *testing.T) {
	file := scenariotest.BenchFile(t, scenariotest.Fleet20)
	out, err := execute(t, newPlanCommand(), "-f", file, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var report planReport
	if err := json.Unmarshal([]byte(out), &report); err != nil {
		t.Fatalf("plan -o json is not JSON: %v", err)
	}
	if report.Clusters != 20 || len(report.Workloads) != 200 {
		t.Fatalf("%d clusters, %d workloads", report.Clusters, len(report.Workloads))
	}
	scheduled := 0
	for _, w := range report.Workloads {
		if !w.Scheduled {
			if w.Reason == "" || len(w.Targets) != 0 {
				t.Errorf("%s/%s: unscheduled without a reason or with targets", w.Namespace, w.Name)
			}
			continue
		}
		scheduled++
		if len(w.Targets) == 0 || w.Reason != "" || w.Explanations != nil {
			t.Errorf("%s/%s: %+v", w.Namespace, w.Name, w)
		}
	}
	if scheduled < 150 {
		t.Errorf("only %d of 200 workloads scheduled", scheduled)
	}
	// app-000001 is Duplicated: every target runs all 100 replicas.
	w := report.Workloads[0]
	if w.Name != "app-000001" || !w.Scheduled {
		t.Fatalf("first workload: %+v", w)
	}
	for _, tc := range w.Targets {
		if tc.Replicas != w.Replicas {
			t.Errorf("duplicated target %s has %d replicas, want %d", tc.Cluster, tc.Replicas, w.Replicas)
		}
	}
}

func TestPlanExplain(t *testing.T) {
	file := scenariotest.BenchFile(t, scenariotest.Fleet20)
	out, err := execute(t, newPlanCommand(), "-f", file, "-o", "yaml", "--explain", "--workload", "team-01/app-000002")
	if err != nil {
		t.Fatal(err)
	}
	var report planReport
	if err := yaml.Unmarshal([]byte(out), &report); err != nil {
		t.Fatalf("plan -o yaml is not YAML: %v", err)
	}
	if len(report.Workloads) != 1 || len(report.Workloads[0].Explanations) != 20 {
		t.Fatalf("want one workload with 20 explanations: %s", out)
	}
	filtered, selected := 0, 0
	for _, e := range report.Workloads[0].Explanations {
		switch {
		case e.FilteredBy != "":
			filtered++
		case e.Selected:
			selected++
			if len(e.Scores) == 0 {
				t.Errorf("selected %s has no scores", e.Cluster)
			}
		}
	}
	if filtered == 0 || selected != len(report.Workloads[0].Targets) {
		t.Errorf("%d filtered, %d selected of %d targets", filtered, selected, len(report.Workloads[0].Targets))
	}

	table, err := execute(t, newPlanCommand(), "-f", file, "--explain", "--workload", "app-000002")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"NAMESPACE", "team-01/app-000002:", "FILTERED BY", "ClusterAffinity"} {
		if !strings.Contains(table, want) {
			t.Errorf("table output lacks %q:\n%s", want, table)
		}
	}
}

func TestPlanErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"clusters": [{"name": "a"}], "workloads": [{"name": "w", "placement": {"replicaScheduling": "Nope"}}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-f", filepath.Join(dir, "missing.json")}, "no such file"},
		{[]string{"-f", bad}, `bad.json: document 1: workloads[0] (/w): placement.replicaScheduling "Nope"`},
		{[]string{"-f", bad, "-o", "xml"}, `--output "xml" is not supported: use table, json or yaml`},
		{[]string{}, `required flag(s) "filename" not set`},
		{[]string{"-f", bad, "--in-order=maybe"}, `invalid argument "maybe" for "--in-order" flag`},
	}
	for _, tt := range tests {
		_, err := execute(t, newPlanCommand(), tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("plan %v: got %v, want one line containing %q", tt.args, err, tt.want)
		}
	}
}

// The rescale example: placements that already run (spec.clusters) keep
// their promises when scaled or re-weighted. Before the divisor method and
// stateless static weights, the first two drifted (3:1, 3:3) and the last
// kept three clusters (1 + 3 + 2).
func TestPlanRescaleExample(t *testing.T) {
	out, err := execute(t, newPlanCommand(), "-f", filepath.Join("..", "..", "examples", "plan", "rescale.yaml"), "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var report planReport
	if err := json.Unmarshal([]byte(out), &report); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"ratio-kept":   "member-a:2 member-d:2", // weights 1:1 scaled 3 -> 4
		"reweighted":   "member-a:4 member-d:2", // weights 1:1 -> 2:1
		"held":         "member-b:3 member-c:3", // NoSchedule and a discovery gap keep what runs
		"consolidated": "member-d:6",            // Aggregated 12 -> 6 where member-d holds 6
	}
	if len(report.Workloads) != len(want) {
		t.Fatalf("%d workloads, want %d", len(report.Workloads), len(want))
	}
	for _, w := range report.Workloads {
		var got []string
		for _, tc := range w.Targets {
			got = append(got, fmt.Sprintf("%s:%d", tc.Cluster, tc.Replicas))
		}
		if s := strings.Join(got, " "); s != want[w.Name] {
			t.Errorf("%s: got %q, want %q (%s)", w.Name, s, want[w.Name], w.Reason)
		}
	}
}

// The plan of examples/plan/divided-components.yaml: each cluster's
// components, the head marked, why a workload that asked is placed whole,
// and what does not fit where.
func TestPlanDividedComponentsExample(t *testing.T) {
	file := filepath.Join("..", "..", "examples", "plan", "divided-components.yaml")
	out, err := execute(t, newPlanCommand(), "-f", file)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"member-a(head):coordinator=1,member-b:workers=4,member-c:workers=6",
		"member-a:coordinator=1+workers=3,member-b:coordinator=1+workers=3,member-c:coordinator=1+workers=3  placed whole, not divided: component \"coordinator\" has no replicasPath",
		`components: component "workers" (20 × cpu 2, memory 4Gi) does not fit: 13 of 20 fit in the room of the clusters (member-c 6, member-b 4, member-a 3), with the head on member-a`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("plan lacks %q:\n%s", want, out)
		}
	}
	out, err = execute(t, newPlanCommand(), "-f", file, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var report planReport
	if err := json.Unmarshal([]byte(out), &report); err != nil {
		t.Fatal(err)
	}
	if w := report.Workloads[0]; w.HeadCluster != "member-a" || len(w.Targets) != 3 || len(w.Targets[1].Components) != 1 || w.Targets[1].Components[0].Replicas != 4 {
		t.Errorf("json of the divided workload: %+v", w)
	}
	if w := report.Workloads[1]; w.HeadCluster != "" || w.NotDivided == "" {
		t.Errorf("json of the workload placed whole: %+v", w)
	}
}

// fillingFleet writes a scenario of three clusters of 4 nodes × 4 CPU and
// 20 workloads of 4 replicas × 1 CPU (dynamic weights): 80 CPUs asked of
// 48.
func fillingFleet(t *testing.T) string {
	t.Helper()
	var clusters, workloads []string
	for i := range 3 {
		clusters = append(clusters, fmt.Sprintf(`{"name": "c%d", "available": {"cpu": 16000, "memory": 65536, "pods": 440},
			"apis": ["apps/v1/Deployment"], "nodes": [{"count": 4, "free": {"cpu": 4000, "memory": 16384, "pods": 110}}]}`, i))
	}
	for i := range 20 {
		workloads = append(workloads, fmt.Sprintf(`{"namespace": "ns", "name": "w%02d", "apiVersion": "apps/v1", "kind": "Deployment",
			"replicas": 4, "request": {"cpu": 1000, "memory": 256}, "placement": {"replicaScheduling": "DynamicWeighted"}}`, i))
	}
	file := filepath.Join(t.TempDir(), "filling.json")
	doc := fmt.Sprintf(`{"name": "filling", "clusters": [%s], "workloads": [%s]}`, strings.Join(clusters, ","), strings.Join(workloads, ","))
	if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// With --in-order, the first 12 workloads take the fleet's 48 CPUs and
// the other 8 are unschedulable; without it each sees the whole fleet.
// --workload shows one workload, placed after the ones before it.
func TestPlanInOrder(t *testing.T) {
	file := fillingFleet(t)
	tests := []struct {
		args []string
		// want is the scheduled column, one letter a workload shown.
		want    string
		inOrder bool
	}{
		{args: []string{"--in-order"}, want: "yyyyyyyyyyyynnnnnnnn", inOrder: true},
		{args: []string{"--in-order=false"}, want: "yyyyyyyyyyyyyyyyyyyy"},
		{args: nil, want: "yyyyyyyyyyyyyyyyyyyy"},
		{args: []string{"--in-order", "--workload", "ns/w11"}, want: "y", inOrder: true},
		{args: []string{"--in-order", "--workload", "w12", "--explain"}, want: "n", inOrder: true},
		{args: []string{"--workload", "w12"}, want: "y"},
	}
	for _, tt := range tests {
		out, err := execute(t, newPlanCommand(), append([]string{"-f", file, "-o", "json"}, tt.args...)...)
		if err != nil {
			t.Fatalf("plan %v: %v", tt.args, err)
		}
		var report planReport
		if err := json.Unmarshal([]byte(out), &report); err != nil {
			t.Fatal(err)
		}
		var got strings.Builder
		cpus := int32(0)
		for _, w := range report.Workloads {
			if !w.Scheduled {
				got.WriteString("n")
				if !strings.Contains(w.Reason, "cpu") {
					t.Errorf("plan %v: %s unschedulable for %q, want a reason naming cpu", tt.args, w.Name, w.Reason)
				}
				continue
			}
			got.WriteString("y")
			for _, tc := range w.Targets {
				cpus += tc.Replicas
			}
		}
		if got.String() != tt.want || report.InOrder != tt.inOrder {
			t.Errorf("plan %v: scheduled %s (in order %t), want %s (%t)", tt.args, got.String(), report.InOrder, tt.want, tt.inOrder)
		}
		if tt.inOrder && len(tt.want) == 20 && cpus != 48 {
			t.Errorf("plan %v: %d one-CPU replicas placed, want the fleet's 48", tt.args, cpus)
		}
	}
}

// --explain shows each cluster's room for the workload and the node model
// it was counted from: frag's summed CPU holds 9 one-CPU replicas, its six
// 1.5-CPU nodes hold 6, and ROOM says the room on any one node limits it.
func TestPlanExplainShowsRoomPerNode(t *testing.T) {
	doc := `{"name": "frag", "clusters": [
		{"name": "frag", "available": {"cpu": 9000, "memory": 65536, "pods": 660}, "apis": ["apps/v1/Deployment"],
		 "nodes": [{"count": 6, "free": {"cpu": 1500, "memory": 10922, "pods": 110}}]},
		{"name": "plain", "available": {"cpu": 2000, "memory": 65536, "pods": 110}, "apis": ["apps/v1/Deployment"]}],
		"workloads": [{"namespace": "ns", "name": "w", "apiVersion": "apps/v1", "kind": "Deployment",
		"replicas": 6, "request": {"cpu": 1000, "memory": 256}, "placement": {"clusterNames": ["frag"], "replicaScheduling": "Aggregated"}}]}`
	file := filepath.Join(t.TempDir(), "frag.json")
	if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := execute(t, newPlanCommand(), "-f", file, "--explain")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"ROOM",
		"frag     true      6         6 (room on any one node)",
		"plain    false     0         2 (cpu)      ",
		"node model (free room, node by node; replicas in flight deducted):",
		"frag: 6 × 1500m CPU",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("explain lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "plain: ") {
		t.Errorf("a cluster without a node model is listed in the node model:\n%s", out)
	}
	var report planReport
	js, err := execute(t, newPlanCommand(), "-f", file, "--explain", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(js), &report); err != nil {
		t.Fatal(err)
	}
	if e := report.Workloads[0].Explanations[0]; e.Room == nil || e.Room.Fit != 6 || e.Room.Limiting != string(framework.ResourceNodeRoom) {
		t.Errorf("json explanation of frag: %+v", e.Room)
	}
}

// TestPlanWaves: --waves shows, offline, the waves a change of each
// placed workload would go out in under its policy's rollout, stages
// picked by the scenario's cluster labels; a bad stage selector is
// refused naming the field.
func TestPlanWaves(t *testing.T) {
	example := filepath.Join("..", "..", "examples", "plan", "rollout-waves.yaml")
	out, err := execute(t, newPlanCommand(), "-f", example, "--waves", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var report planReport
	if err := json.Unmarshal([]byte(out), &report); err != nil {
		t.Fatal(err)
	}
	if len(report.Workloads) != 1 {
		t.Fatalf("%d workloads, want 1", len(report.Workloads))
	}
	w := report.Workloads[0]
	var got []string
	for _, wv := range w.Waves {
		got = append(got, fmt.Sprintf("%s:%s:%s:%d", wv.Stage, strings.Join(wv.Clusters, ","), wv.Approval, wv.WaitSeconds))
	}
	want := []string{"canary:canary-1:Before:0", "production:prod-1,prod-2,prod-3::300", "production:prod-4::0", "(unstaged):edge-1::0"}
	if w.Rollout != "Staged" || strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("rollout %s, waves %v, want Staged %v", w.Rollout, got, want)
	}

	table, err := execute(t, newPlanCommand(), "-f", example, "--waves")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"default/api rollout:", "Strategy: Staged, 4 waves", "approval (Before)", "prod-1, prod-2, prod-3"} {
		if !strings.Contains(table, line) {
			t.Errorf("the table lacks %q:\n%s", line, table)
		}
	}
	if plain, err := execute(t, newPlanCommand(), "-f", example); err != nil || strings.Contains(plain, "rollout:") {
		t.Errorf("without --waves: %v\n%s", err, plain)
	}

	data, err := os.ReadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	broken := strings.Replace(string(data), "clusterSelector: {matchLabels: {ring: canary}}", "clusterSelector: {matchExpressions: [{key: ring, operator: Near}]}", 1)
	if err := os.WriteFile(bad, []byte(broken), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := execute(t, newPlanCommand(), "-f", bad, "--waves"); err == nil || !strings.Contains(err.Error(), "default/api: spec.rollout.stages[0].clusterSelector") {
		t.Errorf("a bad stage selector: got %v", err)
	}
}

// badSchedulerConfig writes a SchedulerConfiguration with a weight of 0.
func badSchedulerConfig(t *testing.T) string {
	t.Helper()
	return writeSchedulerConfig(t, "profiles:\n- plugins: {score: {enabled: [{name: Capacity, weight: 0}]}}\n")
}

func writeSchedulerConfig(t *testing.T, profiles string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "scheduler.yaml")
	doc := "apiVersion: config.shepherd.io/v1alpha1\nkind: SchedulerConfiguration\n" + profiles
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestPlanSchedulerConfig: plan runs the profile of --scheduler-config (a
// score plugin disabled there scores no cluster) and refuses a bad file,
// naming the field, before reading the scenario.
func TestPlanSchedulerConfig(t *testing.T) {
	file := scenariotest.BenchFile(t, scenariotest.Fleet20)
	args := []string{"-f", file, "-o", "json", "--explain", "--workload", "team-01/app-000002"}
	scored := func(out string) map[string]bool {
		var report planReport
		if err := json.Unmarshal([]byte(out), &report); err != nil || len(report.Workloads) != 1 {
			t.Fatalf("plan -o json: %v: %s", err, out)
		}
		plugins := map[string]bool{}
		for _, e := range report.Workloads[0].Explanations {
			for _, s := range e.Scores {
				plugins[s.Plugin] = true
			}
		}
		return plugins
	}
	out, err := execute(t, newPlanCommand(), args...)
	if err != nil {
		t.Fatal(err)
	}
	if !scored(out)["Capacity"] {
		t.Fatalf("the default profile should score Capacity here: %s", out)
	}
	noCapacity := writeSchedulerConfig(t, "profiles:\n- plugins: {score: {disabled: [{name: Capacity}]}}\n")
	out, err = execute(t, newPlanCommand(), append(args, "--scheduler-config", noCapacity)...)
	if err != nil {
		t.Fatal(err)
	}
	if scored(out)["Capacity"] {
		t.Errorf("Capacity is disabled but scored: %s", out)
	}
	_, err = execute(t, newPlanCommand(), "-f", filepath.Join(t.TempDir(), "missing.json"), "--scheduler-config", badSchedulerConfig(t))
	if err == nil || !strings.Contains(err.Error(), "--scheduler-config ") || !strings.Contains(err.Error(), "profiles[0].plugins.score.enabled[0].weight: must be between 1 and") {
		t.Errorf("bad file: %v", err)
	}
}
