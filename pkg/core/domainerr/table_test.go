package domainerr

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestRetryableColumnMatchesTheTable: docs/errors.md's Retryable column says,
// for every code, exactly what Code.Retryable says, and has no extra rows.
func TestRetryableColumnMatchesTheTable(t *testing.T) {
	raw, err := os.ReadFile("../../../docs/errors.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `([A-Z_]+)` \\| (yes|no) \\|")
	documented := map[Code]bool{}
	for _, m := range row.FindAllStringSubmatch(string(raw), -1) {
		documented[Code(m[1])] = m[2] == "yes"
	}
	known := map[Code]bool{}
	for _, c := range AllCodes {
		known[c] = true
		doc, ok := documented[c]
		if !ok {
			t.Errorf("%s: no row with a yes/no Retryable column", c)
			continue
		}
		if doc != c.Retryable() {
			t.Errorf("%s: docs/errors.md says retryable=%v, the table says %v", c, doc, c.Retryable())
		}
		if e := New(c, "x"); e.Retryable != c.Retryable() {
			t.Errorf("%s: New gives retryable=%v", c, e.Retryable)
		}
	}
	for c := range documented {
		if !known[c] {
			t.Errorf("docs/errors.md documents unknown code %s", c)
		}
	}
}

// TestProducersAgreeWithTheTable scans every non-test Go file of the module
// (Joplin, OKF, executor, adapters): New takes the flag from the table,
// domainerr.Retryable is called only with a constant code the table marks
// retryable, and no producer builds an Error literal with its own flag. So
// every surface reports the flag docs/errors.md documents.
func TestProducersAgreeWithTheTable(t *testing.T) {
	names := codeConstants(t)
	fset := token.NewFileSet()
	calls := 0
	err := filepath.WalkDir("../../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "../../.." && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || filepath.Dir(path) == "." {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				ctor := selectorOf(n.Fun, "domainerr")
				if (ctor != "New" && ctor != "Retryable") || len(n.Args) == 0 {
					return true
				}
				calls++
				if ctor == "New" {
					return true // New takes the flag from the table
				}
				if code, ok := names[selectorOf(n.Args[0], "domainerr")]; !ok || !code.Retryable() {
					t.Errorf("%s: domainerr.Retryable for a code the table does not mark retryable", fset.Position(n.Pos()))
				}
			case *ast.CompositeLit:
				if selectorOf(n.Type, "domainerr") != "Error" {
					return true
				}
				for _, e := range n.Elts {
					if kv, ok := e.(*ast.KeyValueExpr); ok {
						if id, ok := kv.Key.(*ast.Ident); ok && id.Name == "Retryable" {
							t.Errorf("%s: a domainerr.Error literal sets its own retryable flag", fset.Position(n.Pos()))
						}
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls < 50 {
		t.Fatalf("found only %d producer calls; is the scan looking at the module?", calls)
	}
}

// codeConstants maps the names of the Code constants to their values.
func codeConstants(t *testing.T) map[string]Code {
	f, err := parser.ParseFile(token.NewFileSet(), "domainerr.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Code{}
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok {
					v, _ := strconv.Unquote(lit.Value)
					out[name.Name] = Code(v)
				}
			}
		}
	}
	if len(out) != len(AllCodes) {
		t.Fatalf("parsed %d code constants, AllCodes has %d", len(out), len(AllCodes))
	}
	return out
}

// selectorOf returns sel for an expression pkg.sel, else "".
func selectorOf(e ast.Expr, pkg string) string {
	if s, ok := e.(*ast.SelectorExpr); ok {
		if id, ok := s.X.(*ast.Ident); ok && id.Name == pkg {
			return s.Sel.Name
		}
	}
	return ""
}
