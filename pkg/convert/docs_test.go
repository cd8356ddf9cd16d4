package convert

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readDoc returns a file of the repository's docs.
func readDoc(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// karmadaSection is the "Coming from Karmada" section of a doc, up to the
// next heading of the same level.
func karmadaSection(t *testing.T, doc string) string {
	t.Helper()
	_, after, ok := strings.Cut(doc, "## Coming from Karmada\n")
	if !ok {
		t.Fatal("no Coming from Karmada section")
	}
	if i := strings.Index(after, "\n## "); i >= 0 {
		after = after[:i]
	}
	return after
}

// TestRulesMatchTheDocs: the converter's rules are the "Coming from
// Karmada" tables as code. Every rule with a row names a row of its table,
// and that row says what shepherd convert does; every rule is in the
// migration guide's table; every row of the API table saying something is
// refused has a rule.
func TestRulesMatchTheDocs(t *testing.T) {
	guide := readDoc(t, "docs/migrating-from-karmada.md")
	tables := map[string]string{}
	for _, r := range Rules {
		if !strings.Contains(guide, "| `"+r.ID+"` |") {
			t.Errorf("rule %s is not in the table of docs/migrating-from-karmada.md", r.ID)
		}
		if r.Doc == "" {
			continue
		}
		if _, ok := tables[r.Doc]; !ok {
			tables[r.Doc] = karmadaSection(t, readDoc(t, r.Doc))
		}
		row := findRow(tables[r.Doc], r.Row)
		switch {
		case row == "":
			t.Errorf("rule %s: %s has no row %q", r.ID, r.Doc, r.Row)
		case !strings.Contains(row, "`shepherd convert`"):
			t.Errorf("rule %s: the row %q of %s does not say what shepherd convert does", r.ID, r.Row, r.Doc)
		}
	}
	api := karmadaSection(t, readDoc(t, apiDoc))
	// The policy table comes before the subsections (bindings, clusters,
	// services, rollouts), which name no field of a converted kind.
	policies, _, _ := strings.Cut(api, "\n### ")
	for line := range strings.SplitSeq(policies, "\n") {
		cells := strings.Split(line, " | ")
		if len(cells) < 3 || !strings.Contains(line, "refused") {
			continue
		}
		first := strings.TrimPrefix(cells[0], "| ")
		// workloadAffinity is converted unchanged: Shepherd implements it.
		if strings.Contains(first, "workloadAffinity") || ruleForRow(first) {
			continue
		}
		// A refusal both APIs share needs no rule when the row says so
		// and the converter lets the API server say it.
		if strings.Contains(line, "as in Karmada") || strings.Contains(line, "(refused otherwise)") {
			continue
		}
		t.Errorf("the row %q of %s says something is refused, but no rule converts it", first, apiDoc)
	}
	if !strings.Contains(api, "migrating-from-karmada.md") {
		t.Errorf("%s's Karmada section does not link the migration guide", apiDoc)
	}
}

func findRow(table, first string) string {
	for line := range strings.SplitSeq(table, "\n") {
		if strings.HasPrefix(line, "| "+first+" | ") {
			return line
		}
	}
	return ""
}

func ruleForRow(first string) bool {
	for _, r := range Rules {
		if r.Row == first {
			return true
		}
	}
	return false
}

// TestAutoscalersGuideExample: the report the migration guide shows for
// its autoscalers is what converting its YAML gives.
func TestAutoscalersGuideExample(t *testing.T) {
	guide := readDoc(t, "docs/migrating-from-karmada.md")
	_, section, ok := strings.Cut(guide, "## Autoscalers\n")
	if !ok {
		t.Fatal("no Autoscalers section")
	}
	block := func(after string) string {
		_, rest, ok := strings.Cut(section, after)
		if !ok {
			t.Fatalf("no block after %q", after)
		}
		body, _, _ := strings.Cut(rest, "```\n")
		return body
	}
	const file = "karmada/autoscaling/sample-app.yaml"
	in := block("(`" + file + "`):\n\n```yaml\n")
	want := block("$ shepherd convert -f karmada/autoscaling/ -o out/\n")
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "karmada", "autoscaling"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, file), []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	docs, errs := ReadPaths([]string{"karmada/autoscaling/"}, false, nil)
	_, report := Convert(docs, errs...)
	var b strings.Builder
	if err := report.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if b.String() != want {
		t.Errorf("the guide shows\n%s\nconverting its example reports\n%s", want, b.String())
	}
}

// TestRefusalGuideExample: the refusal the migration guide shows is what
// converting a ClusterPropagationPolicy of 101 selectors reports.
func TestRefusalGuideExample(t *testing.T) {
	guide := readDoc(t, "docs/migrating-from-karmada.md")
	const cmd = "$ shepherd convert -f karmada/big-policy.yaml\n"
	_, rest, ok := strings.Cut(guide, "```\n"+cmd)
	if !ok {
		t.Fatal("the guide shows no refusal")
	}
	want, _, _ := strings.Cut(rest, "```\n")
	in := "apiVersion: policy.karmada.io/v1alpha1\nkind: ClusterPropagationPolicy\nmetadata: {name: all-config}\nspec:\n" + indent(selectors(101))
	docs, errs := Read("karmada/big-policy.yaml", strings.NewReader(in))
	objs, report := Convert(docs, errs...)
	var b strings.Builder
	if err := report.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if len(objs) != 0 || b.String() != want {
		t.Errorf("%d object(s) written; the guide shows\n%s\nconverting its example reports\n%s", len(objs), want, b.String())
	}
}
