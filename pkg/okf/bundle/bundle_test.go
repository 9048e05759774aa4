package bundle_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/internal/statkey"
	"github.com/notebridge/notebridge/pkg/okf/bundle"
	"github.com/notebridge/notebridge/pkg/okf/safefs"
)

// tempBase returns a temp dir with symlinked ancestors resolved: bundle.Open
// refuses paths through symlinks, so a temp dir below one (macOS /var, a
// linked TMPDIR) would be rejected for the wrong reason. /tmp is a real
// directory here, making this a no-op on this machine.
func tempBase(t *testing.T) string {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return base
}

func mkdir(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	mkdir(t, filepath.Dir(p))
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// wantDomain asserts err is a domain error with the code and, when reason
// is set, details["reason"] == reason; neither message nor details may
// mention base.
func wantDomain(t *testing.T, what string, err error, code domainerr.Code, reason, base string) *domainerr.Error {
	t.Helper()
	de, ok := domainerr.As(err)
	if !ok {
		t.Errorf("%s: got %T %v, want domain error %s", what, err, err, code)
		return nil
	}
	if de.Code != code {
		t.Errorf("%s: code %s (%v), want %s", what, de.Code, err, code)
	}
	if reason != "" && de.Details["reason"] != reason {
		t.Errorf("%s: details %v, want reason %q", what, de.Details, reason)
	}
	if base != "" {
		if strings.Contains(de.Message, base) || strings.Contains(fmt.Sprint(de.Details), base) {
			t.Errorf("%s: error leaks an absolute path: %q %v", what, de.Message, de.Details)
		}
	}
	return de
}

func TestOpenPolicy(t *testing.T) {
	base := tempBase(t)
	allowed := filepath.Join(base, "r", "a")
	mkdir(t, filepath.Join(allowed, "bundle"))
	writeFile(t, filepath.Join(allowed, "bundle", "index.md"), "# index\n")
	mkdir(t, filepath.Join(base, "r", "ab"))             // prefix confusion
	mkdir(t, filepath.Join(base, "other"))               // outside every root
	writeFile(t, filepath.Join(allowed, "file.md"), "x") // not a directory
	if err := os.Symlink(filepath.Join(allowed, "bundle"), filepath.Join(allowed, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "other"), filepath.Join(allowed, "escape")); err != nil {
		t.Fatal(err)
	}
	// A root reached through a symlinked ancestor: the path is lexically
	// inside the allowed root but passes through a link.
	if err := os.Symlink(allowed, filepath.Join(base, "r", "alink")); err != nil {
		t.Fatal(err)
	}
	roots := []string{allowed}

	tests := []struct {
		name   string
		path   string
		roots  []string
		code   domainerr.Code // "" = opens
		reason string
	}{
		{"root itself", allowed, roots, "", ""},
		{"below root", filepath.Join(allowed, "bundle"), roots, "", ""},
		{"no roots configured", filepath.Join(base, "other"), nil, "", ""},
		{"second root", filepath.Join(base, "other"), []string{allowed, filepath.Join(base, "other")}, "", ""},
		{"root /", filepath.Join(base, "other"), []string{"/"}, "", ""},
		{"root with trailing slash", filepath.Join(allowed, "bundle"), []string{allowed + "/"}, "", ""},
		// Outside the roots: refused before any disk access, so a
		// missing path reports the policy, not not_found.
		{"missing outside", "/nonexistent-okf-root/surely/not/here", roots, domainerr.PathRejected, "outside_allowed_roots"},
		{"missing outside under base", filepath.Join(base, "missing", "x"), roots, domainerr.PathRejected, "outside_allowed_roots"},
		{"existing outside", filepath.Join(base, "other"), roots, domainerr.PathRejected, "outside_allowed_roots"},
		{"prefix confusion", filepath.Join(base, "r", "ab"), roots, domainerr.PathRejected, "outside_allowed_roots"},
		{"parent of root", filepath.Join(base, "r"), roots, domainerr.PathRejected, "outside_allowed_roots"},
		{"filesystem root", "/", roots, domainerr.PathRejected, "outside_allowed_roots"},
		// Shape is checked first, even outside the roots.
		{"relative", "r/a/bundle", roots, domainerr.PathRejected, "not_absolute"},
		{"empty", "", roots, domainerr.PathRejected, "not_absolute"},
		{"dotdot escape", allowed + "/../ab", roots, domainerr.PathRejected, "not_clean"},
		{"trailing slash", allowed + "/bundle/", roots, domainerr.PathRejected, "not_clean"},
		{"double slash", allowed + "//bundle", roots, domainerr.PathRejected, "not_clean"},
		// Inside the roots, the disk decides.
		{"missing inside", filepath.Join(allowed, "missing"), roots, domainerr.PathRejected, "not_found"},
		{"missing inside, no roots", filepath.Join(base, "missing"), nil, domainerr.PathRejected, "not_found"},
		{"regular file", filepath.Join(allowed, "file.md"), roots, domainerr.PathRejected, "not_directory"},
		{"symlinked bundle", filepath.Join(allowed, "link"), roots, domainerr.PathRejected, "symlink"},
		{"symlink escaping the root", filepath.Join(allowed, "escape"), roots, domainerr.PathRejected, "symlink"},
		{"symlinked ancestor", filepath.Join(base, "r", "alink", "bundle"), []string{filepath.Join(base, "r")}, domainerr.PathRejected, "symlink"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := bundle.Open(tc.path, tc.roots, bundle.DefaultLimits)
			if tc.code == "" {
				if err != nil {
					t.Fatalf("Open = %v", err)
				}
				defer b.Close()
				if b.Limits != bundle.DefaultLimits {
					t.Errorf("Limits = %+v", b.Limits)
				}
				if b.Root == nil {
					t.Fatal("nil Root")
				}
				return
			}
			if err == nil {
				b.Close()
				t.Fatalf("Open(%q) succeeded, want %s %s", tc.path, tc.code, tc.reason)
			}
			de := wantDomain(t, "Open", err, tc.code, tc.reason, base)
			if de != nil {
				if _, ok := de.Details["path"]; ok {
					t.Errorf("Open error details name a path: %v", de.Details)
				}
				if de.Retryable {
					t.Error("policy errors are not retryable")
				}
			}
		})
	}
}

// TestOpenOutsideRootsTouchesNothing proves the root check precedes any
// disk access: paths that would fail differently if walked (not_directory,
// not_found) are refused by policy instead.
func TestOpenOutsideRootsTouchesNothing(t *testing.T) {
	base := tempBase(t)
	mkdir(t, filepath.Join(base, "allowed"))
	writeFile(t, filepath.Join(base, "plainfile"), "x")
	for _, p := range []string{
		filepath.Join(base, "plainfile", "below"), // would be not_directory if walked
		filepath.Join(base, "nope"),               // would be not_found if walked
	} {
		_, err := bundle.Open(p, []string{filepath.Join(base, "allowed")}, bundle.DefaultLimits)
		wantDomain(t, "Open("+p+")", err, domainerr.PathRejected, "outside_allowed_roots", base)
	}
}

func TestWithin(t *testing.T) {
	tests := []struct {
		path  string
		roots []string
		want  bool
	}{
		{"/r/a", []string{"/r/a"}, true},
		{"/r/a/b", []string{"/r/a"}, true},
		{"/r/a/b/c", []string{"/r/a"}, true},
		{"/r/ab", []string{"/r/a"}, false},
		{"/r/a-b", []string{"/r/a"}, false},
		{"/r/a.b", []string{"/r/a"}, false},
		{"/r", []string{"/r/a"}, false},
		{"/", []string{"/r/a"}, false},
		{"/x/r/a", []string{"/r/a"}, false},
		{"/r/a/b", []string{"/r/a/"}, true},
		{"/anything", []string{"/"}, true},
		{"/", []string{"/"}, true},
		{"/q/z", []string{"/r/a", "/q"}, true},
		{"/q", []string{"/r/a", "/q"}, true},
		{"/qq", []string{"/r/a", "/q"}, false},
		{"/r/a", nil, false},
		{"/r/a", []string{}, false},
		{"/R/A", []string{"/r/a"}, false},
	}
	for _, tc := range tests {
		if got := bundle.Within(tc.path, tc.roots); got != tc.want {
			t.Errorf("Within(%q, %q) = %v, want %v", tc.path, tc.roots, got, tc.want)
		}
	}
}

func TestCheckRoots(t *testing.T) {
	tests := []struct {
		roots []string
		ok    bool
	}{
		{nil, true},
		{[]string{}, true},
		{[]string{"/"}, true},
		{[]string{"/srv/okf"}, true},
		{[]string{"/srv/okf", "/home/u/bundles"}, true},
		{[]string{""}, false},
		{[]string{"rel"}, false},
		{[]string{"./rel"}, false},
		{[]string{"/srv/okf/"}, false},
		{[]string{"/srv/../okf"}, false},
		{[]string{"/srv//okf"}, false},
		{[]string{"/srv/./okf"}, false},
		{[]string{"/ok", "bad"}, false},
	}
	for _, tc := range tests {
		err := bundle.CheckRoots(tc.roots)
		if (err == nil) != tc.ok {
			t.Errorf("CheckRoots(%q) = %v, want ok=%v", tc.roots, err, tc.ok)
		}
	}
}

func TestPathErr(t *testing.T) {
	plain := errors.New("plain")
	dom := domainerr.New(domainerr.Busy, "busy")
	if got := bundle.PathErr(plain); got != plain {
		t.Errorf("PathErr(plain) = %v, want it unchanged", got)
	}
	if got := bundle.PathErr(dom); got != error(dom) {
		t.Errorf("PathErr(domain) = %v, want it unchanged", got)
	}
	if got := bundle.PathErr(nil); got != nil {
		t.Errorf("PathErr(nil) = %v", got)
	}
	tests := []struct {
		name      string
		in        error
		code      domainerr.Code
		details   map[string]any
		retryable bool
	}{
		{"bundle missing", &safefs.PathError{Code: safefs.CodeNotFound}, domainerr.PathRejected, map[string]any{"reason": "not_found"}, false},
		{"file missing", &safefs.PathError{Code: safefs.CodeNotFound, Rel: "a/b.md"}, domainerr.NotFound, map[string]any{"reason": "not_found", "path": "a/b.md"}, false},
		{"symlink", &safefs.PathError{Code: safefs.CodeSymlink, Rel: "x"}, domainerr.PathRejected, map[string]any{"reason": "symlink", "path": "x"}, false},
		{"symlink root", &safefs.PathError{Code: safefs.CodeSymlink}, domainerr.PathRejected, map[string]any{"reason": "symlink"}, false},
		{"not regular", &safefs.PathError{Code: safefs.CodeNotRegular, Rel: "p"}, domainerr.PathRejected, map[string]any{"reason": "not_regular", "path": "p"}, false},
		{"not dir", &safefs.PathError{Code: safefs.CodeNotDir}, domainerr.PathRejected, map[string]any{"reason": "not_directory"}, false},
		{"not absolute", &safefs.PathError{Code: safefs.CodeNotAbsolute}, domainerr.PathRejected, map[string]any{"reason": "not_absolute"}, false},
		{"not clean", &safefs.PathError{Code: safefs.CodeNotClean}, domainerr.PathRejected, map[string]any{"reason": "not_clean"}, false},
		{"bad path", &safefs.PathError{Code: safefs.CodeBadPath, Rel: "a//b"}, domainerr.InvalidArgument, map[string]any{"reason": "bad_path", "path": "a//b"}, false},
		{"too large", &safefs.PathError{Code: safefs.CodeTooLarge, Rel: "big.md"}, domainerr.ResourceLimit, map[string]any{"limit": "max_file_bytes", "path": "big.md"}, false},
		{"too deep", &safefs.PathError{Code: safefs.CodeTooLarge, Rel: "d1/d2", Err: safefs.ErrTooDeep}, domainerr.ResourceLimit, map[string]any{"limit": "max_depth", "path": "d1/d2"}, false},
		{"wrapped too deep", fmt.Errorf("walk: %w", &safefs.PathError{Code: safefs.CodeTooLarge, Rel: "d", Err: safefs.ErrTooDeep}), domainerr.ResourceLimit, map[string]any{"limit": "max_depth", "path": "d"}, false},
		{"io", &safefs.PathError{Code: safefs.CodeIO, Rel: "x"}, domainerr.Internal, nil, false}, // INTERNAL is never retryable (docs/errors.md)
		{"exists", &safefs.PathError{Code: safefs.CodeExists, Rel: "x"}, domainerr.PathRejected, map[string]any{"reason": "exists", "path": "x"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			de, ok := domainerr.As(bundle.PathErr(tc.in))
			if !ok {
				t.Fatalf("PathErr = %T, want a domain error", bundle.PathErr(tc.in))
			}
			if de.Code != tc.code || de.Retryable != tc.retryable {
				t.Errorf("PathErr = %s retryable=%v, want %s retryable=%v", de.Code, de.Retryable, tc.code, tc.retryable)
			}
			if fmt.Sprint(de.Details) != fmt.Sprint(tc.details) {
				t.Errorf("details = %v, want %v", de.Details, tc.details)
			}
			if de.Message == "" || strings.Contains(de.Message, "/tmp") {
				t.Errorf("message %q", de.Message)
			}
		})
	}
}

// TestBundleReadsAreSymlinkSafe runs bundle-level reads over the symlink
// and depth cases and checks the domain mapping end to end.
func TestBundleReadsAreSymlinkSafe(t *testing.T) {
	base := tempBase(t)
	root := filepath.Join(base, "b")
	orders, index := "---\ntitle: Orders\n---\nbody\n", "# idx\n"
	writeFile(t, filepath.Join(root, "tables", "orders.md"), orders)
	writeFile(t, filepath.Join(root, "index.md"), index)
	writeFile(t, filepath.Join(base, "outside", "secret.md"), "---\ntitle: Secret\n---\n")
	b, err := bundle.Open(root, []string{base}, bundle.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	files, err := b.Files(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []bundle.File{
		{Rel: "index.md", ID: "", Size: int64(len(index))},
		{Rel: "tables/orders.md", ID: "tables/orders", Size: int64(len(orders))},
	}
	for i := range files {
		files[i].Key = statkey.Key{} // stat keys are the manifest cache's business
	}
	if fmt.Sprint(files) != fmt.Sprint(want) {
		t.Errorf("Files = %v, want %v", files, want)
	}

	// A symlinked directory inside the bundle: listing is PATH_REJECTED,
	// reading a concept through it is PATH_REJECTED (not NOT_FOUND, and
	// certainly not the outside file's content).
	if err := os.Symlink(filepath.Join(base, "outside"), filepath.Join(root, "linked")); err != nil {
		t.Fatal(err)
	}
	_, err = b.Files(context.Background())
	wantDomain(t, "Files with symlink", err, domainerr.PathRejected, "symlink", base)
	_, raw, err := b.ReadConcept("linked/secret")
	wantDomain(t, "ReadConcept through symlink", err, domainerr.PathRejected, "symlink", base)
	if raw != nil {
		t.Errorf("ReadConcept returned content %q through a symlink", raw)
	}
	_, _, err = b.ReadConcept("tables/missing")
	wantDomain(t, "ReadConcept missing", err, domainerr.NotFound, "", base)
	_, _, err = b.ReadConcept("../outside/secret")
	wantDomain(t, "ReadConcept escape", err, domainerr.InvalidArgument, "dot_segment", base)
	if err := os.Remove(filepath.Join(root, "linked")); err != nil {
		t.Fatal(err)
	}

	// Depth limit maps to RESOURCE_LIMIT max_depth.
	writeFile(t, filepath.Join(root, "d1", "d2", "d3", "x.md"), "x")
	shallow := *b
	shallow.Limits.MaxDepth = 2
	_, err = shallow.Files(context.Background())
	de := wantDomain(t, "Files too deep", err, domainerr.ResourceLimit, "", base)
	if de != nil && (de.Details["limit"] != "max_depth" || de.Details["path"] != "d1/d2/d3") {
		t.Errorf("too-deep details = %v", de.Details)
	}
	// File-count limit.
	few := *b
	few.Limits.MaxFiles = 2
	_, err = few.Files(context.Background())
	de = wantDomain(t, "Files too many", err, domainerr.ResourceLimit, "", base)
	if de != nil && de.Details["limit"] != "max_files" {
		t.Errorf("too-many details = %v", de.Details)
	}
}
