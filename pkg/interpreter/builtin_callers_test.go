package interpreter_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const interpreterPath = "github.com/shepherd-io/shepherd/pkg/interpreter"

// builtinAllowed are the non-test files outside this package that may call
// Builtin(), each with why. Everything else that knows kinds serves a hub
// and is given the process's interpreter: Builtin() there would misread
// every kind a ResourceInterpreterCustomization teaches.
var builtinAllowed = map[string]string{
	"pkg/cli/plan.go":                           "`shepherd plan` reads a scenario file offline: there is no hub whose customizations could teach it other kinds",
	"pkg/cli/bench.go":                          "`shepherd bench` schedules a scenario file offline, as plan does",
	"pkg/scenario/scenariotest/scenariotest.go": "test support: loads fleet scenarios for tests and benchmarks, which have no hub either",
}

// TestBuiltinCallers: no component that serves a hub reads kinds through
// Builtin(); only the files of builtinAllowed do, and each of them still
// does (an entry no longer needed fails too, so the list stays true).
func TestBuiltinCallers(t *testing.T) {
	root := moduleRoot(t)
	var callers []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := e.Name()
		if e.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if filepath.ToSlash(filepath.Dir(rel)) == "pkg/interpreter" {
			return nil // Builtin's own package
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if callsBuiltin(f) {
			callers = append(callers, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range callers {
		if _, ok := builtinAllowed[c]; !ok {
			t.Errorf("%s calls interpreter.Builtin(): take the process's interpreter instead (controllerdeps.Deps.Interpreter, "+
				"or the dashboard server's), or, for an offline tool, list the file in builtinAllowed with the reason", c)
		}
	}
	for file := range builtinAllowed {
		if !slices.Contains(callers, file) {
			t.Errorf("%s no longer calls interpreter.Builtin(): take it off builtinAllowed", file)
		}
	}
}

// callsBuiltin reports whether f refers to the interpreter package's
// Builtin, under whatever name f imports the package.
func callsBuiltin(f *ast.File) bool {
	local := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == interpreterPath {
			local = "interpreter"
			if imp.Name != nil {
				local = imp.Name.Name
			}
		}
	}
	if local == "" || local == "_" {
		return false
	}
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.SelectorExpr:
			if id, ok := x.X.(*ast.Ident); ok && id.Name == local && x.Sel.Name == "Builtin" {
				found = true
			}
		case *ast.Ident:
			if local == "." && x.Name == "Builtin" {
				found = true
			}
		}
		return !found
	})
	return found
}

// moduleRoot is the directory of the repository's go.mod, above the test's.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// TestCallsBuiltin: a reference is found under the package's own name, an
// alias or a dot import, and a Builtin of another package is not one.
func TestCallsBuiltin(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      bool
	}{
		{"by the package name", `package p; import "` + interpreterPath + `"; var k = interpreter.Builtin()`, true},
		{"as a function value", `package p; import "` + interpreterPath + `"; var f = interpreter.Builtin`, true},
		{"under an alias", `package p; import kinds "` + interpreterPath + `"; func f() { _ = kinds.Builtin() }`, true},
		{"dot-imported", `package p; import . "` + interpreterPath + `"; var k = Builtin()`, true},
		{"the process's interpreter", `package p; import "` + interpreterPath + `"; var k = interpreter.New()`, false},
		{"another package's Builtin", `package p; import interpreter "example.com/other"; var k = interpreter.Builtin()`, false},
	} {
		f, err := parser.ParseFile(token.NewFileSet(), "p.go", tc.src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		if got := callsBuiltin(f); got != tc.want {
			t.Errorf("%s: callsBuiltin = %v, want %v", tc.name, got, tc.want)
		}
	}
}
