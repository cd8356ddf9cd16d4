// Package controllers_test holds the rules every controller package keeps
// (see docs/architecture.md, "The controller contract"), checked from the
// source so that a new controller cannot drift from them unnoticed.
package controllers_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/shepherd-io/shepherd/pkg/controllers/"

// setupElsewhere are the controller packages whose Setup is not yet in
// setup.go (none now): a package being reworked may be listed for a while,
// and the test fails when an entry is no longer needed.
var setupElsewhere = map[string]bool{}

// sources parses the non-test Go files under pkg/controllers, by the
// controller package (its first directory) they belong to; fset places
// what they hold in a file and line, for the messages.
func sources(t *testing.T) (map[string][]*ast.File, *token.FileSet) {
	t.Helper()
	out := map[string][]*ast.File{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		pkg, _, _ := strings.Cut(filepath.ToSlash(path), "/")
		out[pkg] = append(out[pkg], f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 10 {
		t.Fatalf("found %d controller packages: run from pkg/controllers", len(out))
	}
	return out, fset
}

// TestNoControllerImportsAnother: what two controllers share goes down a
// layer (pkg/controllers/internal, pkg/placement, ...), never one
// controller package importing another.
func TestNoControllerImportsAnother(t *testing.T) {
	pkgs, fset := sources(t)
	for pkg, files := range pkgs {
		for _, f := range files {
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				other, ok := strings.CutPrefix(path, module)
				if !ok {
					continue
				}
				if top, _, _ := strings.Cut(other, "/"); top != "internal" && top != pkg {
					t.Errorf("%s: controller %s imports controller %s", fset.Position(imp.Pos()), pkg, other)
				}
			}
		}
	}
}

// TestControllersTakeTheirOptionsFromDeps: every controller is built with
// controllerdeps' options (workers and the retry back-off, the same for
// all): no controller.Options written by hand, and as many
// ControllerOptions calls in a file as controllers built there.
func TestControllersTakeTheirOptionsFromDeps(t *testing.T) {
	pkgs, fset := sources(t)
	for _, files := range pkgs {
		for _, f := range files {
			built, options := 0, 0
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.CompositeLit:
					if name := selectorName(n.Type); name == "controller.Options" || name == "controller.TypedOptions" {
						t.Errorf("%s: %s written by hand; take d.ControllerOptions(workers) and change what differs", fset.Position(n.Pos()), name)
					}
				case *ast.CallExpr:
					switch name := selectorName(n.Fun); {
					case strings.HasSuffix(name, "ControllerManagedBy"), name == "controller.NewTyped", name == "controller.New":
						built++
					case strings.HasSuffix(name, "ControllerOptions"):
						options++
					}
				}
				return true
			})
			if options < built {
				t.Errorf("%s: %d controllers built, %d with ControllerOptions", fset.Position(f.Pos()).Filename, built, options)
			}
		}
	}
}

// TestSetupInSetupGo: every controller package declares one Setup, in
// setup.go, where a reader looks for how the controller is wired.
func TestSetupInSetupGo(t *testing.T) {
	pkgs, fset := sources(t)
	for pkg, files := range pkgs {
		if pkg == "internal" {
			continue
		}
		var at []string
		for _, f := range files {
			if setupFunc(f) != nil {
				at = append(at, filepath.Base(fset.Position(f.Pos()).Filename))
			}
		}
		switch {
		case len(at) != 1:
			t.Errorf("controller %s declares Setup %d times (%v), want once", pkg, len(at), at)
		case setupElsewhere[pkg] && at[0] == "setup.go":
			t.Errorf("controller %s has its Setup in setup.go now: take it off setupElsewhere", pkg)
		case !setupElsewhere[pkg] && at[0] != "setup.go":
			t.Errorf("controller %s declares Setup in %s: move it to setup.go", pkg, at[0])
		}
	}
}

// TestSetupAppliesDefaults: Setup fills its dependencies' and its options'
// defaults (d = d.WithDefaults(), opts.withDefaults()), itself or in a
// function of its package it hands them to (newReconciler), so a test or
// a caller that sets up one controller alone gets the same controller as
// the registry; and a package with Options takes them in Setup and has a
// withDefaults method to apply.
func TestSetupAppliesDefaults(t *testing.T) {
	pkgs, fset := sources(t)
	for pkg, files := range pkgs {
		if pkg == "internal" {
			continue
		}
		funcs := map[string]*ast.FuncDecl{}
		hasOptions, hasDefaults := false, false
		for _, f := range files {
			hasOptions = hasOptions || declaresType(f, "Options")
			hasDefaults = hasDefaults || declaresMethod(f, "Options", "withDefaults")
			for _, d := range f.Decls {
				if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil {
					funcs[fn.Name.Name] = fn
				}
			}
		}
		fn := funcs["Setup"]
		if fn == nil {
			continue // TestSetupInSetupGo reports it
		}
		where := fset.Position(fn.Pos())
		deps, opts := setupParams(fn)
		switch {
		case deps == "":
			t.Errorf("%s: %s.Setup takes no controllerdeps.Deps", where, pkg)
		case !applies(fn, deps, "WithDefaults", true, funcs, 3):
			t.Errorf("%s: neither %s.Setup nor a function it passes %s to begins with %s = %s.WithDefaults()", where, pkg, deps, deps, deps)
		}
		switch {
		case hasOptions && opts == "":
			t.Errorf("%s: %s declares Options but Setup does not take them", where, pkg)
		case opts != "" && !applies(fn, opts, "withDefaults", false, funcs, 3):
			t.Errorf("%s: neither %s.Setup nor a function it passes %s to applies %s.withDefaults()", where, pkg, opts, opts)
		}
		if hasOptions && !hasDefaults {
			t.Errorf("controller %s declares Options without a withDefaults method", pkg)
		}
	}
}

// applies reports whether fn applies v.method() to its parameter v: as
// v = v.method() among its top-level statements when reassign is set (the
// result must replace v), anywhere in its body otherwise; or whether a
// function of funcs that fn passes v to does so for its own parameter, up
// to depth calls deep.
func applies(fn *ast.FuncDecl, v, method string, reassign bool, funcs map[string]*ast.FuncDecl, depth int) bool {
	if reassign && reassigns(fn.Body, v, method) || !reassign && calls(fn.Body, v, method) {
		return true
	}
	if depth == 0 {
		return false
	}
	found := false
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || found {
			return !found
		}
		callee := funcs[selectorName(call.Fun)]
		if callee == nil {
			return true
		}
		for i, arg := range call.Args {
			if id, ok := arg.(*ast.Ident); ok && id.Name == v {
				if p := paramName(callee, i); p != "" && applies(callee, p, method, reassign, funcs, depth-1) {
					found = true
				}
			}
		}
		return !found
	})
	return found
}

// paramName is the name of fn's i-th parameter, "" when there is none.
func paramName(fn *ast.FuncDecl, i int) string {
	for _, field := range fn.Type.Params.List {
		for _, name := range field.Names {
			if i == 0 {
				return name.Name
			}
			i--
		}
	}
	return ""
}

// setupFunc is f's package-level func Setup, nil if f has none.
func setupFunc(f *ast.File) *ast.FuncDecl {
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.Name == "Setup" {
			return fn
		}
	}
	return nil
}

// setupParams are the names of Setup's controllerdeps.Deps and Options
// parameters, "" for one it does not take.
func setupParams(fn *ast.FuncDecl) (deps, opts string) {
	for _, field := range fn.Type.Params.List {
		for _, name := range field.Names {
			switch selectorName(field.Type) {
			case "controllerdeps.Deps":
				deps = name.Name
			case "Options":
				opts = name.Name
			}
		}
	}
	return deps, opts
}

// reassigns reports whether body's statements (top level) include
// v = v.method().
func reassigns(body *ast.BlockStmt, v, method string) bool {
	for _, st := range body.List {
		as, ok := st.(*ast.AssignStmt)
		if !ok || len(as.Lhs) != 1 || len(as.Rhs) != 1 {
			continue
		}
		if id, ok := as.Lhs[0].(*ast.Ident); ok && id.Name == v && isCall(as.Rhs[0], v, method) {
			return true
		}
	}
	return false
}

// calls reports whether body calls v.method() anywhere.
func calls(body *ast.BlockStmt, v, method string) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if e, ok := n.(ast.Expr); ok && isCall(e, v, method) {
			found = true
		}
		return !found
	})
	return found
}

// isCall reports whether e is v.method().
func isCall(e ast.Expr, v, method string) bool {
	call, ok := e.(*ast.CallExpr)
	return ok && len(call.Args) == 0 && selectorName(call.Fun) == v+"."+method
}

// declaresType reports whether f declares the named type.
func declaresType(f *ast.File, name string) bool {
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.TYPE {
			for _, sp := range g.Specs {
				if sp.(*ast.TypeSpec).Name.Name == name {
					return true
				}
			}
		}
	}
	return false
}

// declaresMethod reports whether f declares method on the value or
// pointer receiver typ.
func declaresMethod(f *ast.File, typ, method string) bool {
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv == nil || fn.Name.Name != method {
			continue
		}
		recv := fn.Recv.List[0].Type
		if star, ok := recv.(*ast.StarExpr); ok {
			recv = star.X
		}
		if id, ok := recv.(*ast.Ident); ok && id.Name == typ {
			return true
		}
	}
	return false
}

// selectorName is "x.Y" for x.Y, x.Y[T] and x.Y[T](...), "" otherwise.
func selectorName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.IndexExpr:
		return selectorName(x.X)
	case *ast.IndexListExpr:
		return selectorName(x.X)
	case *ast.SelectorExpr:
		if id, ok := x.X.(*ast.Ident); ok {
			return id.Name + "." + x.Sel.Name
		}
		return x.Sel.Name
	case *ast.Ident:
		return x.Name
	}
	return ""
}
