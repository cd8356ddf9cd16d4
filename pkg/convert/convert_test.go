package convert

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	configv1alpha1 "github.com/shepherd-io/shepherd/api/config/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
)

const corpus = "testdata/karmada"

// convertPaths converts files as shepherd convert -f does and returns the
// output's bytes.
func convertPaths(t *testing.T, paths ...string) ([]byte, []*unstructured.Unstructured, *Report) {
	t.Helper()
	docs, errs := ReadPaths(paths, false, nil)
	objs, report := Convert(docs, errs...)
	var b bytes.Buffer
	if err := WriteYAML(&b, objs); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), objs, report
}

// TestBadInputNamesFileAndLine: a document that does not parse is reported
// with the file and its line in the whole file, the documents around it
// are still converted.
func TestBadInputNamesFileAndLine(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "bad.yaml")
	in := pp("") + // lines 1-6
		"---\n" + // 7
		"# a comment\n" + // 8
		"apiVersion: policy.karmada.io/v1alpha1\n" + // 9
		"kind: PropagationPolicy\n" + // 10
		"metadata: {name: q, namespace: shop}\n" + // 11
		"spec:\n" + // 12
		"  resourceSelectors: [\n" + // 13
		"  priority: 1\n" + // 14
		"---\n" + // 15
		"- a list\n" + // 16
		"---\n" + // 17
		"metadata: {name: nokind}\n" + // 18
		"---\n" + // 19
		strings.Replace(pp(""), "name: p,", "name: r,", 1)
	if err := os.WriteFile(file, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	_, objs, report := convertPaths(t, file)
	if len(objs) != 2 {
		t.Errorf("%d objects converted, want the 2 good ones", len(objs))
	}
	var got []string
	for _, e := range report.Entries {
		if e.Action != Failed {
			t.Errorf("unexpected entry %+v", e)
		}
		got = append(got, e.Source)
	}
	want := []string{file + ":14", file + ":16", file + ":18"}
	if !slices.Equal(got, want) {
		t.Errorf("errors at %v, want %v\n%+v", got, want, report.Entries)
	}
	if !strings.Contains(report.Entries[0].Message, "line 14") {
		t.Errorf("the parser's message should name the line in the file: %s", report.Entries[0].Message)
	}
	if !report.Incomplete() {
		t.Error("a report with unreadable documents must be incomplete")
	}
	if _, errs := ReadPaths([]string{filepath.Join(dir, "missing.yaml")}, false, nil); len(errs) != 1 || errs[0].Action != Failed {
		t.Errorf("a missing file: %+v", errs)
	}
}

// TestObjectsNameTheirDocumentsLine: report entries point at the line
// where each document's object starts.
func TestObjectsNameTheirDocumentsLine(t *testing.T) {
	_, report := convertString(t, "# header\n\n"+pp("")+"---\n\n"+strings.Replace(pp("priority: 2"), "name: p,", "name: q,", 1))
	if len(report.Entries) != 1 || report.Entries[0].Source != "in.yaml:11" {
		t.Fatalf("entries %+v, want one at in.yaml:11", report.Entries)
	}
}

func TestStdinAndLists(t *testing.T) {
	in := "apiVersion: v1\nkind: List\nitems:\n- " + strings.ReplaceAll(strings.TrimSpace(pp("")), "\n", "\n  ") + "\n"
	docs, errs := ReadPaths([]string{Stdin}, false, strings.NewReader(in))
	if len(errs) != 0 || len(docs) != 1 {
		t.Fatalf("docs %d errs %+v", len(docs), errs)
	}
	if docs[0].Where() != "-:1" || docs[0].Object["kind"] != "PropagationPolicy" {
		t.Errorf("read %s %v", docs[0].Where(), docs[0].Object["kind"])
	}
}

// TestIdempotent: converting the output again gives the same bytes, and a
// run on the same input (in any order) gives the same bytes too.
func TestIdempotent(t *testing.T) {
	first, _, report := convertPaths(t, corpus)
	if report.Converted < 10 {
		t.Fatalf("only %d objects converted from the corpus", report.Converted)
	}
	again, _, _ := convertPaths(t, corpus)
	if !bytes.Equal(first, again) {
		t.Error("two runs on the same input differ")
	}
	docs, _ := ReadPaths([]string{corpus}, false, nil)
	slices.Reverse(docs)
	reversed, _ := Convert(docs)
	var b bytes.Buffer
	if err := WriteYAML(&b, reversed); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, b.Bytes()) {
		t.Error("the output depends on the input's order")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "out.yaml"), first, 0o644); err != nil {
		t.Fatal(err)
	}
	second, _, report2 := convertPaths(t, dir)
	if !bytes.Equal(first, second) {
		t.Errorf("converting the output changed it:\n%s\n---- became ----\n%s", first, second)
	}
	// What is left for the user is still flagged; nothing else is reported.
	for _, e := range report2.Entries {
		if e.Rule != "lua-to-cel" {
			t.Errorf("second run reported %+v", e)
		}
	}
	if !report2.Incomplete() {
		t.Error("placeholders must keep the second run incomplete")
	}
}

// TestCorpus: every object of the corpus converts, decodes strictly into
// Shepherd's types, and every difference is reported; a customization's
// skeleton is refused by Shepherd's admission check until written.
func TestCorpus(t *testing.T) {
	_, objs, report := convertPaths(t, corpus)
	docs, _ := ReadPaths([]string{corpus}, false, nil)
	if len(objs) != len(docs) {
		t.Errorf("%d objects out of %d in", len(objs), len(docs))
	}
	for _, obj := range objs {
		k := kinds[obj.GetKind()]
		if err := k.decode(obj.Object); err != nil {
			t.Errorf("%s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
		if obj.GetKind() != kindCustomization {
			continue
		}
		ric, err := decodeStrict[configv1alpha1.ResourceInterpreterCustomization](obj.Object)
		if err != nil {
			t.Fatal(err)
		}
		errs := interpreter.ValidateCustomization(ric)
		for _, f := range []string{"spec.customizations.replicas.expression", "spec.customizations.health.expression"} {
			if !strings.Contains(errs.ToAggregate().Error(), f) {
				t.Errorf("admission should refuse the placeholder of %s: %v", f, errs)
			}
		}
	}
	for _, e := range report.Entries {
		if e.Action == Skipped || e.Action == Refused || e.Action == Failed {
			t.Errorf("corpus entry %+v", e)
		}
	}
}

// TestExample: examples/migration/from-karmada.yaml is what converting
// testdata/example/karmada.yaml gives (the docs show both); the
// integration tests apply it.
func TestExample(t *testing.T) {
	got, _, report := convertPaths(t, "testdata/example/karmada.yaml")
	if report.Incomplete() {
		t.Fatalf("the example does not convert completely: %+v", report.Entries)
	}
	file := filepath.Join("..", "..", "examples", "migration", "from-karmada.yaml")
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	// The example starts with comments saying where it comes from.
	var body []string
	for l := range strings.SplitSeq(string(want), "\n") {
		if !strings.HasPrefix(l, "#") {
			body = append(body, l)
		}
	}
	if string(got) != strings.Join(body, "\n") {
		t.Errorf("%s is not the output of converting testdata/example/karmada.yaml; it should be:\n%s", file, got)
	}
}
