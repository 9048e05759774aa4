package house

import (
	"go/parser"
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
	for _, f := range moduleFiles(t, parser.PackageClauseOnly) {
		pkg := f.file.Name.Name
		if folder := filepath.Base(f.dir); !f.test && pkg != "main" && pkg != folder {
			t.Errorf("%s: package %s in folder %s (rename one of them)", f.rel, pkg, folder)
		}
	}
}

// TestNoInternalImportCarriesAnAlias: once names match folders, an alias on
// one of the module's own imports only hides what is imported.
func TestNoInternalImportCarriesAnAlias(t *testing.T) {
	for _, f := range moduleFiles(t, parser.ImportsOnly) {
		for _, imp := range f.file.Imports {
			if imp.Name == nil || imp.Name.Name == "_" {
				continue
			}
			if strings.HasPrefix(strings.Trim(imp.Path.Value, `"`), module) {
				t.Errorf("%s: import %s carries the alias %s", f.rel, imp.Path.Value, imp.Name.Name)
			}
		}
	}
}
