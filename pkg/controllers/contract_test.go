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
