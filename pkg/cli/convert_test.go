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

// TestConvertIncompleteExitsNonZero: a Lua customization and an unknown
// kind are reported, the rest is written, and the command fails.
func TestConvertIncompleteExitsNonZero(t *testing.T) {
	dir := t.TempDir()
	reportFile := filepath.Join(dir, "report.json")
	in := "apiVersion: autoscaling.karmada.io/v1alpha1\nkind: FederatedHPA\nmetadata: {name: h, namespace: shop}\n"
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
	root := NewRootCommand()
	found, _, err := root.Find([]string{"convert"})
	if err != nil || found.Name() != "convert" {
		t.Errorf("convert is not registered: %v", err)
	}
}
