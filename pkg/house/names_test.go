package house

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// moduleRoot is the repository root, two folders above this package.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found from %s: %v", root, err)
	}
	return root
}

// TestPackageNamesMatchFolders keeps every package named as its folder, so
// that no import needs an alias to say what it imports. Commands (package
// main) are the one exception.
func TestPackageNamesMatchFolders(t *testing.T) {
	root := moduleRoot(t)
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "third_party" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		file, err := parser.ParseFile(fset, path, nil, parser.PackageClauseOnly)
		if err != nil {
			return err
		}
		pkg := file.Name.Name
		folder := filepath.Base(filepath.Dir(path))
		if pkg != "main" && pkg != folder {
			rel, _ := filepath.Rel(root, path)
			t.Errorf("%s: package %s in folder %s (rename one of them)", rel, pkg, folder)
		}
		checked++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("only %d files checked: is the walk rooted at the module?", checked)
	}
}

// TestNoInternalImportCarriesAnAlias: once names match folders, an alias on
// one of the module's own imports only hides what is imported.
func TestNoInternalImportCarriesAnAlias(t *testing.T) {
	root := moduleRoot(t)
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "third_party" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		file, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range file.Imports {
			if imp.Name == nil || imp.Name.Name == "_" {
				continue
			}
			if strings.HasPrefix(strings.Trim(imp.Path.Value, `"`), "github.com/notebridge/notebridge/") {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s: import %s carries the alias %s", rel, imp.Path.Value, imp.Name.Name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
