// Package okftest serves OKF fixture bundles to tests: the project's own
// bundles, embedded from testdata/okf so that every test is hermetic, and
// the spec authors' bundles as an opt-in conformance suite read from the
// directory that NOTEBRIDGE_OKF_FIXTURES names.
//
// Both trees share one layout: <profile>/<bundle>/..., where profile is
// v0.1, v0.2-date or v0.2-instant. Tests never write to either tree; a test
// that changes a bundle works on a Copy.
package okftest

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"testing"
)

// Env names the spec authors' fixture directory (for example
// /work/shared/fixtures/okf). Unset skips the conformance suite; set to
// anything that is not a readable bundle tree fails it.
const Env = "NOTEBRIDGE_OKF_FIXTURES"

// Profiles are the top-level directories of a fixture tree.
var Profiles = []string{"v0.1", "v0.2-date", "v0.2-instant"}

//go:embed testdata/okf
var embedded embed.FS

// Own returns the project's own bundles (read-only).
func Own() fs.FS {
	sub, err := fs.Sub(embedded, "testdata/okf")
	if err != nil {
		panic(err) // the embed pattern guarantees the directory
	}
	return sub
}

// OwnBundles is the exact set of the project's own bundles, so that a lost
// or renamed fixture fails the tests instead of shrinking them.
var OwnBundles = []string{
	"v0.1/fjord_telemetry",
	"v0.2-date/fjord_rentals",
	"v0.2-date/fjord_support",
	"v0.2-instant/fjord_rentals",
}

// Authors returns the spec authors' bundles named by Env. It skips the
// test when Env is unset, and fails it when Env is set but empty, not
// absolute, missing, unreadable or without bundles: a conformance run that
// was asked for never passes by reading nothing.
func Authors(tb testing.TB) fs.FS {
	tb.Helper()
	dir, ok := os.LookupEnv(Env)
	if !ok {
		tb.Skipf("%s is not set: skipping the conformance suite against the OKF spec authors' bundles "+
			"(set it to their fixtures directory to run it)", Env)
	}
	fsys, err := authorsFS(dir)
	if err != nil {
		tb.Fatalf("%s: %v", Env, err)
	}
	return fsys
}

// ForBenchmark returns the authors' bundles when Env is set (the figures in
// docs/benchmarks.md are measured on them), otherwise the project's own.
func ForBenchmark(b *testing.B) fs.FS {
	b.Helper()
	if _, ok := os.LookupEnv(Env); ok {
		return Authors(b)
	}
	return Own()
}

func authorsFS(dir string) (fs.FS, error) {
	if dir == "" {
		return nil, fmt.Errorf("set but empty")
	}
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("%q is not an absolute path", dir)
	}
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("fixture directory: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%q is not a directory", dir)
	}
	fsys := os.DirFS(dir)
	names, err := Bundles(fsys)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%q holds no <profile>/<bundle> directories (profiles %v)", dir, Profiles)
	}
	return fsys, nil
}

// Bundles lists the bundle directories of fsys as "<profile>/<bundle>",
// sorted. A missing profile directory is not an error; an unreadable one is.
func Bundles(fsys fs.FS) ([]string, error) {
	var out []string
	for _, p := range Profiles {
		entries, err := fs.ReadDir(fsys, p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", p, err)
		}
		for _, e := range entries {
			if e.IsDir() {
				out = append(out, p+"/"+e.Name())
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// MustBundles is Bundles that fails the test on error or on fewer than min
// bundles.
func MustBundles(tb testing.TB, fsys fs.FS, min int) []string {
	tb.Helper()
	names, err := Bundles(fsys)
	if err != nil {
		tb.Fatalf("fixture bundles: %v", err)
	}
	if len(names) < min {
		tb.Fatalf("found %d fixture bundles %v, want at least %d", len(names), names, min)
	}
	return names
}

// Copy copies the subtree name of fsys into a fresh temporary directory
// and returns its absolute path, whose base name is path.Base(name).
func Copy(tb testing.TB, fsys fs.FS, name string) string {
	tb.Helper()
	dst := filepath.Join(tb.TempDir(), path.Base(name))
	err := fs.WalkDir(fsys, name, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := p[len(name):]
		target := filepath.Join(dst, filepath.FromSlash(rel))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: not a regular file", p)
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		tb.Fatalf("copy fixture %s: %v", name, err)
	}
	return dst
}

// Write writes files (slash path from the bundle root → content) into a
// fresh temporary directory and returns its path: a small bundle built in
// the test itself.
func Write(tb testing.TB, files map[string]string) string {
	tb.Helper()
	dir := tb.TempDir()
	for rel, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return dir
}

// File is one Markdown file of a fixture tree.
type File struct {
	Rel  string // slash path from the tree's root, e.g. v0.1/x/tables/t.md
	Data []byte
}

// MarkdownFiles reads every .md file of fsys, sorted by path; it fails the
// test when there is none.
func MarkdownFiles(tb testing.TB, fsys fs.FS) []File {
	tb.Helper()
	var out []File
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || path.Ext(p) != ".md" {
			return nil
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		out = append(out, File{Rel: p, Data: b})
		return nil
	})
	if err != nil {
		tb.Fatalf("read fixtures: %v", err)
	}
	if len(out) == 0 {
		tb.Fatal("no fixture files found")
	}
	return out
}
