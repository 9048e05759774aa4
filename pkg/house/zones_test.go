package house

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/notebridge/notebridge/"

// allowed lists, for every zone, the zones its production code may import
// (besides itself): services → toolsets → {joplin, okf} → core → internal;
// transport → {auth, core}; auth → core; every zone may use internal.
// services (and the deploy commands beside them) assemble everything but
// the test scaffolding. testkit is scaffolding for tests and may import any
// zone; nothing else imports it (TestNoProductionImportOfTestkit).
var allowed = map[string][]string{
	"internal":  {},
	"core":      {"internal"},
	"auth":      {"core", "internal"},
	"joplin":    {"core", "internal"},
	"okf":       {"core", "internal"},
	"toolsets":  {"joplin", "okf", "core", "internal"},
	"transport": {"auth", "core", "internal"},
	"services":  {"toolsets", "transport", "auth", "joplin", "okf", "core", "internal", "services"},
	"deploy":    {"toolsets", "transport", "auth", "joplin", "okf", "core", "internal", "services"},
	"testkit":   {"toolsets", "transport", "auth", "joplin", "okf", "core", "internal", "services"},
	"house":     {},
}

// zoneOf names the zone of a folder relative to the module root: the
// folder under pkg/, or the top folder outside it.
func zoneOf(rel string) string {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	if parts[0] == "pkg" && len(parts) > 1 {
		return parts[1]
	}
	return parts[0]
}

// goFile is one of the module's Go files, parsed as far as its imports.
type goFile struct {
	rel  string // path from the module root
	dir  string // its folder, from the module root
	test bool
	file *ast.File
}

// moduleFiles parses every Go file of the module (every build tag, tests
// included) with mode, leaving out testdata, hidden folders and nested
// modules (third_party, docs' comparison programs).
func moduleFiles(t *testing.T, mode parser.Mode) []goFile {
	t.Helper()
	root := moduleRoot(t)
	fset := token.NewFileSet()
	var files []goFile
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == root {
				return nil
			}
			name := d.Name()
			if strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, mode)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		files = append(files, goFile{rel: rel, dir: filepath.Dir(rel), test: strings.HasSuffix(path, "_test.go"), file: f})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 200 {
		t.Fatalf("only %d files parsed: is the walk rooted at the module?", len(files))
	}
	return files
}

// ownImports returns the module-relative paths of f's imports of the
// module's own packages.
func ownImports(f *ast.File) []string {
	var out []string
	for _, imp := range f.Imports {
		p := strings.Trim(imp.Path.Value, `"`)
		if rest, ok := strings.CutPrefix(p, module); ok {
			out = append(out, rest)
		}
	}
	return out
}

// TestZoneArrows keeps production imports pointing one way between the
// zones (see allowed), and every folder in a known zone.
func TestZoneArrows(t *testing.T) {
	bad := map[string]bool{}
	for _, f := range moduleFiles(t, parser.ImportsOnly) {
		if f.test {
			continue
		}
		from := zoneOf(f.dir)
		may, known := allowed[from]
		if !known {
			t.Errorf("%s: folder %s is in no zone (add it to allowed in pkg/house)", f.rel, f.dir)
			continue
		}
		for _, imp := range ownImports(f.file) {
			to := zoneOf(imp)
			if to == from || slices.Contains(may, to) {
				continue
			}
			if key := f.dir + " → " + imp; !bad[key] {
				bad[key] = true
				t.Errorf("%s: zone %s imports %s (zone %s); %s may import only %v", f.rel, from, imp, to, from, may)
			}
		}
	}
}

// TestNoProductionImportOfTestkit: the test scaffolding stays out of every
// build of the service.
func TestNoProductionImportOfTestkit(t *testing.T) {
	for _, f := range moduleFiles(t, parser.ImportsOnly) {
		if f.test || zoneOf(f.dir) == "testkit" {
			continue
		}
		for _, imp := range ownImports(f.file) {
			if zoneOf(imp) == "testkit" {
				t.Errorf("%s: production code imports %s", f.rel, imp)
			}
		}
	}
}

// TestOperationsOnlyFromDefine: an operation is made by registry.Define
// (or its DefineDecoded and DefineEncoded forms), which derives its schemas
// from its Go types. A registry.Operation written out as a literal outside
// the registry would carry schemas nobody derived.
func TestOperationsOnlyFromDefine(t *testing.T) {
	const registryPath = "pkg/core/registry"
	var found []string
	for _, f := range moduleFiles(t, parser.SkipObjectResolution) {
		if f.test || filepath.ToSlash(f.dir) == registryPath {
			continue
		}
		name := importName(f.file, module+registryPath)
		if name == "" {
			continue
		}
		isOperation := func(e ast.Expr) bool {
			sel, ok := e.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "Operation" {
				return false
			}
			id, ok := sel.X.(*ast.Ident)
			return ok && id.Name == name
		}
		ast.Inspect(f.file, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok {
				return true
			}
			var elem ast.Expr
			switch ty := lit.Type.(type) {
			case *ast.ArrayType:
				elem = ty.Elt
			case *ast.MapType:
				elem = ty.Value
			default:
				if isOperation(lit.Type) {
					found = append(found, f.rel)
				}
				return true
			}
			if !isOperation(elem) {
				return true
			}
			for _, el := range lit.Elts {
				if kv, ok := el.(*ast.KeyValueExpr); ok {
					el = kv.Value
				}
				if inner, ok := el.(*ast.CompositeLit); ok && inner.Type == nil {
					found = append(found, f.rel)
				}
			}
			return true
		})
	}
	sort.Strings(found)
	for _, rel := range found {
		t.Errorf("%s: writes a registry.Operation literal; make operations with registry.Define", rel)
	}
}

// importName is the name f refers to path by, or "" when f does not
// import it. The module's own imports carry no alias
// (TestNoInternalImportCarriesAnAlias), so the name is the last element.
func importName(f *ast.File, path string) string {
	for _, imp := range f.Imports {
		if strings.Trim(imp.Path.Value, `"`) == path {
			return path[strings.LastIndex(path, "/")+1:]
		}
	}
	return ""
}

// TestOnePrincipal: who is calling is principal.Principal everywhere; no
// other package declares a type of that name (an access token's claims
// are resourceserver.Claims, turned into the principal by auth/authn).
func TestOnePrincipal(t *testing.T) {
	for _, f := range moduleFiles(t, parser.SkipObjectResolution) {
		if f.test || filepath.ToSlash(f.dir) == "pkg/core/principal" {
			continue
		}
		for _, decl := range f.file.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.TYPE {
				continue
			}
			for _, spec := range gen.Specs {
				if ts := spec.(*ast.TypeSpec); ts.Name.Name == "Principal" {
					t.Errorf("%s: declares a second Principal type; use principal.Principal", f.rel)
				}
			}
		}
	}
}
