package executor

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

// TestOnlyTheExecutorRunsHandlers reads every non-test Go file of the
// module: an operation's Handler is called, or taken as a value, only in
// this package's executor.go, after Call has checked the principal. Other
// code may only compare it with nil (the registry's build rules).
func TestOnlyTheExecutorRunsHandlers(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	fset := token.NewFileSet()
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "third_party" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, use := range handlerUses(f) {
			rel, _ := filepath.Rel(root, path)
			if filepath.ToSlash(rel) != "pkg/core/executor/executor.go" {
				found = append(found, fset.Position(use).String())
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) > 0 {
		t.Fatalf("an operation handler is reached outside the executor:\n%s", strings.Join(found, "\n"))
	}
}

// handlerUses returns where f reads a field named Handler other than to
// compare it with nil. Package-qualified names (registry.Handler,
// http.Handler) are types, not fields, and are skipped.
func handlerUses(f *ast.File) []token.Pos {
	imports := map[string]bool{}
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		name := p[strings.LastIndex(p, "/")+1:]
		if im.Name != nil {
			name = im.Name.Name
		}
		imports[name] = true
	}
	nilChecked := map[ast.Expr]bool{}
	var uses []token.Pos
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BinaryExpr:
			if id, ok := n.Y.(*ast.Ident); ok && id.Name == "nil" {
				nilChecked[n.X] = true
			}
		case *ast.SelectorExpr:
			if n.Sel.Name != "Handler" || nilChecked[n] {
				return true
			}
			if id, ok := n.X.(*ast.Ident); ok && imports[id.Name] {
				return true
			}
			uses = append(uses, n.Pos())
		}
		return true
	})
	return uses
}
