// Package docs holds the tests that keep the documentation and the code
// in step: the layers table of architecture.md is read here and the
// module's import graph held to it, so the table cannot drift from the
// code unnoticed, nor the code from the table.
package docs

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// layer is one row of the layers table.
type layer struct {
	num  int
	name string
	// patterns are the packages the row names (see compilePattern).
	patterns []string
	// noClient: the row's rule says its packages reach no cluster ("no
	// client of a cluster", "no API calls").
	noClient bool
}

// clientPackages are the packages that talk to an API server (or run
// what does). A layer whose rule forbids clients imports none of them;
// config loaders (client-go's rest and clientcmd) and schemes are not
// clients.
var clientPackages = []string{
	"sigs.k8s.io/controller-runtime",
	"sigs.k8s.io/controller-runtime/pkg/client",
	"sigs.k8s.io/controller-runtime/pkg/manager",
	"k8s.io/client-go/kubernetes",
	"k8s.io/client-go/dynamic",
	"k8s.io/client-go/discovery",
}

// pkg is what go list says of one package of the module, its paths
// relative to the module.
type pkg struct {
	path    string
	imports []string // the module's packages it imports, tests aside
	// external are the imports from outside the module.
	external []string
	// code: it has non-test Go files (a directory of tests only belongs
	// to no layer).
	code bool
}

// TestLayers holds the module to the layers table of architecture.md:
// every package with code is in exactly one row, every row names
// packages that exist, no package imports one of a layer below its own,
// and the layers that may not reach a cluster import no client.
func TestLayers(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH")
	}
	md, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	layers, err := parseLayers(md)
	if err != nil {
		t.Fatal(err)
	}
	pkgs, err := listPackages(goTool, "..")
	if err != nil {
		t.Fatal(err)
	}
	for _, problem := range checkLayers(layers, pkgs) {
		t.Error(problem)
	}
}

// parseLayers reads the table under "## Layers": its rows are "| N. name |
// packages | may import |". In the packages cell, what is in parentheses
// is commentary; each path in backquotes outside them is a pattern.
func parseLayers(md []byte) ([]layer, error) {
	sc := bufio.NewScanner(bytes.NewReader(md))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	section, table := false, false
	var out []layer
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			section = line == "## Layers"
			continue
		case !section:
			continue
		case strings.HasPrefix(line, "| layer |"):
			table = true
			continue
		case table && strings.HasPrefix(line, "|---"):
			continue
		case table && !strings.HasPrefix(line, "|"):
			section = false
			continue
		case !table:
			continue
		}
		l, err := parseRow(line)
		if err != nil {
			return nil, err
		}
		if l.num != len(out)+1 {
			return nil, fmt.Errorf("layer %d follows layer %d: number the layers 1, 2, 3... in order", l.num, len(out))
		}
		out = append(out, l)
	}
	if len(out) == 0 {
		return nil, errors.New(`no layers table ("| layer | packages | may import |") under "## Layers"`)
	}
	return out, sc.Err()
}

var (
	layerName = regexp.MustCompile(`^(\d+)\.\s+(.+)$`)
	quoted    = regexp.MustCompile("`([^`]+)`")
)

// parseRow reads one row of the table.
func parseRow(line string) (layer, error) {
	cells := strings.Split(strings.Trim(line, "|"), "|")
	if len(cells) != 3 {
		return layer{}, fmt.Errorf("layers table row with %d cells, want 3: %s", len(cells), line)
	}
	m := layerName.FindStringSubmatch(strings.TrimSpace(cells[0]))
	if m == nil {
		return layer{}, fmt.Errorf("layers table row %q: the first cell must be \"N. name\"", cells[0])
	}
	num, _ := strconv.Atoi(m[1])
	l := layer{num: num, name: m[2]}
	for _, q := range quoted.FindAllStringSubmatch(outsideParens(cells[1]), -1) {
		l.patterns = append(l.patterns, q[1])
	}
	rule := cells[2]
	l.noClient = strings.Contains(rule, "no client of a cluster") || strings.Contains(rule, "no API calls")
	return l, nil
}

// outsideParens is s without what is in parentheses (nested too).
func outsideParens(s string) string {
	var b strings.Builder
	depth := 0
	for _, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// compilePattern turns a pattern of the table into a regexp: a plain path
// is that package, "/*" at the end adds every package under it, and
// "<x>" stands for any one path element.
func compilePattern(p string) *regexp.Regexp {
	q := regexp.QuoteMeta(p)
	q = regexp.MustCompile(`<[^>/]+>`).ReplaceAllString(q, `[^/]+`)
	if s, ok := strings.CutSuffix(q, `/\*`); ok {
		q = s + `(/.+)?`
	}
	return regexp.MustCompile("^" + q + "$")
}

// specificity ranks the patterns that match one package: a plain path
// above any wildcard, then the longer pattern.
func specificity(p string) int {
	if !strings.ContainsAny(p, "*<") {
		return 1 << 20
	}
	return len(p)
}

// place returns the layer index of every package, and the problems: a
// package with code in no row, or in two rows as specifically, and a
// pattern naming no package.
func place(layers []layer, pkgs []pkg) (map[string]int, []string) {
	at := map[string]int{}
	var problems []string
	used := map[string]bool{}
	for _, p := range pkgs {
		best, where := -1, -1
		for i, l := range layers {
			for _, pat := range l.patterns {
				if !compilePattern(pat).MatchString(p.path) {
					continue
				}
				used[pat] = true
				switch s := specificity(pat); {
				case s > best:
					best, where = s, i
				case s == best && where != i:
					problems = append(problems, fmt.Sprintf("%s is in layer %d and in layer %d: name it in one row", p.path, layers[where].num, l.num))
				}
			}
		}
		switch {
		case where >= 0:
			at[p.path] = where
		case p.code:
			problems = append(problems, fmt.Sprintf("%s is in no row of the layers table (docs/architecture.md): add it where it belongs", p.path))
		}
	}
	for _, l := range layers {
		for _, pat := range l.patterns {
			if !used[pat] {
				problems = append(problems, fmt.Sprintf("layer %d (%s) names `%s`, which is no package of the module", l.num, l.name, pat))
			}
		}
	}
	return at, problems
}

// checkLayers returns every way pkgs break the table.
func checkLayers(layers []layer, pkgs []pkg) []string {
	at, problems := place(layers, pkgs)
	for _, p := range pkgs {
		i, ok := at[p.path]
		if !ok {
			continue
		}
		from := layers[i]
		for _, imp := range p.imports {
			if j, ok := at[imp]; ok && j > i {
				to := layers[j]
				problems = append(problems, fmt.Sprintf("%s (layer %d, %s) imports %s (layer %d, %s): a package imports only from its own layer and those above it",
					p.path, from.num, from.name, imp, to.num, to.name))
			}
		}
		if !from.noClient {
			continue
		}
		for _, imp := range p.external {
			for _, c := range clientPackages {
				if imp == c {
					problems = append(problems, fmt.Sprintf("%s (layer %d, %s) imports %s: its layer reaches no cluster; move what needs a client to a lower layer",
						p.path, from.num, from.name, imp))
				}
			}
		}
	}
	return problems
}

// listPackages lists the module's packages under dir with go list (-e:
// a package that does not build is still placed by its imports).
func listPackages(goTool, dir string) ([]pkg, error) {
	mod := exec.Command(goTool, "list", "-m", "-f", "{{.Path}}")
	mod.Dir = dir
	out, err := mod.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -m: %w", err)
	}
	module := strings.TrimSpace(string(out))
	cmd := exec.Command(goTool, "list", "-e", "-json=ImportPath,Imports,GoFiles", "./...")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if out, err = cmd.Output(); err != nil {
		return nil, fmt.Errorf("go list ./...: %w\n%s", err, stderr.Bytes())
	}
	return decodePackages(bytes.NewReader(out), module)
}

// decodePackages reads go list -json's stream of packages.
func decodePackages(r io.Reader, module string) ([]pkg, error) {
	dec := json.NewDecoder(r)
	var out []pkg
	for {
		var p struct {
			ImportPath string
			Imports    []string
			GoFiles    []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			return out, nil
		} else if err != nil {
			return nil, err
		}
		rel, ok := strings.CutPrefix(p.ImportPath, module+"/")
		if !ok {
			continue // the module's root package, if it had one
		}
		q := pkg{path: rel, code: len(p.GoFiles) > 0}
		for _, imp := range p.Imports {
			if in, ok := strings.CutPrefix(imp, module+"/"); ok {
				q.imports = append(q.imports, in)
			} else {
				q.external = append(q.external, imp)
			}
		}
		out = append(out, q)
	}
}

// TestLayersCatchesBadImports: the checks themselves, on a small table:
// an import of a lower layer, a client in a layer without clients, a
// package in no row and a row naming no package are all reported;
// commentary in parentheses names nothing, and the most specific pattern
// places a package.
func TestLayersCatchesBadImports(t *testing.T) {
	md := "# x\n\n## Layers\n\n| layer | packages | may import |\n|---|---|---|\n" +
		"| 1. API | `api/<group>/v1` (`commentary`, `not/a/pkg`) | nothing; no API calls |\n" +
		"| 2. Work | `pkg/*`, `pkg/special` | layer 1 |\n" +
		"| 3. Top | `pkg/special/top`, `gone` | anything |\n\n## Next\n"
	layers, err := parseLayers([]byte(md))
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 3 || len(layers[0].patterns) != 1 || !layers[0].noClient || layers[1].noClient {
		t.Fatalf("parsed %+v", layers)
	}
	pkgs := []pkg{
		{path: "api/a/v1", code: true, imports: []string{"pkg/x"}, external: []string{"k8s.io/client-go/dynamic"}},
		{path: "api/b/v1", code: true, external: []string{"k8s.io/client-go/kubernetes/scheme"}},
		{path: "pkg/x", code: true, imports: []string{"api/a/v1", "pkg/special/top"}},
		{path: "pkg/special/top", code: true, imports: []string{"pkg/x"}},
		{path: "cmd/stray", code: true},
		{path: "tests/only"},
	}
	want := []string{
		"api/a/v1 (layer 1, API) imports pkg/x (layer 2, Work)",
		"api/a/v1 (layer 1, API) imports k8s.io/client-go/dynamic",
		"pkg/x (layer 2, Work) imports pkg/special/top (layer 3, Top)",
		"cmd/stray is in no row",
		"layer 2 (Work) names `pkg/special`, which is no package",
		"layer 3 (Top) names `gone`, which is no package",
	}
	got := checkLayers(layers, pkgs)
	if len(got) != len(want) {
		t.Errorf("%d problems, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || strings.HasPrefix(g, w)
		}
		if !found {
			t.Errorf("no problem starting %q among:\n%s", w, strings.Join(got, "\n"))
		}
	}
}
