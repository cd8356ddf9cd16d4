package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/shepherd-io/shepherd/pkg/convert"
)

const karmadaCorpus = "../convert/testdata/karmada"

func TestConvertFilesToStdout(t *testing.T) {
	reportFile := filepath.Join(t.TempDir(), "report.txt")
	out, err := execute(t, newConvertCommand(), "-f", filepath.Join(karmadaCorpus, "propagation.yaml"),
		"-f", filepath.Join(karmadaCorpus, "overrides.yaml"), "--report", reportFile)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(out, "apiVersion: policy.shepherd.io/v1alpha1") != 9 || strings.Contains(out, "karmada.io/v1alpha1") {
		t.Errorf("stdout:\n%s", out)
	}
	data, err := os.ReadFile(reportFile)
	if err != nil {
		t.Fatal(err)
	}
	report := string(data)
	for _, want := range []string{"converted 9 object(s)", "propagation.yaml:18 PropagationPolicy shop/named-and-labelled",
		"spec.resourceSelectors[0].labelSelector: dropped", "[selector-name-and-label]"} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q:\n%s", want, report)
		}
	}
}

// TestConvertIncompleteExitsNonZero: a Lua customization and a kind
// Shepherd has no equivalent for are reported, the rest is written, and
// the command fails.
func TestConvertIncompleteExitsNonZero(t *testing.T) {
	dir := t.TempDir()
	reportFile := filepath.Join(dir, "report.json")
	in := "apiVersion: work.karmada.io/v1alpha2\nkind: ResourceBinding\nmetadata: {name: b, namespace: shop}\n"
	cmd := newConvertCommand()
	cmd.SetIn(strings.NewReader(in))
	_, err := execute(t, cmd, "-f", "-", "-f", filepath.Join(karmadaCorpus, "customization.yaml"),
		"-o", filepath.Join(dir, "out"), "--report", reportFile, "--report-format", "json")
	if !errors.Is(err, errIncomplete) {
		t.Fatalf("err %v, want errIncomplete", err)
	}
	var report convert.Report
	data, _ := os.ReadFile(reportFile)
	if err := json.Unmarshal(data, &report); err != nil {
		t.Fatalf("the report is not JSON: %v\n%s", err, data)
	}
	actions := map[convert.Action]int{}
	for _, e := range report.Entries {
		actions[e.Action]++
	}
	if report.Converted != 1 || actions[convert.Skipped] != 1 || actions[convert.Manual] != 3 || report.Entries[0].Source != "-:1" {
		t.Errorf("report %+v", report)
	}
	if _, err := os.Stat(filepath.Join(dir, "out", "resourceinterpretercustomization_example-rollouts.yaml")); err != nil {
		t.Errorf("the skeleton was not written: %v", err)
	}
}

// TestConvertRefusedByTheHubExitsNonZero: a policy the hub's CRD refuses
// (a fieldSelector In without values, which Karmada accepts) is not
// written; the report names its file, document, field and the CRD's
// message, the good policy beside it is written, and the command fails.
func TestConvertRefusedByTheHubExitsNonZero(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "policies.yaml")
	in := "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: good, namespace: shop}\n" +
		"spec:\n  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]\n---\n" +
		"apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: bad, namespace: shop}\n" +
		"spec:\n  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]\n" +
		"  placement:\n    clusterAffinity:\n      fieldSelector:\n        matchExpressions: [{key: region, operator: In}]\n"
	if err := os.WriteFile(file, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	reportFile := filepath.Join(dir, "report.txt")
	out, err := execute(t, newConvertCommand(), "-f", file, "--report", reportFile)
	if !errors.Is(err, errIncomplete) {
		t.Fatalf("err %v, want errIncomplete", err)
	}
	if !strings.Contains(out, "name: good") || strings.Contains(out, "name: bad") {
		t.Errorf("stdout:\n%s", out)
	}
	data, _ := os.ReadFile(reportFile)
	report := string(data)
	for _, want := range []string{"converted 1 object(s); 1 object(s) the hub would refuse, not written",
		file + ":7 PropagationPolicy shop/bad",
		"spec.placement.clusterAffinity.fieldSelector.matchExpressions[0]: refused: the hub's PropagationPolicy CRD refuses it:",
		"fieldSelector.matchExpressions[].values must be non-empty for In and NotIn", "give In and NotIn at least one value", "[hub-refuses]"} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q:\n%s", want, report)
		}
	}
}

// TestConvertAutoscalers: Karmada's FederatedHPAs and CronFederatedHPAs
// come out in Shepherd's autoscaling group, one file each, and the report
// names what changed; a CronFederatedHPA whose schedule does not parse is
// not written and fails the command.
func TestConvertAutoscalers(t *testing.T) {
	badSchedule := "apiVersion: autoscaling.karmada.io/v1alpha1\nkind: CronFederatedHPA\nmetadata: {name: every-second, namespace: shop}\n" +
		"spec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  rules:\n  - {name: up, schedule: '* * * * * *', targetReplicas: 2}\n"
	for _, tc := range []struct {
		name  string
		stdin string
		// files are the files written to the output directory.
		files   []string
		report  []string
		wantErr error
	}{
		{name: "Karmada's examples", files: []string{"cronfederatedhpa_default_nginx-cronfhpa.yaml", "cronfederatedhpa_default_nginx-fhpa-cronfhpa.yaml",
			"cronfederatedhpa_shop_sample-app-office-hours.yaml", "federatedhpa_default_nginx.yaml", "federatedhpa_shop_sample-app.yaml"},
			report: []string{"converted 5 object(s); 2 difference(s) in meaning", "spec.scaleTargetRef.apiVersion: changed", "[cron-target-group]", "[fhpa-target-type]"}},
		{name: "a schedule that does not parse", stdin: badSchedule, files: []string{"cronfederatedhpa_default_nginx-cronfhpa.yaml", "cronfederatedhpa_default_nginx-fhpa-cronfhpa.yaml",
			"cronfederatedhpa_shop_sample-app-office-hours.yaml", "federatedhpa_default_nginx.yaml", "federatedhpa_shop_sample-app.yaml"},
			report:  []string{"-:1 CronFederatedHPA shop/every-second", "spec.rules[0].schedule: skipped", "[cron-schedule]"},
			wantErr: errIncomplete},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			reportFile := filepath.Join(dir, "report.txt")
			cmd := newConvertCommand()
			args := []string{"-f", filepath.Join(karmadaCorpus, "autoscaling.yaml"), "-o", filepath.Join(dir, "out"), "--report", reportFile}
			if tc.stdin != "" {
				cmd.SetIn(strings.NewReader(tc.stdin))
				args = append(args, "-f", "-")
			}
			if _, err := execute(t, cmd, args...); !errors.Is(err, tc.wantErr) {
				t.Fatalf("err %v, want %v", err, tc.wantErr)
			}
			entries, err := os.ReadDir(filepath.Join(dir, "out"))
			if err != nil {
				t.Fatal(err)
			}
			var files []string
			for _, e := range entries {
				files = append(files, e.Name())
				data, _ := os.ReadFile(filepath.Join(dir, "out", e.Name()))
				if !strings.HasPrefix(string(data), "apiVersion: autoscaling.shepherd.io/v1alpha1\n") || strings.Contains(string(data), "status:") {
					t.Errorf("%s:\n%s", e.Name(), data)
				}
			}
			if strings.Join(files, " ") != strings.Join(tc.files, " ") {
				t.Errorf("wrote %v, want %v", files, tc.files)
			}
			data, _ := os.ReadFile(reportFile)
			for _, want := range tc.report {
				if !strings.Contains(string(data), want) {
					t.Errorf("the report lacks %q:\n%s", want, data)
				}
			}
		})
	}
}

func TestConvertNeedsInput(t *testing.T) {
	if _, err := execute(t, newConvertCommand()); err == nil || !strings.Contains(err.Error(), "nothing to convert") {
		t.Errorf("err %v", err)
	}
	if _, err := execute(t, newConvertCommand(), "-f", "x.yaml", "--report-format", "xml"); err == nil {
		t.Error("--report-format xml accepted")
	}
}

// fakeLister serves one Karmada policy per resource asked, and records
// what was asked: a Lister has nothing but List.
type fakeLister struct{ asked []schema.GroupVersionResource }

func (f *fakeLister) List(_ context.Context, gvr schema.GroupVersionResource) ([]unstructured.Unstructured, error) {
	f.asked = append(f.asked, gvr)
	if gvr.Resource != "clusterpropagationpolicies" {
		return nil, nil
	}
	return []unstructured.Unstructured{{Object: map[string]any{
		"apiVersion": "policy.karmada.io/v1alpha1", "kind": "ClusterPropagationPolicy",
		"metadata": map[string]any{"name": "all", "resourceVersion": "5"},
		"spec":     map[string]any{"resourceSelectors": []any{map[string]any{"apiVersion": "v1", "kind": "Namespace"}}},
	}}}, nil
}

func TestConvertLive(t *testing.T) {
	l := &fakeLister{}
	cmd := newConvertCommand()
	o := &convertOptions{kubeconfig: "karmada.config", reportFormat: "text",
		newLister: func(*convertOptions) (convert.Lister, error) { return l, nil }}
	var out, errOut bytes.Buffer
	if err := o.run(context.Background(), nil, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if len(l.asked) != len(convert.KarmadaResources) {
		t.Errorf("listed %v", l.asked)
	}
	if !strings.Contains(out.String(), "kind: ClusterPropagationPolicy") || strings.Contains(out.String(), "resourceVersion") {
		t.Errorf("stdout:\n%s", out.String())
	}
	if cmd.Flags().Lookup("kubeconfig") == nil || cmd.Flags().Lookup("context") == nil {
		t.Error("--kubeconfig and --context are missing")
	}
}

func TestConvertHelp(t *testing.T) {
	cmd := newConvertCommand()
	if cmd.Short == "" || cmd.Long == "" || !strings.Contains(cmd.Example, "shepherd convert") {
		t.Error("convert needs Short, Long and Example")
	}
	// Every kind the converter reads is named in the help.
	for _, kind := range []string{"PropagationPolicies", "ClusterPropagationPolicies", "OverridePolicies", "ClusterOverridePolicies",
		"ResourceInterpreterCustomizations", "FederatedHPAs", "CronFederatedHPAs", "autoscaling.karmada.io/v1alpha1"} {
		if !strings.Contains(strings.Join(strings.Fields(cmd.Long), " "), kind) {
			t.Errorf("the help does not name %s", kind)
		}
	}
	root := NewRootCommand()
	found, _, err := root.Find([]string{"convert"})
	if err != nil || found.Name() != "convert" {
		t.Errorf("convert is not registered: %v", err)
	}
}
